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

__all__ = ["incomplete_lloyd", "partial_member_starts"]


def partial_member_starts(ensemble, k: int, n_init) -> list:
    """The first ``n_init`` members with ``k`` clusters (their unlabelled objects -1), as starts of
    :func:`incomplete_lloyd`; ``n_init=None``: one.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> [z.tolist() for z in partial_member_starts(Ensemble.from_labels([[0, 0], [1, -1], [-1, 1]]), 2, None)]
    [[0, 1, -1]]
    """
    wanted = 1 if n_init is None else n_init
    return [lab.astype(np.int64) for lab, kj in zip(ensemble.member_labels, ensemble.n_clusters) if kj == k][:wanted]


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
    m, cols = ensemble.n_members, H.shape[1]
    column_member = np.repeat(np.arange(m), np.diff(ensemble.offsets))
    rows = np.repeat(np.arange(H.shape[0]), np.diff(H.indptr))  # the object of every incidence entry
    cell, entry_weight = H.indices.astype(np.int64) * k, w[rows]
    z = np.asarray(labels, dtype=np.int64).copy()
    for _ in range(max_iter):
        placed = z[rows] >= 0 if z.min() < 0 else slice(None)
        counts = np.bincount((cell + z[rows])[placed], weights=entry_weight[placed],
                             minlength=cols * k).reshape(cols, k)  # cluster c's weight in each member cluster
        sizes = np.zeros((m, k))
        np.add.at(sizes, column_member, counts)  # the weight of each cluster's objects each member labels
        C = counts / np.where(sizes > 0, sizes, 1.0)[column_member]
        norms = np.zeros((m, k))
        np.add.at(norms, column_member, C * C)
        d = np.asarray(H @ (norms[column_member] - 2.0 * C))  # d(i, c) less the count of members labelling i
        new = np.argmin(d, axis=1)
        if np.array_equal(new, z):
            break
        z = new
    spoken = np.diff(H.indptr)
    return z, float(np.sum(w * (spoken + d[np.arange(len(z)), z])))
