# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The compiled steps of the benchmark's threshold sweep (:mod:`segensemble.evaluation.sweep`): what a threshold
must solve (its isolated pairs, its changed components' edges, found with a union-find), and the solve of an edge
list between pixel ids."""

from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy as np

from segensemble.evaluation._sparse_assignment import assign_integer_rows


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


def plan_step(const uint8_t[::1] act, prev_act, int prev_swapped, const int64_t[::1] prev_m,
              const int64_t[::1] prev_g, by_machine, by_gt, Py_ssize_t n1, Py_ssize_t n2):
    """What one threshold of the sweep must solve, given the last one (see ``sweep._Sweep.step``).

    ``act``: the machine pixels of this threshold (0/1 per union pixel); ``prev_act``, ``prev_swapped`` (-1: no
    solved pairs then, 0 or 1: their row side) and the solved pairs ``prev_m``, ``prev_g`` of the last threshold
    (``prev_act`` None: none). ``by_machine``: the candidate pairs sorted by (machine, annotation) as (annotation
    id, cost, start of each machine pixel's pairs); ``by_gt``: sorted by (annotation, machine) as (machine id,
    cost, start of each annotation pixel's pairs). Time in
    the pixels and this threshold's pairs.

    Returns (single, swapped, rows, cols, cost, kept_m, kept_g): the machine ends of the isolated pairs (matched
    directly); the row side (-1: nothing to solve; 1: annotation pixels are the rows, when they are fewer among
    the remaining pairs' ends); the edges to solve, in the solver's row order (those of the components that
    changed since the last threshold); the last threshold's solved pairs of the components that did not change.
    """
    cdef const int64_t[::1] bj = by_machine[0], bc = by_machine[1], bp = by_machine[2]
    cdef const int64_t[::1] gi = by_gt[0], gc = by_gt[1], gp = by_gt[2]
    cdef Py_ssize_t ns = 0, nrest = 0, nsel = 0, cm = 0, cg = 0, k, e, u, w, nk = 0
    if act.shape[0] < n1 or bp.shape[0] != n1 + 1 or gp.shape[0] != n2 + 1:
        raise ValueError("act, by_machine, by_gt: not one graph")
    cdef bint has_prev = prev_act is not None
    cdef const uint8_t[::1] before = prev_act if has_prev else act
    deg2_arr, rows_m_arr, rows_g_arr = np.zeros(n2, np.int32), np.zeros(n1, np.uint8), np.zeros(n2, np.uint8)
    root_arr, changed_arr = np.arange(n1 + n2, dtype=np.int64), np.zeros(n1 + n2, dtype=np.uint8)
    single_arr = np.empty(n1, dtype=np.int64)
    cdef int32_t[::1] deg2 = deg2_arr
    cdef uint8_t[::1] rows_m = rows_m_arr, rows_g = rows_g_arr, changed = changed_arr
    cdef int64_t[::1] root = root_arr, single = single_arr
    with nogil:
        for k in range(n1):
            if act[k]:
                for e in range(bp[k], bp[k + 1]):
                    deg2[bj[e]] += 1
        for k in range(n1):
            if not act[k] or bp[k] == bp[k + 1]:
                continue
            if bp[k + 1] - bp[k] == 1 and deg2[bj[bp[k]]] == 1:  # an isolated pair
                single[ns] = k
                ns += 1
                continue
            rows_m[k] = 1
            cm += 1
            nrest += bp[k + 1] - bp[k]
            u = _find(&root[0], k)  # the root of k's set, kept as its pairs join other sets to it
            for e in range(bp[k], bp[k + 1]):
                if not rows_g[bj[e]]:
                    rows_g[bj[e]] = 1
                    cg += 1
                w = _find(&root[0], n1 + bj[e])
                if u < w:
                    root[w] = u
                elif w < u:
                    root[u] = w
                    u = w
    empty = np.zeros(0, dtype=np.int64)
    if cm == 0:
        return single_arr[:ns], -1, empty, empty, empty, empty, empty
    cdef int swapped = 1 if cg < cm else 0
    cdef bint compare = has_prev and prev_swapped == swapped
    cdef Py_ssize_t npm = prev_m.shape[0] if compare else 0
    kept_m_arr, kept_g_arr = np.empty(npm, dtype=np.int64), np.empty(npm, dtype=np.int64)
    rows_arr, cols_arr, cost_arr = (np.empty(nrest, dtype=np.int64) for _ in range(3))
    cdef int64_t[::1] kept_m = kept_m_arr, kept_g = kept_g_arr, rows = rows_arr, cols = cols_arr, cost = cost_arr
    with nogil:
        if compare:
            for k in range(n1):
                if act[k] and not before[k] and rows_m[k]:  # a new machine pixel
                    changed[_find(&root[0], k)] = 1
                elif before[k] and not act[k]:  # a machine pixel that left: its annotation pixels
                    for e in range(bp[k], bp[k + 1]):
                        if rows_g[bj[e]]:
                            changed[_find(&root[0], n1 + bj[e])] = 1
            for k in range(npm):
                u = prev_m[k]
                if act[u] and rows_m[u] and not changed[_find(&root[0], u)]:
                    kept_m[nk] = u
                    kept_g[nk] = prev_g[k]
                    nk += 1
        # The pairs to solve, in the solver's row order: every active pair of a pixel with remaining pairs is
        # a remaining pair (a pixel of degree one in an isolated pair has no other), in a changed component.
        if swapped:
            for k in range(n2):
                if rows_g[k] and (not compare or changed[_find(&root[0], n1 + k)]):
                    for e in range(gp[k], gp[k + 1]):
                        if act[gi[e]]:
                            rows[nsel], cols[nsel], cost[nsel] = k, gi[e], gc[e]
                            nsel += 1
        else:
            for k in range(n1):
                if rows_m[k] and (not compare or changed[_find(&root[0], k)]):
                    for e in range(bp[k], bp[k + 1]):
                        rows[nsel], cols[nsel], cost[nsel] = k, bj[e], bc[e]
                        nsel += 1
    return (single_arr[:ns], swapped, rows_arr[:nsel], cols_arr[:nsel], cost_arr[:nsel], kept_m_arr[:nk],
            kept_g_arr[:nk])
