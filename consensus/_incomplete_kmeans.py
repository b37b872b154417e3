"""K-means on the members' one-hot labels when members abstain: KCC with incomplete basic partitions.

Wu et al. (2015) extend K-means consensus clustering to basic partitions
that cover only part of the objects: an object's distance to a cluster sums,
over the members that label it, the squared distance between its indicator
in that member and the cluster's centroid in that member, and that centroid
is the mean indicator over the cluster's objects the member labels. With
one-hot indicators, for object i in cluster c,

    d(i, c) = sum over members j labelling i of (1 - 2 C_j[l_ij, c] + |C_j[:, c]|^2),

with C_j[l, c] the weight of cluster c's objects that member j puts in its
cluster l over the weight of cluster c's objects it labels (0 when it labels
none of them). Lloyd's iterations alternate the assignment (the smallest
d, ties to the smallest cluster) and the centroids; each lowers
``sum_i w_i d(i, z_i)`` or leaves it, so the loop ends. A start may leave
objects out (-1): the first centroids average the others, and the first
assignment places every object.
"""

from __future__ import annotations

import numpy as np

from segensemble.consensus._gram import _whole_weights
from segensemble.consensus._kmeans import _own_and_second
from segensemble.consensus.bestofk import column_members, disagreement_shares

__all__ = ["incomplete_lloyd", "partial_member_starts"]


def partial_member_starts(ensemble, k: int, n_init) -> list:
    """The members with ``k`` clusters closest to the others (their unlabelled objects -1), as starts of
    :func:`incomplete_lloyd`: the first ``n_init`` (None: one) by the summed share of disagreeing pairs
    (:func:`~segensemble.consensus.bestofk.disagreement_shares`; ties: the first member), so that the
    start does not depend on the order of the members.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> ens = Ensemble.from_labels([[0, 0, 0], [1, -1, 0], [-1, 1, 1], [1, 1, 1]])
    >>> [z.tolist() for z in partial_member_starts(ens, 2, None)]
    [[0, -1, 1, 1]]
    """
    shares = disagreement_shares(ensemble)
    ranked = sorted((j for j, kj in enumerate(ensemble.n_clusters) if kj == k), key=lambda j: (shares[j], j))
    return [ensemble.member_labels[j].astype(np.int64) for j in ranked[:1 if n_init is None else n_init]]


def incomplete_lloyd(ensemble, labels, k: int, max_iter: int = 300):
    """Lloyd's iterations of KCC with incomplete basic partitions from ``labels`` (k clusters; -1: not placed).

    Returns
    -------
    labels : (n,) int64 array
        A cluster left without objects stays empty (the labels are renumbered by the caller).
    inertia : float
        ``sum_i w_i d(i, z_i)`` at the end (module docstring).

    References
    ----------
    J. Wu, H. Liu, H. Xiong, J. Cao, J. Chen, "K-means-based consensus clustering: a unified view", IEEE TKDE
    27(1), 2015 (KCC with incomplete basic partitions).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> ens = Ensemble.from_labels([[0, 0], [0, -1], [1, 1], [-1, 1]])
    >>> z, inertia = incomplete_lloyd(ens, np.array([0, 1, 1, 1]), 2)
    >>> z.tolist(), inertia
    ([0, 0, 1, 1], 0.0)
    """
    H, w = ensemble.incidence.tocsr(), ensemble.weights
    n, m, cols = H.shape[0], ensemble.n_members, H.shape[1]
    column_member = column_members(ensemble)
    rows = np.repeat(np.arange(n), np.diff(H.indptr))  # the object of every incidence entry
    cell = H.indices.astype(np.int64) * k
    whole = _whole_weights(w)  # counts exact in any order
    allowance = 1e-9 * (m + 1)  # above the rounding of a sum of m terms of G, each in [-2, 1]

    def counted(z, entries=slice(None)):
        e = cell[entries] + z[rows[entries]]
        kept = z[rows[entries]] >= 0
        return np.bincount(e[kept], weights=w[rows[entries]][kept], minlength=cols * k).reshape(cols, k)

    def contribution(counts):  # G[col, c]: the part of d(i, c) of an object with label col, less 1
        sizes = np.zeros((m, k))
        np.add.at(sizes, column_member, counts)  # the weight of each cluster's objects each member labels
        C = counts / np.where(sizes > 0, sizes, 1.0)[column_member]
        norms = np.zeros((m, k))
        np.add.at(norms, column_member, C * C)
        return norms[column_member] - 2.0 * C

    z = np.asarray(labels, dtype=np.int64).copy()
    counts = counted(z)
    G = contribution(counts)
    d = np.asarray(H @ G)  # d(i, c) less the number of members labelling i
    new = np.argmin(d, axis=1)
    upper, lower = _own_and_second(d, new)
    for _ in range(max_iter):
        if np.array_equal(new, z):
            break
        moved = np.flatnonzero(new != z)
        if whole and z.min() >= 0 and len(moved) < n // 8:  # whole weights: move the changed objects' counts
            first, lengths = H.indptr[moved], np.diff(H.indptr)[moved]  # the moved objects' entries, in order
            entries = np.repeat(first - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
            counts = counts - counted(z, entries) + counted(new, entries)
        else:
            counts = counted(new)
        z = new
        G_next = contribution(counts)
        # d(i, c) moves by at most the sum over members of the largest change of a column of theirs
        change = np.zeros((m, k))
        np.maximum.at(change, column_member, np.abs(G_next - G))
        bound = change.sum(axis=0)
        G = G_next
        upper += bound[z]
        lower -= bound.max()
        check = np.flatnonzero(upper + allowance >= lower)  # the others keep their cluster: exactly Lloyd's
        new = z.copy()
        if len(check):
            dc = np.asarray(H[check] @ G)  # each row summed as in the whole product: the same numbers
            new[check] = np.argmin(dc, axis=1)
            upper[check], lower[check] = _own_and_second(dc, new[check])
    own = np.asarray(H @ G)[np.arange(n), z]
    return z, float(np.sum(w * (np.diff(H.indptr) + own)))

