# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The compiled steps of the benchmark's threshold sweep (:mod:`segensemble.evaluation.sweep`): a threshold's
graph split into isolated and remaining pairs, the connected components of a graph, and the solve of an edge
list between pixel ids."""

from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy as np

from segensemble.evaluation._sparse_assignment import assign_integer_rows


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
                 int64_t private_cost):
    """:func:`~segensemble.evaluation._sparse_assignment.assign_rows` of an edge list between pixel ids.

    The rows are the distinct ``rows`` (sorted, the columns of each row increasing), the columns the distinct
    ``cols`` (ids below ``n_col_ids``), both ranked in increasing id order (which keeps every choice among
    equals); an edge weighs its integer cost + 1 (the numbers the benchmark gives the solver). Returns the
    matched pairs as (row ids, column ids)."""
    cdef Py_ssize_t ne = rows.shape[0], e, nr = 0, nc = 0, k, nm = 0
    if cols.shape[0] != ne or cost.shape[0] != ne:
        raise ValueError("rows, cols, cost: expected one length")
    rank_arr = np.full(n_col_ids + 1, -1, dtype=np.int64)
    indices_arr = np.empty(ne, dtype=np.int64)
    weight_arr = np.empty(ne, dtype=np.int64)
    indptr_arr = np.zeros(ne + 1, dtype=np.int64)
    row_ids_arr = np.empty(ne, dtype=np.int64)
    cdef int64_t[::1] rank = rank_arr, indices = indices_arr, indptr = indptr_arr, row_ids = row_ids_arr
    cdef int64_t[::1] weight = weight_arr
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
            weight[e] = cost[e] + 1
    col_ind_arr = assign_integer_rows(indptr_arr[:nr + 1], indices_arr, weight_arr, nc, private_cost)
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
