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
radix heap, so a row costs time in the size of its own search. And the
numbers are integers (the benchmark's weights are whole 1/100 pixels;
:func:`assign_rows` scales weights with a power-of-two denominator to
integers): on such weights SciPy's double arithmetic is exact, so both
compute the same values, and integer comparisons are cheaper.

References
----------
R. Jonker, A. Volgenant, "A shortest augmenting path algorithm for dense and
sparse linear assignment problems", Computing 38 (1987) 325-340.
R. K. Ahuja, K. Mehlhorn, J. B. Orlin, R. E. Tarjan, "Faster algorithms for the
shortest path problem", Journal of the ACM 37(2) (1990) 213-223 (the radix heap).
"""

from libc.stdint cimport int64_t
from libc.stdlib cimport qsort

import numpy as np

#: "Not reached" (and, negated, "final") among the search's distances: far above any sum of admitted weights.
cdef int64_t INFINITY = 4611686018427387904  # 2**62
#: Weights are integers below this (after scaling, for :func:`assign_rows`): every price and distance stays
#: far below INFINITY, and the same numbers as doubles would be exact.
WEIGHT_LIMIT = 2 ** 40


ctypedef struct _Node:
    int64_t k  # distance
    int64_t c  # column
    int64_t next  # the next node of its bucket (-1: none)


cdef extern from *:
    int __builtin_clzll(unsigned long long) nogil
    int __builtin_ctzll(unsigned long long) nogil


def assign_rows(const int64_t[::1] indptr, const int64_t[::1] indices, cost, Py_ssize_t n_real, private_cost):
    """The column of every row in a minimum-cost assignment of all rows (each column used at most once).

    Parameters
    ----------
    indptr, indices, cost : CSR arrays (int64, int64, float) of the edges between the rows and ``n_real``
        columns, the columns of each row in increasing order.
    n_real : int
    private_cost : float
        Row ``r`` also has an edge to column ``n_real + r`` (its own) at this cost: the last edge of its row.

    The search runs on integers: the weights are scaled by the smallest power of two that makes all of them
    whole (a ``ValueError`` if none up to 2**30 does, or if one is then 2**40 or more). On such weights SciPy's
    double arithmetic is exact too, so the choices are the same.

    Returns
    -------
    (rows,) int64 array: the column of each row; ``n_real`` or more for a row left on its private column.
    """
    weights = np.append(np.asarray(cost, dtype=np.float64), float(private_cost))
    cdef Py_ssize_t n = weights.shape[0] - 1
    for k in range(31):
        scaled = np.ldexp(weights, k)
        if np.all(scaled == np.round(scaled)):  # never for NaN; infinities fail the bound
            if np.all(np.abs(scaled) < WEIGHT_LIMIT):
                whole = scaled.astype(np.int64)
                return assign_integer_rows(indptr, indices, whole[:n], n_real, int(whole[n]))
            break
    raise ValueError("cost, private_cost: expected integers, or fractions with a power-of-two denominator, "
                     "below 2**40 once whole")


def assign_integer_rows(const int64_t[::1] indptr, const int64_t[::1] indices, const int64_t[::1] cost,
                        Py_ssize_t n_real, int64_t private_cost):
    """:func:`assign_rows` of integer weights (each of magnitude below 2**40)."""
    cdef Py_ssize_t nr = indptr.shape[0] - 1, nnz = indices.shape[0] + nr, n_cols = n_real + nr
    # The caller (segensemble.evaluation.correspond) builds the arrays; their shapes are checked here, the column
    # indices (in 0..n_real-1, increasing in each row) are its guarantee.
    if nr < 0 or indptr[0] != 0 or indptr[nr] != indices.shape[0] or cost.shape[0] != indices.shape[0]:
        raise ValueError("indptr, indices, cost: not the CSR arrays of one graph")
    x_arr = np.full(nr, -1, dtype=np.int64)
    cdef int64_t[::1] x = x_arr
    # The working arrays have one spare element, so that their first element exists even for an empty graph.
    cdef int64_t[::1] y = np.full(n_cols + 1, -1, dtype=np.int64)
    cdef int64_t[::1] v = np.zeros(n_cols + 1, dtype=np.int64)
    cdef int64_t[::1] d = np.full(n_cols + 1, INFINITY, dtype=np.int64)
    cdef int64_t[::1] final = np.zeros(n_cols + 1, dtype=np.int64)
    cdef int64_t[::1] lab = np.zeros(n_cols + 1, dtype=np.int64)
    cdef int64_t[::1] lab_cost = np.zeros(n_cols + 1, dtype=np.int64)
    cdef int64_t[::1] x_cost = np.zeros(nr + 1, dtype=np.int64)
    cdef int64_t[::1] todo = np.empty(n_cols + 1, dtype=np.int64)
    cdef int64_t[::1] touched = np.empty(n_cols + 1, dtype=np.int64)
    cdef int64_t[::1] node_store = np.empty(3 * (nnz + 1), dtype=np.int64)  # (distance, column, next) nodes
    cdef int64_t[::1] head = np.empty(65, dtype=np.int64)
    cdef _State st
    st.indptr, st.indices, st.cost = &indptr[0], (&indices[0] if indices.shape[0] else NULL), \
        (&cost[0] if cost.shape[0] else NULL)
    st.n_real, st.n_cols, st.private_cost = n_real, n_cols, private_cost
    st.x, st.y, st.v, st.d, st.final = (&x[0] if nr else NULL), &y[0], &v[0], &d[0], &final[0]
    st.lab, st.lab_cost, st.x_cost = &lab[0], &lab_cost[0], &x_cost[0]
    st.todo, st.touched, st.nodes, st.head = &todo[0], &touched[0], <_Node*> &node_store[0], &head[0]
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
    const int64_t* cost
    Py_ssize_t n_real, n_cols
    int64_t private_cost
    int64_t* x  # the column of each row (-1: none yet)
    int64_t* y  # the row of each column (-1: free)
    int64_t* v  # column prices
    int64_t* d  # the search's distances (INFINITY: not reached; -INFINITY: final, its distance in `final`)
    int64_t* final
    int64_t* lab  # the row a column was reached from ...
    int64_t* lab_cost  # ... and the cost of that edge
    int64_t* x_cost  # the cost of each row's edge to its column
    int64_t* todo  # the current minimum set (front) and the scanned columns (back)
    int64_t* touched  # the columns the search reached
    _Node* nodes  # the radix heap's entries: (distance, column) of reached columns, maybe stale since
    int64_t* head  # the first node of each bucket 1..64 (valid where its bit of `mask` is set)
    unsigned long long mask
    Py_ssize_t nt, hn, td1
    int64_t min_diff


# A radix heap (Ahuja, Mehlhorn, Orlin & Tarjan 1990) of (distance, column) entries. Every distance pushed is above
# the current minimum (the reduced costs are non-negative: each assigned row's column is its cheapest at the current
# prices, the invariant of the method), so an entry lies in bucket "bit length of (distance XOR current minimum)",
# 1..64, and keeps it when the minimum grows unless it shared that minimum's bucket. A push is O(1); the next minimum
# scans the lowest non-empty bucket once, dropping its stale entries (columns lowered since, or final) and moving
# the others to lower buckets. The minimum set is then sorted by column: the same set, in the same order, as
# popping a heap ordered by (distance, column), which is what the searches' choices were made with before.
cdef inline int _bucket(int64_t k, int64_t last) noexcept nogil:
    """1..64: a distance above the current minimum (both in the search's range, far inside int64)."""
    return 64 - __builtin_clzll((<unsigned long long> k) ^ (<unsigned long long> last))


cdef inline void _link(_State* st, Py_ssize_t n) noexcept nogil:
    """Node n into the bucket of its distance (above the current minimum)."""
    cdef int b = _bucket(st.nodes[n].k, st.min_diff)
    cdef unsigned long long bit = (<unsigned long long> 1) << (b - 1)
    st.nodes[n].next = st.head[b] if st.mask & bit else -1
    st.head[b] = n
    st.mask |= bit


cdef inline void _push(_State* st, int64_t k, int64_t c) noexcept nogil:
    st.nodes[st.hn].k = k
    st.nodes[st.hn].c = c
    _link(st, st.hn)
    st.hn += 1


cdef int _compare_columns(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*> a)[0], y = (<const int64_t*> b)[0]
    return (x > y) - (x < y)


cdef bint _next_minimum(_State* st) noexcept nogil:
    """The next minimum distance over the columns reached and not final, its columns into the (empty) minimum set
    in increasing column order; False if there are none."""
    cdef Py_ssize_t n, nxt, p
    cdef int64_t best, k, c
    cdef int b
    cdef bint found
    while st.mask:
        b = __builtin_ctzll(st.mask) + 1
        st.mask &= st.mask - 1
        found = False
        best = 0
        n = st.head[b]
        while n >= 0:
            k = st.nodes[n].k
            if k == st.d[st.nodes[n].c] and (not found or k < best):
                best = k
                found = True
            n = st.nodes[n].next
        if not found:
            continue
        st.min_diff = best
        n = st.head[b]
        while n >= 0:
            nxt = st.nodes[n].next
            k = st.nodes[n].k
            c = st.nodes[n].c
            if k == st.d[c]:  # not stale: into the minimum set, or down to a lower bucket
                if k == best:
                    st.td1 += 1
                    st.todo[st.td1] = c
                else:
                    _link(st, n)
            n = nxt
        if st.td1 < 16:  # the usual few: insertion sort
            for n in range(1, st.td1 + 1):
                c = st.todo[n]
                p = n
                while p > 0 and st.todo[p - 1] > c:
                    st.todo[p] = st.todo[p - 1]
                    p -= 1
                st.todo[p] = c
        else:
            qsort(st.todo, st.td1 + 1, sizeof(int64_t), _compare_columns)
        return True
    return False


cdef inline int _relax(_State* st, Py_ssize_t i, Py_ssize_t k, int64_t c, int64_t h) noexcept nogil:
    """Row i (scanned) reaches column k by an edge of cost c: 1 if k is a free column at the minimum (the end)."""
    cdef int64_t dj = c - st.v[k] - h
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
        _push(st, dj, k)
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
    cdef int64_t dj, h, c
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
        st.mask = 0
        for t in range(st.nt):
            k = st.touched[t]
            if st.d[k] != -INFINITY:
                _push(st, st.d[k], k)
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
        if not _next_minimum(st):
            return False
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
