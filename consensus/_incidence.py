"""Products and scalings of the incidence matrix H computed from its structure, equal to SciPy's bit for bit.

H holds one entry 1 per object and member that labels it, in row order with increasing columns (see
:attr:`segensemble.Ensemble.incidence`). SciPy's general routines for a sparse matrix times a dense one, or
for scaling its rows and columns by broadcasting, read memory scattered or go through the coordinate format;
on H the same sums and products can be formed in a single pass, in the same order, so the results are the
same numbers (tested against SciPy on random ensembles with abstaining members).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["incidence_t_dot", "scaled"]


def incidence_t_dot(ensemble):
    """The product ``V -> H^T V`` (sum k_j, K) of a dense (n_objects, K) ``V``: ``np.asarray(H.T.tocsr() @ V)``.

    One ``bincount`` per member and column of ``V``: the sparse product adds each cluster's objects in index order,
    each entry of H being 1, and so does ``bincount``, so the two are equal bit for bit; this one does not read the
    rows of V scattered (0.16 s instead of 0.26 s at 535 000 objects, K = 10). The members' labels are prepared
    once, for the many products of an iteration. Objects a member leaves unlabelled are in none of its clusters.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> dot = incidence_t_dot(Ensemble.from_labels([[0, 0], [1, -1], [0, 0]]))
    >>> dot(np.array([[1.0], [2.0], [4.0]])).tolist()
    [[5.0], [2.0], [5.0]]
    """
    columns = ensemble.member_labels.astype(np.intp)  # bincount's index type: no cast per call
    if ensemble.abstains:  # unlabelled objects counted in one bin past the member's last, then dropped
        columns = np.where(columns < 0, np.asarray(ensemble.n_clusters, dtype=np.intp)[:, None], columns)

    def dot(V) -> np.ndarray:
        VT = np.ascontiguousarray(np.asarray(V, dtype=np.float64).T)
        blocks = [np.stack([np.bincount(lab, weights=v, minlength=kj + 1)[:kj] for v in VT], axis=1)
                  for lab, kj in zip(columns, ensemble.n_clusters)]
        return np.concatenate(blocks) if blocks else np.zeros((0, VT.shape[0]))

    return dot


def scaled(H, rows=None, columns=None) -> sp.csr_matrix:
    """``H`` with row i times ``rows[i]``, then column c times ``columns[c]``, as CSR: the matrix
    ``H.multiply(rows[:, None]).multiply(columns[None, :]).tocsr()`` gives (same arrays, bit for bit: each entry is
    the same two products), by one pass over the entries instead of SciPy's broadcasting through the coordinate
    format (0.02 s instead of 0.33 s for 5.35 million entries). For positive scales (a zero scale would leave
    explicit zero entries).

    Examples
    --------
    >>> H = sp.csr_matrix(np.array([[1.0, 0.0], [1.0, 1.0]]))
    >>> scaled(H, rows=np.array([2.0, 3.0]), columns=np.array([1.0, 0.5])).toarray().tolist()
    [[2.0, 0.0], [3.0, 1.5]]
    """
    H = sp.csr_matrix(H)
    data = H.data
    if rows is not None:
        data = data * np.repeat(np.asarray(rows, dtype=np.float64), np.diff(H.indptr))
    if columns is not None:
        data = data * np.asarray(columns, dtype=np.float64)[H.indices]
    return sp.csr_matrix((data, H.indices.copy(), H.indptr.copy()), shape=H.shape)
