# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled greedy region merging for the two keys the product uses (see :mod:`segensemble.graph.merger`).

Both walks keep :meth:`RegionMerger.run`'s semantics: a min-heap of entries
compared as tuples, a region's borders re-keyed after it absorbs another (a
border both regions had: its sums added into the survivor's row), the smaller
index surviving, heights made non-decreasing.

- :func:`mean_merge` — the key ``border mean of quantity 0 - penalty * sqrt(ref / smaller size)``, minus 1 when a
  region is below ``min_size``; entries ``(key, lo, hi)`` checked for staleness by recomputing the key, as the
  Python walk does. Every step is one IEEE operation in the Python walk's order (built without floating-point
  contraction), so merges and heights are the Python walk's bit for bit.
- :func:`learned_merge` — the learned criterion (logistic of the six pair features of
  :func:`segensemble.consensus.merging.pair_features`, plus a weight times the mean of border quantity 2), entries
  ``(key, lo, hi, version lo, version hi)`` checked by region versions, as the batched Python walk does. ``exp``,
  ``log10`` and the sums are C's: equal to NumPy's vectorised ones to a few ulps, not bit for bit.

The borders live in one open-addressing table keyed by the region pair; every region keeps a list of neighbours,
entries of regions it no longer borders being dropped when the list is next read.
"""

import numpy as np

from libc.math cimport exp, fabs, log10, sqrt
from libc.stdlib cimport free, malloc, realloc

ctypedef long long i64

cdef struct Entry:
    double k
    i64 u
    i64 v
    i64 vu
    i64 vv

cdef struct Heap:
    Entry* data
    i64 size
    i64 cap

cdef struct Table:  # pair code -> border row; keys -1 empty, -2 deleted
    i64* keys
    i64* rows
    i64 cap
    i64 used
    i64 live

cdef struct Lists:  # neighbours of every region (may hold regions no longer bordered)
    i64** items
    i64* count
    i64* cap


cdef inline bint _less(const Entry* a, const Entry* b) noexcept nogil:
    if a.k != b.k:
        return a.k < b.k
    if a.u != b.u:
        return a.u < b.u
    if a.v != b.v:
        return a.v < b.v
    if a.vu != b.vu:
        return a.vu < b.vu
    return a.vv < b.vv


cdef int _push(Heap* h, Entry e) except -1 nogil:
    cdef i64 i, parent
    cdef Entry* grown
    if h.size == h.cap:
        grown = <Entry*> realloc(h.data, (2 * h.cap + 16) * sizeof(Entry))
        if grown == NULL:
            with gil:
                raise MemoryError("region merging: out of memory for the merge heap")
        h.data, h.cap = grown, 2 * h.cap + 16
    i = h.size
    h.size += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not _less(&e, &h.data[parent]):
            break
        h.data[i] = h.data[parent]
        i = parent
    h.data[i] = e
    return 0


cdef Entry _pop(Heap* h) noexcept nogil:
    cdef Entry top = h.data[0], last = h.data[h.size - 1]
    cdef i64 n, i = 0, child
    h.size -= 1
    n = h.size
    if n == 0:
        return top
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and _less(&h.data[child + 1], &h.data[child]):
            child += 1
        if not _less(&h.data[child], &last):
            break
        h.data[i] = h.data[child]
        i = child
    h.data[i] = last
    return top


cdef inline i64 _slot(const Table* t, i64 code) noexcept nogil:
    """Slot of ``code``, or of the first free slot where it would go (a deleted one first)."""
    cdef i64 mask = t.cap - 1, i = <i64> ((<unsigned long long> code * 0x9E3779B97F4A7C15ULL) >> 20) & mask
    cdef i64 free_slot = -1
    while t.keys[i] != -1:
        if t.keys[i] == code:
            return i
        if t.keys[i] == -2 and free_slot < 0:
            free_slot = i
        i = (i + 1) & mask
    return free_slot if free_slot >= 0 else i


cdef inline i64 _find(const Table* t, i64 code) noexcept nogil:
    cdef i64 i = _slot(t, code)
    return t.rows[i] if t.keys[i] == code else -1


cdef int _alloc_table(Table* t, i64 at_least) except -1 nogil:
    cdef i64 i, cap = 16
    while cap < at_least:  # a power of two: slots are found by masking
        cap *= 2
    t.keys = <i64*> malloc(cap * sizeof(i64))
    t.rows = <i64*> malloc(cap * sizeof(i64))
    if t.keys == NULL or t.rows == NULL:
        free(t.keys)
        free(t.rows)
        t.keys, t.rows = NULL, NULL
        with gil:
            raise MemoryError("region merging: out of memory for the border table")
    for i in range(cap):
        t.keys[i] = -1
    t.cap, t.used, t.live = cap, 0, 0
    return 0


cdef int _put(Table* t, i64 code, i64 row) except -1 nogil:
    cdef i64 i, cap
    cdef i64* keys
    cdef i64* rows
    if 2 * (t.used + 1) > t.cap:  # rebuild without the deleted slots
        keys, rows, cap = t.keys, t.rows, t.cap
        _alloc_table(t, max(16, 4 * (t.live + 1)))
        for i in range(cap):
            if keys[i] >= 0:
                _put(t, keys[i], rows[i])
        free(keys)
        free(rows)
    i = _slot(t, code)
    if t.keys[i] != code:
        if t.keys[i] == -1:
            t.used += 1
        t.live += 1
        t.keys[i] = code
    t.rows[i] = row
    return 0


cdef inline void _delete(Table* t, i64 code) noexcept nogil:
    cdef i64 i = _slot(t, code)
    if t.keys[i] == code:
        t.keys[i] = -2
        t.live -= 1


cdef int _append(Lists* ls, i64 u, i64 w) except -1 nogil:
    cdef i64* grown
    if ls.count[u] == ls.cap[u]:
        grown = <i64*> realloc(ls.items[u], (2 * ls.cap[u] + 4) * sizeof(i64))
        if grown == NULL:
            with gil:
                raise MemoryError("region merging: out of memory for the neighbour lists")
        ls.items[u], ls.cap[u] = grown, 2 * ls.cap[u] + 4
    ls.items[u][ls.count[u]] = w
    ls.count[u] += 1
    return 0


cdef inline i64 _code(i64 n, i64 u, i64 v) noexcept nogil:
    return u * n + v if u < v else v * n + u


cdef i64 _compact(Lists* ls, const Table* t, i64 n, i64 u) noexcept nogil:
    """Drop the regions ``u`` no longer borders from its list; the number left."""
    cdef i64 j, k = 0, w
    for j in range(ls.count[u]):
        w = ls.items[u][j]
        if _find(t, _code(n, u, w)) >= 0:
            ls.items[u][k] = w
            k += 1
    ls.count[u] = k
    return k


cdef class _Graph:
    """The borders of a region adjacency graph, with the merge step shared by both walks."""

    cdef Table table
    cdef Lists lists
    cdef Heap heap
    cdef i64 n

    def __cinit__(self, i64 n, const i64[:, ::1] pairs):
        cdef i64 e, u, v
        self.n = n
        self.lists.items = <i64**> malloc(max(n, 1) * sizeof(i64*))
        self.lists.count = <i64*> malloc(max(n, 1) * sizeof(i64))
        self.lists.cap = <i64*> malloc(max(n, 1) * sizeof(i64))
        if self.lists.items == NULL or self.lists.count == NULL or self.lists.cap == NULL:
            raise MemoryError("region merging: out of memory for the neighbour lists")
        for u in range(n):
            self.lists.items[u], self.lists.count[u], self.lists.cap[u] = NULL, 0, 0
        _alloc_table(&self.table, max(16, 4 * pairs.shape[0]))
        for e in range(pairs.shape[0]):  # a pair given twice keeps its last row, as a dict would
            u, v = pairs[e, 0], pairs[e, 1]
            if _find(&self.table, _code(n, u, v)) < 0:
                _append(&self.lists, u, v)
                _append(&self.lists, v, u)
            _put(&self.table, _code(n, u, v), e)

    def __dealloc__(self):
        cdef i64 u
        if self.lists.items != NULL:
            for u in range(self.n):
                free(self.lists.items[u])
        free(self.lists.items)
        free(self.lists.count)
        free(self.lists.cap)
        free(self.table.keys)
        free(self.table.rows)
        free(self.heap.data)

    cdef int absorb(self, double[:, ::1] acc, i64 keep, i64 gone) except -1 nogil:
        """Move ``gone``'s borders to ``keep`` (a border both had: its sums added into keep's row)."""
        cdef i64 j, w, e, row, c, n = self.n
        _delete(&self.table, _code(n, keep, gone))
        for j in range(_compact(&self.lists, &self.table, n, gone)):
            w = self.lists.items[gone][j]
            e = _find(&self.table, _code(n, gone, w))
            _delete(&self.table, _code(n, gone, w))
            row = _find(&self.table, _code(n, keep, w))
            if row >= 0:
                for c in range(acc.shape[1]):
                    acc[row, c] += acc[e, c]
            else:
                _put(&self.table, _code(n, keep, w), e)
                _append(&self.lists, keep, w)
                _append(&self.lists, w, keep)
        self.lists.count[gone] = 0
        return 0


cdef inline double _mean_key(const double[:, ::1] acc, const double[::1] size, i64 e, i64 u, i64 v, double penalty,
                             double ref, double min_size) noexcept nogil:
    cdef double small = size[v] if size[v] < size[u] else size[u]
    cdef double k = acc[e, 1] / acc[e, 0] - penalty * sqrt(ref / small)
    return k - (1.0 if small < min_size else 0.0)


cdef struct Key:  # what a key reads besides the borders, the region sizes and means and the coefficients
    bint learned
    double penalty
    double ref
    double total
    double partition
    double min_size
    double colour_scale
    double texture_scale
    double cap


cdef inline double _learned_key(const double[:, ::1] acc, const double[::1] size, const double[:, ::1] means,
                                const double[::1] w, const Key* key, i64 e, i64 u, i64 v) noexcept nogil:
    cdef double small = size[v] if size[v] < size[u] else size[u]
    cdef double colour = 0.0, texture = 0.0, d, z
    cdef i64 c
    for c in range(means.shape[1]):
        d = means[u, c] - means[v, c]
        if c < 3:
            colour += d * d
        else:
            texture += d * d
    colour = sqrt(colour) / key.colour_scale
    texture = sqrt(texture) / key.texture_scale
    z = (w[6] + w[0] * (acc[e, 1] / acc[e, 0]) + w[1] * (acc[e, 2] / acc[e, 0])
         + w[2] * (colour if colour < key.cap else key.cap) + w[3] * (texture if texture < key.cap else key.cap)
         + w[4] * (log10(small / key.total) / 4.0 + 1.0) + w[5] * (log10(acc[e, 0]) / 3.0))
    z = 1.0 / (1.0 + exp(-z))
    if key.partition != 0.0:
        z = z + key.partition * (acc[e, 3] / acc[e, 0])
    return z - (1.0 if small < key.min_size else 0.0)


cdef inline double _key(const Key* key, const double[:, ::1] acc, const double[::1] size,
                        const double[:, ::1] means, const double[::1] w, i64 e, i64 u, i64 v) noexcept nogil:
    if key.learned:
        return _learned_key(acc, size, means, w, key, e, u, v)
    return _mean_key(acc, size, e, u, v, key.penalty, key.ref, key.min_size)


cdef int _entry(_Graph g, const Key* key, const double[:, ::1] acc, const double[::1] size,
                const double[:, ::1] means, const double[::1] w, const i64[::1] version, i64 u, i64 v) except -1 nogil:
    """Push the entry of border (u, v): (key, lo, hi[, versions of lo and hi for the learned key])."""
    cdef Entry ent
    ent.k = _key(key, acc, size, means, w, _find(&g.table, _code(g.n, u, v)), u, v)
    ent.u, ent.v = min(u, v), max(u, v)
    ent.vu, ent.vv = 0, 0
    if key.learned:
        ent.vu, ent.vv = version[ent.u], version[ent.v]
    _push(&g.heap, ent)
    return 0


cdef i64 _walk(i64 n, const i64[:, ::1] pairs, const Key* key, double[:, ::1] acc, double[::1] size,
               double[:, ::1] sums, double[:, ::1] means, const double[::1] w, i64[:, ::1] mv,
               double[::1] hv) except -1:
    """The greedy walk of both keys; the number of merges written to ``mv``/``hv``."""
    cdef _Graph g = _Graph(n, pairs)
    cdef Entry top_entry
    cdef i64 u, v, keep, gone, e, j, c, m = 0
    cdef double top = -np.inf
    version_array = np.zeros(max(n, 1), dtype=np.int64)
    cdef i64[::1] version = version_array
    with nogil:
        for u in range(n):
            for j in range(g.lists.count[u]):
                if u < g.lists.items[u][j]:
                    _entry(g, key, acc, size, means, w, version, u, g.lists.items[u][j])
        while g.heap.size:
            top_entry = _pop(&g.heap)
            u, v = top_entry.u, top_entry.v
            e = _find(&g.table, _code(n, u, v))
            if e < 0:  # u or v is gone, or they merged
                continue
            if key.learned:  # stale entry: a region changed since it was keyed
                if top_entry.vu != version[u] or top_entry.vv != version[v]:
                    continue
            elif fabs(_mean_key(acc, size, e, u, v, key.penalty, key.ref, key.min_size) - top_entry.k) > 1e-12:
                continue  # stale entry: its key moved
            keep, gone = u, v  # entries hold (lo, hi)
            size[keep] += size[gone]
            if key.learned:
                for c in range(sums.shape[1]):
                    sums[keep, c] += sums[gone, c]
                    means[keep, c] = sums[keep, c] / size[keep]
            g.absorb(acc, keep, gone)
            version[keep] += 1
            for j in range(_compact(&g.lists, &g.table, n, keep)):
                _entry(g, key, acc, size, means, w, version, keep, g.lists.items[keep][j])
            if top_entry.k > top:
                top = top_entry.k
            mv[m, 0], mv[m, 1], hv[m] = keep, gone, top
            m += 1
    return m


def _merges(i64 n, const i64[:, ::1] pairs, Key key, double[:, ::1] acc, double[::1] size, double[:, ::1] sums,
            double[:, ::1] means, const double[::1] weights):
    merges = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    heights = np.empty(max(n - 1, 0), dtype=np.float64)
    m = _walk(n, pairs, &key, acc, size, sums, means, weights, merges, heights)
    return merges[:m], heights[:m]


def mean_merge(i64 n, const i64[:, ::1] pairs, double[:, ::1] acc, double[::1] size, double penalty, double ref,
               double min_size):
    """Greedy merging by the mean of border quantity 0 (``acc`` columns: length, length * quantity...).

    ``acc`` and ``size`` are updated in place. Returns (merges, heights) as :meth:`RegionMerger.run` does.
    """
    cdef Key key = Key(False, penalty, ref, 0.0, 0.0, min_size, 0.0, 0.0, 0.0)
    none = np.zeros((1, 1))
    return _merges(n, pairs, key, acc, size, none, none, np.zeros(7))


def learned_merge(i64 n, const i64[:, ::1] pairs, double[:, ::1] acc, double[::1] size, double[:, ::1] sums,
                  double[:, ::1] means, const double[::1] weights, double total, double partition, double min_size,
                  double colour_scale, double texture_scale, double cap):
    """Greedy merging by the learned criterion (``weights``: the six pair-feature coefficients, then the bias).

    ``acc`` columns: length, length * (vote, gradient[, partition separation]); ``sums``/``means``: region sums
    and means of Lab colour (3 columns) and texture energy, their distances divided by ``colour_scale`` and
    ``texture_scale`` and capped at ``cap``. ``acc``, ``size``, ``sums`` and ``means`` are updated in place.
    Returns (merges, heights) as the batched :meth:`RegionMerger.run` does.
    """
    cdef Key key = Key(True, 0.0, 0.0, total, partition, min_size, colour_scale, texture_scale, cap)
    return _merges(n, pairs, key, acc, size, sums, means, weights)
