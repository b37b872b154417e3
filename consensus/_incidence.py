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
        VT = _transposed(np.asarray(V, dtype=np.float64))
        blocks = [np.stack([np.bincount(lab, weights=v, minlength=kj + 1)[:kj] for v in VT], axis=1)
                  for lab, kj in zip(columns, ensemble.n_clusters)]
        return np.concatenate(blocks) if blocks else np.zeros((0, VT.shape[0]))

    return dot


#: Rows of V transposed at a time by :func:`_transposed` (2 048 x K doubles stay in the cache while they are read
#: column by column).
_TRANSPOSE_ROWS = 2048


def _transposed(V: np.ndarray) -> np.ndarray:
    """``np.ascontiguousarray(V.T)`` of a 2-D array, copied in blocks of rows: reading a tall C-order array column
    by column touches every cache line of it once per column; a block read so stays in the cache (13 instead of
    30 ms for 534 869 x 10 doubles). The same array.

    Examples
    --------
    >>> _transposed(np.arange(6.0).reshape(3, 2)).tolist()
    [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    """
    n = V.shape[0]
    out = np.empty(V.shape[::-1], dtype=V.dtype)
    for i in range(0, n, _TRANSPOSE_ROWS):
        out[:, i:i + _TRANSPOSE_ROWS] = V[i:i + _TRANSPOSE_ROWS].T
    return out


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
