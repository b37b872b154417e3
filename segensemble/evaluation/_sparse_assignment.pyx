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
from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy as np


cdef inline bint _before(double k1, int64_t c1, double k2, int64_t c2) noexcept nogil:
    return k1 < k2 or (k1 == k2 and c1 < c2)


cdef inline void _push(double* hk, int64_t* hc, Py_ssize_t* n, double k, int64_t c) noexcept nogil:
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


cdef inline void _pop(double* hk, int64_t* hc, Py_ssize_t* n) noexcept nogil:
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
    # The caller (segensemble.evaluation.correspond) builds the arrays; their shapes are checked here, the column
    # indices (in 0..n_real-1, increasing in each row) are its guarantee.
    if nr < 0 or indptr[0] != 0 or indptr[nr] != indices.shape[0] or cost.shape[0] != indices.shape[0]:
        raise ValueError("indptr, indices, cost: not the CSR arrays of one graph")
    x_arr = np.full(nr, -1, dtype=np.int64)
    cdef int64_t[::1] x = x_arr
    # The working arrays have one spare element, so that their first element exists even for an empty graph.
    cdef int64_t[::1] y = np.full(n_cols + 1, -1, dtype=np.int64)
    cdef double[::1] v = np.zeros(n_cols + 1, dtype=np.float64)
    cdef double[::1] d = np.full(n_cols + 1, INFINITY, dtype=np.float64)
    cdef double[::1] final = np.zeros(n_cols + 1, dtype=np.float64)
    cdef int64_t[::1] lab = np.zeros(n_cols + 1, dtype=np.int64)
    cdef double[::1] lab_cost = np.zeros(n_cols + 1, dtype=np.float64)
    cdef double[::1] x_cost = np.zeros(nr + 1, dtype=np.float64)
    cdef int64_t[::1] todo = np.empty(n_cols + 1, dtype=np.int64)
    cdef int64_t[::1] touched = np.empty(n_cols + 1, dtype=np.int64)
    cdef double[::1] hk = np.empty(nnz + 1, dtype=np.float64)
    cdef int64_t[::1] hc = np.empty(nnz + 1, dtype=np.int64)
    cdef _State st
    st.indptr, st.indices, st.cost = &indptr[0], (&indices[0] if indices.shape[0] else NULL), \
        (&cost[0] if cost.shape[0] else NULL)
    st.n_real, st.n_cols, st.private_cost = n_real, n_cols, private_cost
    st.x, st.y, st.v, st.d, st.final = (&x[0] if nr else NULL), &y[0], &v[0], &d[0], &final[0]
    st.lab, st.lab_cost, st.x_cost = &lab[0], &lab_cost[0], &x_cost[0]
    st.todo, st.touched, st.hk, st.hc = &todo[0], &touched[0], &hk[0], &hc[0]
    cdef Py_ssize_t i0
    cdef bint failed = False
    with nogil:
        for i0 in range(nr):
            if not _assign_row(&st, i0):
                failed = True
                break
    if failed:
        raise ValueError("no full matching exists")
    return x_arr


cdef struct _State:
    const int64_t* indptr
    const int64_t* indices
    const double* cost
    Py_ssize_t n_real, n_cols
    double private_cost
    int64_t* x  # the column of each row (-1: none yet)
    int64_t* y  # the row of each column (-1: free)
    double* v  # column prices
    double* d  # the search's distances (INFINITY: not reached; -INFINITY: final, its distance in `final`)
    double* final
    int64_t* lab  # the row a column was reached from ...
    double* lab_cost  # ... and the cost of that edge
    double* x_cost  # the cost of each row's edge to its column
    int64_t* todo  # the current minimum set (front) and the scanned columns (back)
    int64_t* touched  # the columns the search reached
    double* hk  # the heap of (distance, column) of reached columns not final
    int64_t* hc
    Py_ssize_t nt, hn, td1
    double min_diff


cdef inline int _relax(_State* st, Py_ssize_t i, Py_ssize_t k, double c, double h) noexcept nogil:
    """Row i (scanned) reaches column k by an edge of cost c: 1 if k is a free column at the minimum (the end)."""
    cdef double dj = c - st.v[k] - h
    if not dj < st.d[k]:  # also for a final column (-INFINITY)
        return 0
    if st.d[k] == INFINITY:
        st.touched[st.nt] = k
        st.nt += 1
    st.d[k] = dj
    st.lab[k] = i
    st.lab_cost[k] = c
    if dj == st.min_diff:
        if st.y[k] == -1:
            return 1
        st.td1 += 1
        st.todo[st.td1] = k
        _make_final(st, k)
    else:
        _push(st.hk, st.hc, &st.hn, dj, k)
    return 0


cdef inline void _make_final(_State* st, Py_ssize_t k) noexcept nogil:
    st.final[k] = st.d[k]
    st.d[k] = -INFINITY


cdef inline Py_ssize_t _free_in_minimum(_State* st) noexcept nogil:
    """The first free column of the minimum set (in its order), the others before it made final; -1 if none."""
    cdef Py_ssize_t hp, k
    for hp in range(st.td1 + 1):
        k = st.todo[hp]
        if st.y[k] == -1:
            return k
        _make_final(st, k)
    return -1


cdef bint _assign_row(_State* st, Py_ssize_t i0) noexcept nogil:
    """Assign row i0 by a shortest augmenting path; False if no free column can be reached."""
    cdef Py_ssize_t i, k, t, j, j0, td2, last, end
    cdef double dj, h, c
    st.nt = 0
    st.hn = 0
    st.min_diff = INFINITY
    st.td1 = -1
    last = st.n_cols
    # The row's own edges (its private column last): the cheapest columns, in the order of the edges.
    end = st.indptr[i0 + 1]
    for t in range(st.indptr[i0], end + 1):
        if t < end:
            k = st.indices[t]
            c = st.cost[t]
        else:
            k = st.n_real + i0
            c = st.private_cost
        dj = c - st.v[k]
        st.touched[st.nt] = k
        st.nt += 1
        st.d[k] = dj
        st.lab[k] = i0
        st.lab_cost[k] = c
        if dj <= st.min_diff:
            if dj < st.min_diff:
                st.td1 = -1
                st.min_diff = dj
            st.td1 += 1
            st.todo[st.td1] = k
    j = _free_in_minimum(st)
    if j < 0:  # a search: the row's other columns enter the heap (not before: most rows end here)
        for t in range(st.nt):
            k = st.touched[t]
            if st.d[k] != -INFINITY:
                _push(st.hk, st.hc, &st.hn, st.d[k], k)
    td2 = st.n_cols - 1
    while j < 0:
        if st.td1 < 0:
            return False
        j0 = st.todo[st.td1]
        st.td1 -= 1
        i = st.y[j0]
        st.todo[td2] = j0
        td2 -= 1
        h = st.x_cost[i] - st.v[j0] - st.min_diff
        end = st.indptr[i + 1]
        for t in range(st.indptr[i], end):
            if _relax(st, i, st.indices[t], st.cost[t], h):
                j = st.indices[t]
                break
        if j < 0 and _relax(st, i, st.n_real + i, st.private_cost, h):
            j = st.n_real + i
        if j >= 0 or st.td1 >= 0:
            continue
        # The next minimum over the columns reached and not yet final, in increasing column order.
        last = td2 + 1
        while st.hn > 0 and st.hk[0] != st.d[st.hc[0]]:  # stale: lowered since, or final
            _pop(st.hk, st.hc, &st.hn)
        if st.hn == 0:
            return False
        st.min_diff = st.hk[0]
        while st.hn > 0 and st.hk[0] == st.min_diff:
            k = st.hc[0]
            _pop(st.hk, st.hc, &st.hn)
            if st.d[k] == st.min_diff:
                st.td1 += 1
                st.todo[st.td1] = k
        j = _free_in_minimum(st)
    # Prices of the columns scanned before the last minimum; then the path is augmented.
    for t in range(last, st.n_cols):
        k = st.todo[t]
        st.v[k] += st.final[k] - st.min_diff
    while True:
        i = st.lab[j]
        st.y[j] = i
        k = j
        j = st.x[i]
        st.x[i] = k
        st.x_cost[i] = st.lab_cost[k]
        if i == i0:
            break
    for t in range(st.nt):
        st.d[st.touched[t]] = INFINITY
    return True


def component_roots(const int64_t[::1] a, const int64_t[::1] b, Py_ssize_t n):
    """The connected components of the graph with edges ``(a[k], b[k])`` on vertices ``0..n-1``: each vertex's
    component named by one of its vertices (union-find, time linear in n + edges)."""
    if a.shape[0] != b.shape[0]:
        raise ValueError("a, b: expected one length")
    root_arr = np.arange(n, dtype=np.int64)
    cdef int64_t[::1] root = root_arr
    cdef Py_ssize_t k, u, w
    with nogil:
        for k in range(a.shape[0]):
            u = _find(&root[0], a[k])
            w = _find(&root[0], b[k])
            if u < w:
                root[w] = u
            elif w < u:
                root[u] = w
        for k in range(n):
            root[k] = root[root[k]]  # roots point to themselves and have smaller ids: one pass settles all
    return root_arr


cdef inline Py_ssize_t _find(int64_t* root, Py_ssize_t u) noexcept nogil:
    while root[u] != u:
        root[u] = root[root[u]]
        u = root[u]
    return u


def assign_edges(const int64_t[::1] rows, const int64_t[::1] cols, const int64_t[::1] cost, Py_ssize_t n_col_ids,
                 double private_cost):
    """:func:`assign_rows` of an edge list between pixel ids: the rows are the distinct ``rows`` (sorted, the
    columns of each row increasing), the columns the distinct ``cols`` (ids below ``n_col_ids``), both ranked in
    increasing id order (which keeps every choice among equals); an edge weighs its integer cost + 1 (the numbers
    the benchmark gives the solver). Returns the matched pairs as (row ids, column ids)."""
    cdef Py_ssize_t ne = rows.shape[0], e, nr = 0, nc = 0, k, nm = 0
    if cols.shape[0] != ne or cost.shape[0] != ne:
        raise ValueError("rows, cols, cost: expected one length")
    rank_arr = np.full(n_col_ids + 1, -1, dtype=np.int64)
    indices_arr = np.empty(ne, dtype=np.int64)
    weight_arr = np.empty(ne, dtype=np.float64)
    indptr_arr = np.zeros(ne + 1, dtype=np.int64)
    row_ids_arr = np.empty(ne, dtype=np.int64)
    cdef int64_t[::1] rank = rank_arr, indices = indices_arr, indptr = indptr_arr, row_ids = row_ids_arr
    cdef double[::1] weight = weight_arr
    with nogil:
        for e in range(ne):
            rank[cols[e]] = 0
        for k in range(n_col_ids):
            if rank[k] == 0:
                rank[k] = nc
                nc += 1
        for e in range(ne):
            if e == 0 or rows[e] != rows[e - 1]:
                row_ids[nr] = rows[e]
                nr += 1
            indptr[nr] = e + 1
            indices[e] = rank[cols[e]]
            weight[e] = <double> cost[e] + 1.0
    col_ind_arr = assign_rows(indptr_arr[:nr + 1], indices_arr, weight_arr, nc, private_cost)
    cdef int64_t[::1] col_ind = col_ind_arr
    col_ids_arr = np.empty(nc, dtype=np.int64)
    cdef int64_t[::1] col_ids = col_ids_arr
    with nogil:
        for k in range(n_col_ids):
            if rank[k] >= 0:
                col_ids[rank[k]] = k
    matched_rows = np.empty(nr, dtype=np.int64)
    matched_cols = np.empty(nr, dtype=np.int64)
    cdef int64_t[::1] mr = matched_rows, mc = matched_cols
    with nogil:
        for k in range(nr):
            if col_ind[k] < nc:
                mr[nm] = row_ids[k]
                mc[nm] = col_ids[col_ind[k]]
                nm += 1
    return matched_rows[:nm], matched_cols[:nm]


def split_active(const uint8_t[::1] active, const int64_t[::1] i, const int64_t[::1] j, const int64_t[::1] cost,
                 Py_ssize_t n1, Py_ssize_t n2):
    """The edges ``(i, j)`` (machine, annotation pixel ids) whose machine end is ``active``, in their order, split
    into the isolated ones (both ends of degree one among them: matched directly) and the rest.

    Returns
    -------
    single : int64 array, the machine ends of the isolated edges
    rest_i, rest_j, rest_cost : int64 arrays, the other edges
    degree_i, degree_j : int32 arrays (n1,), (n2,), the degrees among the active edges
    """
    cdef Py_ssize_t ne = i.shape[0], e, ns = 0, nrest = 0
    if j.shape[0] != ne or cost.shape[0] != ne or active.shape[0] < n1:
        raise ValueError("active, i, j, cost: not one graph")
    deg1_arr = np.zeros(n1, dtype=np.int32)
    deg2_arr = np.zeros(n2, dtype=np.int32)
    cdef int32_t[::1] deg1 = deg1_arr, deg2 = deg2_arr
    with nogil:
        for e in range(ne):
            if active[i[e]]:
                deg1[i[e]] += 1
                deg2[j[e]] += 1
                nrest += 1
        for e in range(ne):
            if active[i[e]] and deg1[i[e]] == 1 and deg2[j[e]] == 1:
                ns += 1
    single_arr = np.empty(ns, dtype=np.int64)
    nrest -= ns
    ri_arr = np.empty(nrest, dtype=np.int64)
    rj_arr = np.empty(nrest, dtype=np.int64)
    rc_arr = np.empty(nrest, dtype=np.int64)
    cdef int64_t[::1] single = single_arr, ri = ri_arr, rj = rj_arr, rc = rc_arr
    ns = 0
    nrest = 0
    with nogil:
        for e in range(ne):
            if not active[i[e]]:
                continue
            if deg1[i[e]] == 1 and deg2[j[e]] == 1:
                single[ns] = i[e]
                ns += 1
            else:
                ri[nrest] = i[e]
                rj[nrest] = j[e]
                rc[nrest] = cost[e]
                nrest += 1
    return single_arr, ri_arr, rj_arr, rc_arr, deg1_arr, deg2_arr
