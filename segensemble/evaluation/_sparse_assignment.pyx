# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Minimum-cost assignment of every row of a sparse bipartite graph, each row with a private fallback column.

The shortest augmenting path method of Jonker & Volgenant for sparse graphs
(LAPJVsp) without its initialisation phase — the form it takes on
rectangular problems: the rows are assigned one after the other, each by a
Dijkstra search over reduced costs from the row to the nearest free column,
then the path is augmented and the column prices updated.

Every choice among equals is the one SciPy's
``scipy.sparse.csgraph.min_weight_full_bipartite_matching`` makes on the
same input (rows in order; the row's cheapest columns in the order of its
edges; later minima in increasing column index; the last-found column of a
minimum set searched first), and every price is computed with the same
operations in the same order, so the assignment is the same, bit for bit —
what the Berkeley benchmark's exact counts depend on (tested against SciPy).
What differs is the bookkeeping: SciPy resets and scans all columns for each
row (time rows x columns on a graph of many small components); here only
the columns the search reached are reset, and the next minimum comes from a
binary heap, so a row costs time in the size of its own search.

References
----------
R. Jonker, A. Volgenant, "A shortest augmenting path algorithm for dense and
sparse linear assignment problems", Computing 38 (1987) 325-340.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int64_t, uint8_t

import numpy as np


cdef inline bint _before(double k1, int64_t c1, double k2, int64_t c2) noexcept nogil:
    return k1 < k2 or (k1 == k2 and c1 < c2)


cdef inline void _push(double[::1] hk, int64_t[::1] hc, Py_ssize_t* n, double k, int64_t c) noexcept nogil:
    cdef Py_ssize_t i = n[0], p
    n[0] += 1
    while i > 0:
        p = (i - 1) >> 1
        if not _before(k, c, hk[p], hc[p]):
            break
        hk[i] = hk[p]
        hc[i] = hc[p]
        i = p
    hk[i] = k
    hc[i] = c


cdef inline void _pop(double[::1] hk, int64_t[::1] hc, Py_ssize_t* n) noexcept nogil:
    cdef Py_ssize_t last, i = 0, m, r
    cdef double k
    cdef int64_t c
    n[0] -= 1
    last = n[0]
    k = hk[last]
    c = hc[last]
    while True:
        m = 2 * i + 1
        if m >= last:
            break
        r = m + 1
        if r < last and _before(hk[r], hc[r], hk[m], hc[m]):
            m = r
        if not _before(hk[m], hc[m], k, c):
            break
        hk[i] = hk[m]
        hc[i] = hc[m]
        i = m
    hk[i] = k
    hc[i] = c


def assign_rows(const int64_t[::1] indptr, const int64_t[::1] indices, const double[::1] cost, Py_ssize_t n_real,
                double private_cost):
    """The column of every row in a minimum-cost assignment of all rows (each column used at most once).

    Parameters
    ----------
    indptr, indices, cost : CSR arrays (int64, int64, float64) of the edges between the rows and ``n_real``
        columns, the columns of each row in increasing order.
    n_real : int
    private_cost : float
        Row ``r`` also has an edge to column ``n_real + r`` (its own) at this cost: the last edge of its row.

    Returns
    -------
    (rows,) int64 array: the column of each row; ``n_real`` or more for a row left on its private column.
    """
    cdef Py_ssize_t nr = indptr.shape[0] - 1, nnz = indices.shape[0] + nr, n_cols = n_real + nr
    x_arr = np.full(nr, -1, dtype=np.int64)
    cdef int64_t[::1] x = x_arr
    cdef int64_t[::1] y = np.full(n_cols, -1, dtype=np.int64)
    cdef double[::1] v = np.zeros(n_cols, dtype=np.float64)
    cdef double[::1] d = np.full(n_cols, INFINITY, dtype=np.float64)
    cdef uint8_t[::1] ok = np.zeros(n_cols, dtype=np.uint8)
    cdef int64_t[::1] lab = np.zeros(n_cols, dtype=np.int64)
    cdef double[::1] lab_cost = np.zeros(n_cols, dtype=np.float64)  # cost of the edge (lab[j], j)
    cdef double[::1] x_cost = np.zeros(max(nr, 1), dtype=np.float64)  # cost of the edge (i, x[i])
    cdef int64_t[::1] todo = np.empty(n_cols, dtype=np.int64)  # the minimum set (front), the scanned (back)
    cdef int64_t[::1] touched = np.empty(n_cols, dtype=np.int64)
    cdef double[::1] hk = np.empty(nnz + 1, dtype=np.float64)
    cdef int64_t[::1] hc = np.empty(nnz + 1, dtype=np.int64)
    cdef Py_ssize_t i0, i, k, t, j, j0, td1, td2, last, nt, hn, hp
    cdef double min_diff, dj, h, c
    cdef bint failed = False
    with nogil:
        for i0 in range(nr):
            nt = 0
            hn = 0
            min_diff = INFINITY
            td1 = -1
            j = -1  # the free column reached (-1: none yet)
            last = n_cols
            # The row's own edges: the cheapest columns, in the order of the edges.
            for t in range(indptr[i0], indptr[i0 + 1] + 1):
                if t < indptr[i0 + 1]:
                    k = indices[t]
                    c = cost[t]
                else:
                    k = n_real + i0
                    c = private_cost
                dj = c - v[k]
                touched[nt] = k
                nt += 1
                d[k] = dj
                lab[k] = i0
                lab_cost[k] = c
                _push(hk, hc, &hn, dj, k)
                if dj <= min_diff:
                    if dj < min_diff:
                        td1 = -1
                        min_diff = dj
                    td1 += 1
                    todo[td1] = k
            for hp in range(td1 + 1):
                if y[todo[hp]] == -1:
                    j = todo[hp]
                    break
                ok[todo[hp]] = 1
            td2 = n_cols - 1
            while j < 0:
                if td1 < 0:
                    failed = True
                    break
                j0 = todo[td1]
                td1 -= 1
                i = y[j0]
                todo[td2] = j0
                td2 -= 1
                h = x_cost[i] - v[j0] - min_diff
                for t in range(indptr[i], indptr[i + 1] + 1):
                    if t < indptr[i + 1]:
                        k = indices[t]
                        c = cost[t]
                    else:
                        k = n_real + i
                        c = private_cost
                    if ok[k] == 0:
                        dj = c - v[k] - h
                        if dj < d[k]:
                            if d[k] == INFINITY:
                                touched[nt] = k
                                nt += 1
                            d[k] = dj
                            lab[k] = i
                            lab_cost[k] = c
                            if dj == min_diff:
                                if y[k] == -1:
                                    j = k
                                    break
                                td1 += 1
                                todo[td1] = k
                                ok[k] = 1
                            else:
                                _push(hk, hc, &hn, dj, k)
                if j >= 0 or td1 >= 0:
                    continue
                # The next minimum over the columns reached and not yet final, in increasing column order.
                last = td2 + 1
                while hn > 0 and (ok[hc[0]] or hk[0] != d[hc[0]]):
                    _pop(hk, hc, &hn)
                if hn == 0:
                    failed = True
                    break
                min_diff = hk[0]
                while hn > 0 and hk[0] == min_diff:
                    k = hc[0]
                    _pop(hk, hc, &hn)
                    if ok[k] == 0 and d[k] == min_diff:
                        td1 += 1
                        todo[td1] = k
                for hp in range(td1 + 1):
                    if y[todo[hp]] == -1:
                        j = todo[hp]
                        break
                    ok[todo[hp]] = 1
            if failed:
                break
            # Prices of the columns scanned before the last minimum; then the path is augmented.
            for t in range(last, n_cols):
                k = todo[t]
                v[k] += d[k] - min_diff
            while True:
                i = lab[j]
                y[j] = i
                k = j
                j = x[i]
                x[i] = k
                x_cost[i] = lab_cost[k]
                if i == i0:
                    break
            for t in range(nt):
                d[touched[t]] = INFINITY
                ok[touched[t]] = 0
    if failed:
        raise ValueError("no full matching exists")
    return x_arr
