"""Local refinement (Zhou, Dudeja & Amini 2023, Algorithm 3) through the incidence matrix."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["local_refinement"]


def local_refinement(ensemble, labels, *, n_iter: int = 1) -> np.ndarray:
    """Move every object to the cluster it is most co-associated with, on average.

    For object i and cluster k of the current labelling z~:
    ``b_k = sum_{j != i} X_ij [z~_j = k]`` and ``n_k = |{j != i : z~_j = k}|``
    (object weights count as copies, so an atom of weight w sees its other
    w - 1 copies); the new label is ``argmax_k b_k / n_k``. All objects are
    updated from the same z~ (simultaneous update, as Algorithm 3); the step
    is repeated ``n_iter`` times or until nothing changes. Cost per pass:
    O(nnz(H) K) through ``X = H H^T / m``.

    Parameters
    ----------
    ensemble : Ensemble
    labels : (n_objects,) int array, values 0..K-1
    n_iter : int, default 1

    Returns
    -------
    (n_objects,) int array

    References
    ----------
    Z. Zhou, G. Dudeja, A. A. Amini, "Statistical guarantees for consensus
    clustering", ICLR 2023, Algorithm 3.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> L = np.array([[0, 0], [0, 0], [0, 0], [1, 1], [1, 1], [1, 1]])
    >>> local_refinement(Ensemble.from_labels(L), np.array([0, 0, 1, 1, 1, 1])).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    H = ensemble.incidence
    w = ensemble.weights
    m = ensemble.n_members
    z = np.asarray(labels, dtype=np.int64).copy()
    n = len(z)
    for _ in range(max(1, int(n_iter))):
        k = int(z.max()) + 1
        Z = sp.csr_matrix((w, (np.arange(n), z)), shape=(n, k))
        B = np.asarray(H @ (H.T @ Z).toarray()) / m  # sum_j w_j X_ij [z_j = k], j = i included
        B[np.arange(n), z] -= 1.0  # remove object i itself (X_ii = 1)
        counts = np.bincount(z, weights=w, minlength=k)
        N = np.broadcast_to(counts, (n, k)).copy()
        N[np.arange(n), z] -= 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(N > 1e-12, B / np.where(N > 1e-12, N, 1.0), -np.inf)
        new = np.argmax(ratio, axis=1)
        if np.array_equal(new, z):
            break
        z = new
    return z
