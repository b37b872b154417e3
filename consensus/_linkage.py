"""Weighted agglomerative clustering of a dense dissimilarity matrix.

Objects carry weights (an atom of weight w stands for w identical objects). For
single, complete and average linkage this is exact: identical objects merge at
height 0 and the Lance-Williams update of average linkage uses cluster *weights*
as sizes. The greedy closest-pair algorithm with cached row minima and
canonical tie-breaking is used, so tied distances (frequent with co-association
values, multiples of 1/m) resolve the same way for weights and for copies.

References
----------
G. N. Lance, W. T. Williams, "A general theory of classificatory sorting
strategies", Computer Journal 9(4), 1967; D. Müllner, "Modern hierarchical,
agglomerative clustering algorithms", arXiv:1109.2378, 2011 (generic algorithm
with nearest-neighbour caching).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from segensemble.consensus._memory import check_dense
from segensemble.graph.hierarchy import Hierarchy

__all__ = ["LINKAGES", "weighted_linkage", "lifetime_n_clusters", "clusters_to_k", "member_contingency"]

LINKAGES = ("average", "single", "complete")


def weighted_linkage(D: np.ndarray, weights: np.ndarray, method: str = "average") -> tuple[np.ndarray, np.ndarray]:
    """Agglomerative merges of n weighted objects, ties broken canonically.

    The globally closest pair of clusters is merged at every step; among equal
    distances the pair with the smallest (row, column) representatives wins,
    a cluster being represented by its smallest object index. This makes the
    result independent of how objects are presented: an object of weight w and
    w consecutive copies of it give the same merges (after the copies' zero-height
    merges). Row minima are cached and only rows whose nearest cluster changed
    are rescanned, so a merge costs O(n) in practice.

    Parameters
    ----------
    D : (n, n) float array
        Symmetric dissimilarities; it is overwritten (pass a copy).
    weights : (n,) float array
    method : {'average', 'single', 'complete'}

    Returns
    -------
    merges : (n - 1, 2) int array
        Representatives (smallest object index) of the clusters merged, in order.
    heights : (n - 1,) float array, non-decreasing

    Examples
    --------
    >>> D = np.array([[0, 1, 4], [1, 0, 2], [4, 2, 0]], dtype=float)
    >>> m, h = weighted_linkage(D, np.ones(3))
    >>> m.tolist(), h.tolist()
    ([[0, 1], [0, 2]], [1.0, 3.0])
    """
    n = D.shape[0]
    if n == 1:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0)
    size = weights.astype(np.float64).copy()
    np.fill_diagonal(D, np.inf)
    argrow = np.argmin(D, axis=1)
    rowmin = D[np.arange(n), argrow]
    merges, heights = [], []
    for _ in range(n - 1):
        i = int(np.argmin(rowmin))
        j = int(argrow[i])
        a, b = (i, j) if i < j else (j, i)
        h = D[a, b]
        if method == "average":
            new = (size[a] * D[a] + size[b] * D[b]) / (size[a] + size[b])
        elif method == "single":
            new = np.minimum(D[a], D[b])
        else:
            new = np.maximum(D[a], D[b])
        new[a] = np.inf
        new[b] = np.inf
        new[~np.isfinite(rowmin)] = np.inf
        D[a, :] = new
        D[:, a] = new
        D[b, :] = np.inf
        D[:, b] = np.inf
        size[a] += size[b]
        rowmin[b] = np.inf
        merges.append((a, b))
        heights.append(h)
        # rows whose nearest cluster was a or b are rescanned; the others may now prefer a
        stale = np.flatnonzero(((argrow == a) | (argrow == b)) & np.isfinite(rowmin))
        stale = np.union1d(stale, [a])
        better = (new < rowmin) | ((new == rowmin) & (a < argrow))
        better[stale] = False
        better &= np.isfinite(new)
        rowmin[better] = new[better]
        argrow[better] = a
        if len(stale):
            sub = D[stale]
            argrow[stale] = np.argmin(sub, axis=1)
            rowmin[stale] = sub[np.arange(len(stale)), argrow[stale]]
        if not np.isfinite(rowmin).any():
            break
    return np.asarray(merges, dtype=np.int64), np.asarray(heights, dtype=np.float64)


def lifetime_n_clusters(heights: np.ndarray, top: float = 1.0, minimum: int = 2) -> int:
    """Number of clusters with the longest lifetime (Fred & Jain 2005).

    The K-cluster partition survives for thresholds between the (n-K)-th and
    (n-K+1)-th merge heights; ``top`` closes the range for K = 1. Returns the
    K in ``minimum..n-1`` whose range is longest (the smallest on ties). The
    all-singletons partition (K = n) is left out: with m members its lifetime
    is at least 1/m whatever the data, which with the few members of an image
    ensemble would always win.

    Examples
    --------
    >>> lifetime_n_clusters(np.array([0.1, 0.1, 0.2, 0.9]))
    2
    """
    n = len(heights) + 1
    if n <= minimum + 1:
        return min(n, minimum)
    h = np.concatenate([[0.0], heights, [top]])  # h[t] = t-th merge height
    ks = np.arange(minimum, n)
    life = h[n - ks + 1] - h[n - ks]
    return int(ks[int(np.argmax(life))])


def member_contingency(ensemble, labels, k: int) -> np.ndarray:
    """``H^T Z`` as a dense (sum k_j, k) array: the weight of every member cluster in each of the k ``labels``.

    One weighted ``bincount`` per member, adding the objects in index order as the sparse product does, so equal
    to ``(ensemble.incidence.T @ Z).toarray()`` (``Z`` the weighted one-hot of ``labels``) bit for bit, without
    building either matrix. Objects a member leaves unlabelled (-1) are in none of its clusters.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> member_contingency(Ensemble.from_labels([[0, 0], [0, 1], [1, 1]]), np.array([0, 0, 1]), 2).tolist()
    [[2.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    """
    w, labels = ensemble.weights, np.asarray(labels, dtype=np.int64)
    code = np.empty(len(labels), dtype=np.int64)
    tables = []
    for lab, kj in zip(ensemble.member_labels, ensemble.n_clusters):
        if k > 1:
            np.add(np.multiply(lab, k, out=code), labels, out=code)  # member cluster * k + label
        said = lab >= 0 if ensemble.abstains else slice(None)
        c = (lab if k == 1 else code)[said]
        tables.append(np.bincount(c, weights=w[said], minlength=kj * k).reshape(kj, k))
    return np.asfortranarray(np.concatenate(tables) if tables else np.zeros((0, k)))  # the product's layout too


def clusters_to_k(ensemble, labels, k):
    """Merge (average linkage on cluster co-association) or split to exactly k clusters."""
    z = np.unique(labels, return_inverse=True)[1]
    c = int(z.max()) + 1
    w, m = ensemble.weights, ensemble.n_members
    check_dense(sum(ensemble.n_clusters), c, "co-association of the member clusters with the clusters brought to K",
                copies=2)
    if c > k:
        check_dense(c, c, "average linkage of the clusters brought to K", copies=3)
        HZ = member_contingency(ensemble, z, c)
        S = HZ.T @ HZ / m  # sum of w_i w_j X_ij between clusters
        size = np.bincount(z, weights=w, minlength=c)
        D = 1.0 - S / np.outer(size, size)
        merges, heights = weighted_linkage(D, size, "average")
        return Hierarchy(c, merges, heights).cut(n_regions=k)[z]
    H = ensemble.incidence if c < k else None
    while c < k:  # split: the object least associated with its cluster starts a new one
        Z = sp.csr_matrix((w, (np.arange(len(z)), z)), shape=(len(z), c))
        own = np.asarray(H @ (H.T @ Z).toarray())[np.arange(len(z)), z] / m
        size = np.asarray(Z.sum(axis=0)).ravel()
        movable = size[z] > w
        if not movable.any():
            break
        score = np.where(movable, own / size[z], np.inf)
        z = z.copy()
        z[int(np.argmin(score))] = c
        c += 1
    return z
