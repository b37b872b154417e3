"""Locally adaptive clustering (LAC), the projective clustering algorithm behind PCE's feature weights.

Used to make projective clustering ensembles (``segensemble.datasets``: the
paper's E1–E4 ensembles) and restated by :func:`segensemble.consensus.pce.lac_feature_weights`.
"""

from __future__ import annotations

import numpy as np

from segensemble.errors import InputError
from segensemble.validation import check_int, check_rng

__all__ = ["lac"]


def lac(X, n_clusters: int, *, h: float = 0.2, rng=None, max_iter: int = 50):
    """Locally adaptive clustering (LAC): k-means with per-cluster feature weights.

    Objects go to the centroid of smallest weighted distance
    ``sum_f w_{c,f} (x_f - m_{c,f})^2``; weights are
    ``w_{c,f} = softmax_f(-U(c, f) / h)`` with U the mean squared deviation
    along f in cluster c; centroids are the cluster means. Starts from K
    random objects.

    Returns
    -------
    labels : (n,) int array
    weights : (K, F) array, rows summing to 1
    centroids : (K, F) array

    References
    ----------
    C. Domeniconi, D. Gunopulos, S. Ma, B. Yan, M. Al-Razgan, D. Papadopoulos,
    "Locally adaptive metrics for clustering high dimensional data", Data Min.
    Knowl. Disc. 14, 2007.

    Examples
    --------
    >>> from segensemble.datasets import make_subspace_clusters
    >>> X, y, rel = make_subspace_clusters(90, 6, 3, rng=1)
    >>> labels, w, _ = lac(X, 3, rng=0)
    >>> w.shape
    (3, 6)
    """
    X = np.asarray(X, dtype=np.float64)
    n, f = X.shape
    k = check_int(n_clusters, "n_clusters", minimum=1, maximum=n)
    if not h > 0:
        raise InputError(f"h: expected a positive bandwidth, got {h!r}")
    gen = check_rng(rng)
    centroids = X[gen.choice(n, size=k, replace=False)].copy()
    weights = np.full((k, f), 1.0 / f)
    labels = np.full(n, -1)
    for _ in range(max_iter):
        d = np.einsum("kf,nkf->nk", weights, (X[:, None, :] - centroids[None]) ** 2)
        new = np.argmin(d, axis=1)
        for c in range(k):
            if not np.any(new == c):  # an empty cluster takes the worst-fitting object
                new[int(np.argmax(d[np.arange(n), new]))] = c
        for c in range(k):
            members = X[new == c]
            centroids[c] = members.mean(axis=0)
            U = ((members - centroids[c]) ** 2).mean(axis=0)
            e = -U / h
            weights[c] = np.exp(e - e.max())
            weights[c] /= weights[c].sum()
        if np.array_equal(new, labels):
            break
        labels = new
    return labels, weights, centroids
