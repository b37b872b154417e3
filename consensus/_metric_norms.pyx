# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""``x G x^T`` of every row of a 0/1 CSR matrix, the sums of SciPy's and NumPy's expression in their order
(:func:`segensemble.consensus._kmeans._row_norms`).

The expression ``bincount(rows, weights=X.data * (X @ G)[rows, X.indices])`` forms the dense ``X @ G`` (n x D): a
row of r entries costs r D. Its numbers, when every entry is 1.0: ``(X @ G)[i, c]`` is SciPy's
``((0 + G[c_0, c]) + G[c_1, c]) + ...`` over the row's entries in stored order (``1.0 * g`` is ``g``), and
``bincount`` adds ``1.0 * (X @ G)[i, c_q]`` over the row's entries in stored order from 0. Here the same additions
in the same order read only the r x r entries of G they need: r^2 per row (m^2 for m members) instead of r D.
"""

from libc.stdint cimport int32_t, int64_t

import numpy as np

ctypedef fused index_t:
    int32_t
    int64_t


def unit_csr_row_norms(const index_t[::1] indptr, const index_t[::1] indices, const double[:, ::1] G):
    """``x G x^T`` of every row of the CSR matrix with these ``indptr`` and ``indices`` and every entry 1.0, the
    additions of ``bincount(rows, weights=X.data * (X @ G)[rows, X.indices])`` in their order (bit for bit)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, i, p, q, D = G.shape[0]
    if G.shape[1] != D:
        raise ValueError(f"G: a square matrix expected, got shape {(G.shape[0], G.shape[1])}")
    out = np.zeros(max(n, 0))
    cdef double[::1] norms = out
    cdef double total, column
    cdef index_t cq
    with nogil:
        for i in range(n):
            total = 0.0
            for q in range(indptr[i], indptr[i + 1]):
                cq = indices[q]
                column = 0.0
                for p in range(indptr[i], indptr[i + 1]):
                    column = column + G[indices[p], cq]
                total = total + column
            norms[i] = total
    return out
