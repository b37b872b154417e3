"""Weighted agglomerative clustering of a dense dissimilarity matrix.

Objects carry weights (an atom of weight w stands for w identical objects). For
single, complete and average linkage this is exact: identical objects merge at
height 0 and the Lance-Williams update of average linkage uses cluster *weights*
as sizes. Runs the nearest-neighbour-chain algorithm in O(n^2) time.

References
----------
F. Murtagh, P. Contreras, "Algorithms for hierarchical clustering: an overview",
WIREs Data Mining Knowl. Discov. 2(1), 2012 (nearest-neighbour chain).
"""

from __future__ import annotations

import numpy as np

__all__ = ["LINKAGES", "weighted_linkage", "cut_tree", "lifetime_n_clusters"]

LINKAGES = ("average", "single", "complete")


def weighted_linkage(D: np.ndarray, weights: np.ndarray, method: str = "average") -> tuple[np.ndarray, np.ndarray]:
    """Agglomerative merges of n objects (reducible linkages, NN-chain).

    Parameters
    ----------
    D : (n, n) float array
        Symmetric dissimilarities; it is overwritten (pass a copy).
    weights : (n,) float array
    method : {'average', 'single', 'complete'}

    Returns
    -------
    merges : (n - 1, 2) int array
        Object ids (cluster representatives) merged, sorted by height.
    heights : (n - 1,) float array, non-decreasing
    """
    n = D.shape[0]
    if n == 1:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0)
    size = weights.astype(np.float64).copy()
    np.fill_diagonal(D, np.inf)
    merges, heights = [], []
    chain: list[int] = []
    active = np.ones(n, dtype=bool)
    while len(merges) < n - 1:
        if not chain:
            chain.append(int(np.flatnonzero(active)[0]))
        a = chain[-1]
        row = D[a]
        b = int(np.argmin(row))
        if len(chain) > 1 and row[chain[-2]] <= row[b]:
            b = chain[-2]
        if len(chain) > 1 and b == chain[-2]:
            chain.pop()
            chain.pop()
            h = D[a, b]
            keep, drop = (a, b) if a < b else (b, a)
            if method == "average":
                new = (size[a] * D[a] + size[b] * D[b]) / (size[a] + size[b])
            elif method == "single":
                new = np.minimum(D[a], D[b])
            else:
                new = np.maximum(D[a], D[b])
            new[~active] = np.inf
            new[keep] = np.inf
            new[drop] = np.inf
            D[keep, :] = new
            D[:, keep] = new
            D[drop, :] = np.inf
            D[:, drop] = np.inf
            active[drop] = False
            size[keep] += size[drop]
            merges.append((keep, drop))
            heights.append(h)
        else:
            chain.append(b)
    merges = np.asarray(merges, dtype=np.int64)
    heights = np.asarray(heights, dtype=np.float64)
    order = np.argsort(heights, kind="stable")
    return merges[order], heights[order]


def cut_tree(merges: np.ndarray, n: int, n_clusters: int) -> np.ndarray:
    """Labels of the n objects after the first ``n - n_clusters`` merges."""
    parent = np.arange(n)

    def find(x):
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for a, b in merges[: n - n_clusters]:
        ra, rb = find(a), find(b)
        parent[max(ra, rb)] = min(ra, rb)
    return np.array([find(i) for i in range(n)])


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
