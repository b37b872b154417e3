# cython: boundscheck=False, wraparound=False, cdivision=True, language_level=3
"""BOEM's moves: passes of each object's best move, or the steepest descent without re-scoring every object.

Passes visit the objects in order; each makes its best move (the cluster
whose gain is smallest, ties to the smallest) when that lowers the cost,
and passes repeat until one makes no move: O(nnz(H) K) per pass.

The steepest descent makes the best move of all objects each time. The gain of moving object i (weight w_i) from its cluster a to cluster c,
scaled by the number of members m (``m * delta`` of :class:`BOEM`), is

    G_i(c) = w_i (Q_i(c) - Q_i(a) - m w_i),   Q_i(c) = m size_c - 2 A_i(c),

with A_i(c) = sum over object i's incidence entries h_{i,col} of
N[col, c] = sum_{j in c} w_j h_{j,col}. Moving object v (weight w_v) out
of cluster a into b changes Q_i only in columns a and b, each by at most
m w_v in absolute value (the agreement of i and v lies between 0 and m), so every
object's best gain moves by at most 2 m w_i w_v. Every object keeps the
exact best gain it had when last scored; with W the summed weight of the
moves since the start, ``key_i - 2 m w_i (W - W_i)`` is a lower bound of
its best gain now. The objects sit in heaps of weight classes (powers of 2,
bounded by the class's largest weight, so that order within a heap does not
change as W grows); a move is chosen by scoring exactly the objects whose
bound could still beat the best exact gain found, in the order of their
bounds, until none can: the same move as scoring every object (the smallest
gain, ties to the smallest object, then the smallest cluster). The moved
object is re-scored at once (its own cluster changed), and in fixed-K runs
so is the lone object of a cluster another object joins (it may move again).

With members that abstain (``col_member`` given: the member of every
incidence column), m size_c becomes the sum, over the members that label
object i, of the weight of cluster c's objects that member labels
(S[j, c]), and m w_i becomes m_i w_i with m_i those members' number: each
member's disagreements count on the pairs it labels, the cost of
:func:`~segensemble.consensus.correlation.correlation_cost`. A move of v
still changes Q_i by at most m w_v, so the bounds hold as they are.
Objects that start unlabelled (``z = -1``) are first placed, one by one in
index order, in the open cluster whose Q_i is smallest given those placed
before (ties: the smallest cluster; never a new one).

With 0/1 incidence entries and whole weights every quantity is a whole
number below 2^53, so the gains, bounds and comparisons are exact.
"""

import numpy as np

from segensemble.errors import InputError

from libc.math cimport INFINITY, floor, log2
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

ctypedef long long i64


cdef struct Entry:
    double key      # the order in its heap: gain + 2 m wmax_class W_scored
    double gain     # the exact best gain when scored
    double scored   # W when scored
    i64 obj
    i64 stamp


cdef struct Heap:
    Entry* items
    i64 size
    i64 cap
    double wmax


cdef inline bint _less(Entry a, Entry b) nogil:
    return a.key < b.key or (a.key == b.key and a.obj < b.obj)


cdef int _push(Heap* h, Entry e) noexcept nogil:
    cdef i64 i, p
    cdef Entry* grown
    if h.size == h.cap:
        grown = <Entry*>realloc(h.items, (2 * h.cap + 16) * sizeof(Entry))
        if grown == NULL:
            return -1
        h.items, h.cap = grown, 2 * h.cap + 16
    i = h.size
    h.size += 1
    while i > 0:
        p = (i - 1) // 2
        if not _less(e, h.items[p]):
            break
        h.items[i] = h.items[p]
        i = p
    h.items[i] = e
    return 0


cdef void _pop(Heap* h) noexcept nogil:
    cdef i64 i = 0, c
    cdef Entry last
    h.size -= 1
    if h.size == 0:
        return
    last = h.items[h.size]
    while True:
        c = 2 * i + 1
        if c >= h.size:
            break
        if c + 1 < h.size and _less(h.items[c + 1], h.items[c]):
            c += 1
        if not _less(h.items[c], last):
            break
        h.items[i] = h.items[c]
        i = c
    h.items[i] = last


cdef bint _resized(void** p, size_t nbytes) noexcept nogil:
    """``p[0]`` reallocated to ``nbytes``; on failure the old block stays where it was. True when it worked."""
    cdef void* q = realloc(p[0], nbytes)
    if q == NULL:
        return False
    p[0] = q
    return True


cdef class _Descent:
    cdef const i64[::1] indptr
    cdef const i64[::1] indices
    cdef const double[::1] data
    cdef const double[::1] w
    cdef i64[::1] z
    cdef double m
    cdef bint fixed_k, abstains
    cdef const i64[::1] col_member
    cdef i64 n, n_cols, n_members, k, kcap, cap
    cdef double* Nt          # Nt[col * kcap + c]
    cdef double* Sm          # Sm[j * kcap + c]: the weight of cluster c's objects member j labels (abstaining only)
    cdef double* B           # the sum of Sm over the members labelling the object scored (abstaining only)
    cdef double* size
    cdef i64* count
    cdef i64* idsum
    cdef double* scratch
    cdef i64* stamp
    cdef i64* heap_of
    cdef Heap* heaps
    cdef int n_heaps
    cdef double W
    cdef double work, work_limit   # gain entries computed (row entries + 1, times clusters), and their bound

    def __cinit__(self):
        self.Nt = self.size = self.scratch = self.Sm = self.B = NULL
        self.count = self.idsum = self.stamp = self.heap_of = NULL
        self.heaps = NULL
        self.n_heaps = 0

    def __dealloc__(self):
        cdef int g
        free(self.Nt); free(self.size); free(self.scratch); free(self.Sm); free(self.B)
        free(self.count); free(self.idsum); free(self.stamp); free(self.heap_of)
        if self.heaps != NULL:
            for g in range(self.n_heaps):
                free(self.heaps[g].items)
            free(self.heaps)

    cdef int _grow(self, i64 kcap) except -1:
        """Room for ``kcap`` clusters (columns of Nt, entries of the cluster arrays), the old values kept."""
        if self.n_cols * kcap > (1 << 28):  # 2 GiB of float64
            raise MemoryError(f"BOEM: {self.n_cols:,} member clusters x {kcap:,} clusters exceed 2 GiB; use "
                              f"an integer n_clusters, or ccpivot or kcc")
        cdef double* Nt = <double*>malloc(max(self.n_cols * kcap, 1) * sizeof(double))
        cdef bint resized = (_resized(<void**>&self.size, kcap * sizeof(double))
                             and _resized(<void**>&self.count, kcap * sizeof(i64))
                             and _resized(<void**>&self.idsum, kcap * sizeof(i64))
                             and _resized(<void**>&self.scratch, kcap * sizeof(double))
                             and _resized(<void**>&self.B, kcap * sizeof(double)))
        if Nt == NULL or not resized:
            free(Nt)
            raise MemoryError("BOEM: no memory for the cluster tables")
        self.Nt = self._widened(self.Nt, Nt, self.n_cols, kcap)
        if self.abstains:
            Sm = <double*>malloc(max(self.n_members * kcap, 1) * sizeof(double))
            if Sm == NULL:
                raise MemoryError("BOEM: no memory for the cluster tables")
            self.Sm = self._widened(self.Sm, Sm, self.n_members, kcap)
        cdef i64 c
        for c in range(self.kcap, kcap):
            self.size[c] = 0.0
            self.count[c] = 0
            self.idsum[c] = 0
        self.kcap = kcap
        return 0

    cdef double* _widened(self, double* old, double* new, i64 rows, i64 kcap) noexcept nogil:
        """``new`` (rows x kcap) zeroed, with the rows x self.kcap values of ``old`` copied in; ``old`` freed."""
        cdef i64 r
        memset(new, 0, max(rows * kcap, 1) * sizeof(double))
        if old != NULL:
            for r in range(rows):
                memcpy(new + r * kcap, old + r * self.kcap, self.kcap * sizeof(double))
        free(old)
        return new

    cdef double _tables(self, i64 i) noexcept nogil:
        """A_i(c) into scratch and, with abstaining members, the sizes as those labelling i see them into B;
        returns the number of members labelling i (m without abstentions)."""
        cdef i64 c, t
        cdef double h
        cdef double* A = self.scratch
        cdef double* row
        for c in range(self.k):
            A[c] = 0.0
        for t in range(self.indptr[i], self.indptr[i + 1]):
            h = self.data[t]
            row = self.Nt + self.indices[t] * self.kcap
            for c in range(self.k):
                A[c] += h * row[c]
        if not self.abstains:
            return self.m
        for c in range(self.k):
            self.B[c] = 0.0
        for t in range(self.indptr[i], self.indptr[i + 1]):
            row = self.Sm + self.col_member[self.indices[t]] * self.kcap
            for c in range(self.k):
                self.B[c] += row[c]
        return <double>(self.indptr[i + 1] - self.indptr[i])

    cdef inline double _seen(self, i64 c) noexcept nogil:
        """m size_c, or with abstaining members its sum over those labelling the object last tabled."""
        return self.B[c] if self.abstains else self.m * self.size[c]

    cdef double _best(self, i64 i, i64* target) noexcept nogil:
        """Object i's smallest scaled gain over the clusters it may move to (+inf: none), its cluster in target."""
        cdef i64 a = self.z[i], c, first_empty = -1
        cdef double wi = self.w[i], best = INFINITY, g, own, mi
        cdef double* A = self.scratch
        target[0] = -1
        if self.fixed_k and self.count[a] <= 1:
            return INFINITY  # the move would empty its cluster
        self.work += <double>(self.indptr[i + 1] - self.indptr[i] + 1) * self.k
        mi = self._tables(i)
        own = self._seen(a) - 2.0 * A[a] + mi * wi
        for c in range(self.k):
            if c == a:
                continue
            if self.count[c] == 0:
                if self.fixed_k or first_empty >= 0:
                    continue  # an empty cluster: only the first stands for a new singleton, and not with fixed K
                first_empty = c
            g = wi * (self._seen(c) - 2.0 * A[c] - own)
            if g < best:
                best, target[0] = g, c
        return best

    cdef int _score(self, i64 i) except -1:
        """Score object i exactly and file it in its weight class's heap (a gain of +inf is not filed)."""
        cdef i64 target
        cdef double g = self._best(i, &target)
        cdef Entry e
        cdef int cls = self.heap_of[i]
        self._check_work()
        self.stamp[i] += 1
        if g == INFINITY:
            return 0
        e.key, e.gain, e.scored = g + 2.0 * self.m * self.heaps[cls].wmax * self.W, g, self.W
        e.obj, e.stamp = i, self.stamp[i]
        if _push(&self.heaps[cls], e) != 0:
            raise MemoryError("BOEM: no memory for the heaps of gains")
        return 0

    cdef void _shift(self, i64 v, i64 c, double sign) noexcept nogil:
        """Add object v to cluster c's tables (sign 1) or take it out (sign -1)."""
        cdef i64 t
        cdef double wv = sign * self.w[v]
        for t in range(self.indptr[v], self.indptr[v + 1]):
            self.Nt[self.indices[t] * self.kcap + c] += wv * self.data[t]
            if self.abstains:
                self.Sm[self.col_member[self.indices[t]] * self.kcap + c] += wv
        self.size[c] += wv
        self.count[c] += <i64>sign
        self.idsum[c] += <i64>sign * v

    cdef void _move(self, i64 v, i64 b) noexcept nogil:
        self._shift(v, self.z[v], -1.0)
        self._shift(v, b, 1.0)
        self.z[v] = b
        self.W += self.w[v]

    cdef int _place(self, i64 i) except -1:
        """Put the unplaced object i in the open cluster of smallest Q_i (ties: the smallest cluster)."""
        cdef i64 c, best_c = -1
        cdef double q, best = INFINITY
        self.work += <double>(self.indptr[i + 1] - self.indptr[i] + 1) * self.k
        self._check_work()
        self._tables(i)
        for c in range(self.k):
            if self.count[c] == 0:
                continue
            q = self._seen(c) - 2.0 * self.scratch[c]
            if best_c < 0 or q < best:
                best, best_c = q, c
        if best_c < 0:
            best_c = 0  # nothing placed yet: the first object opens cluster 0
        self._shift(i, best_c, 1.0)
        self.z[i] = best_c
        return 0

    def run(self, i64 max_moves, double tolerance):
        cdef i64 moves = 0, i, c, best_obj, best_c, target, lone
        cdef double best_val, g, lb, top_lb
        cdef int cls, top
        cdef Entry e
        for i in range(self.n):
            self._score(i)
        while moves < max_moves:
            best_val, best_obj, best_c = INFINITY, -1, -1
            while True:
                top, top_lb = -1, INFINITY
                for cls in range(self.n_heaps):  # the smallest bound (ties: the smallest object) of all heap tops
                    while self.heaps[cls].size and self.heaps[cls].items[0].stamp != self.stamp[
                            self.heaps[cls].items[0].obj]:
                        _pop(&self.heaps[cls])  # an entry superseded by a later score
                    if self.heaps[cls].size == 0:
                        continue
                    e = self.heaps[cls].items[0]
                    lb = e.gain - 2.0 * self.m * self.heaps[cls].wmax * (self.W - e.scored)
                    if top < 0 or lb < top_lb or (lb == top_lb and e.obj < self.heaps[top].items[0].obj):
                        top, top_lb = cls, lb
                if top < 0:
                    break
                e = self.heaps[top].items[0]
                if top_lb > best_val or (top_lb == best_val and e.obj >= best_obj):
                    break  # no object left whose gain could beat (or tie with a smaller index) the best found
                _pop(&self.heaps[top])
                g = self._best(e.obj, &target)
                self._check_work()
                self.stamp[e.obj] += 1
                if g != INFINITY:
                    e.key, e.gain, e.scored = g + 2.0 * self.m * self.heaps[top].wmax * self.W, g, self.W
                    e.stamp = self.stamp[e.obj]
                    if _push(&self.heaps[top], e) != 0:
                        raise MemoryError("BOEM: no memory for the heaps of gains")
                    if g < best_val or (g == best_val and e.obj < best_obj):
                        best_val, best_obj, best_c = g, e.obj, target
            if best_obj < 0 or not best_val < -tolerance:
                break
            lone = self.idsum[best_c] if self.fixed_k and self.count[best_c] == 1 else -1
            if self._apply(best_obj, best_c):  # a singleton move became possible again: every gain may drop
                for i in range(self.n):
                    self._score(i)
            moves += 1
            self._score(best_obj)
            if lone >= 0:
                self._score(lone)  # its cluster no longer holds it alone: it may move
        return moves

    cdef int _check_work(self) except -1:
        if self.work > self.work_limit:
            raise InputError(f"BOEM: {self.work:.1e} gain entries scored with {self.k:,} clusters open, above the "
                             f"limit of {self.work_limit:.1e} (half a minute on one core here; every object is "
                             f"scored against every open cluster, and with n_clusters='auto' every move may open a "
                             f"new singleton); give a smaller integer n_clusters, or use ccpivot or kcc")
        return 0

    cdef bint _has_empty(self) noexcept nogil:
        cdef i64 c
        for c in range(self.k):
            if self.count[c] == 0:
                return True
        return False

    cdef int _apply(self, i64 v, i64 b) except -1:
        """Move object v to cluster b; with 'auto', keep one empty cluster (up to cap). 1 when an empty cluster
        appeared where there was none (cap reached before): a move to a new singleton is possible again."""
        cdef bint had_empty = (not self.fixed_k) and self._has_empty(), has_empty
        self._move(v, b)
        if self.fixed_k:
            return 0
        has_empty = self._has_empty()
        if not has_empty and self.k < self.cap:  # a new empty cluster stands for the next new singleton
            if self.k == self.kcap:
                self._grow(2 * self.kcap)
            self.k += 1
        return 1 if has_empty and not had_empty else 0

    def passes(self, i64 max_moves, double tolerance):
        """Each object in turn makes its best move if it lowers the cost; passes until one makes no move."""
        cdef i64 moves = 0, i, target
        cdef bint moved = True
        cdef double g
        while moved and moves < max_moves:
            moved = False
            for i in range(self.n):
                g = self._best(i, &target)
                self._check_work()
                if g < -tolerance:
                    self._apply(i, target)
                    moves += 1
                    moved = True
                    if moves >= max_moves:
                        break
        return moves


def best_moves(indptr, indices, data, w, double m, z, int k, bint fixed_k, i64 cap, i64 max_moves,
               double tolerance, bint steepest=False, double work_limit=INFINITY, col_member=None):
    """BOEM's moves from labels ``z`` (changed in place, clusters 0..k-1): the number of moves made.

    ``steepest``: the best move of all objects each time (the bounds and heaps above); otherwise passes over the
    objects in order, each making its own best move when it lowers the cost, until a pass makes none.
    ``work_limit``: the most gain entries (each object's incidence entries + 1, times the open clusters, per
    scoring) to compute before giving up with an :class:`~segensemble.errors.InputError`.

    ``indptr``, ``indices``, ``data``: the incidence matrix (CSR, one row per object), ``w`` the objects'
    weights, ``m`` the number of members; with ``fixed_k`` no move empties a cluster or fills an empty one,
    otherwise one empty cluster stands for a new singleton and clusters are added up to ``cap``. A move is made
    while its scaled gain ``m * delta`` is below ``-tolerance``. ``col_member``: with members that abstain, the
    member of every incidence column (each row then holds one 0/1 entry per member labelling the object). Objects
    with ``z = -1`` are placed before any move (module docstring).
    """
    cdef _Descent d = _Descent()
    cdef i64 i, t, n = len(w), wclass
    cdef double wmax = 0.0
    d.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    d.indices = np.ascontiguousarray(indices, dtype=np.int64)
    d.data = np.ascontiguousarray(data, dtype=np.float64)
    d.w = np.ascontiguousarray(w, dtype=np.float64)
    d.z = z
    d.m, d.fixed_k, d.n, d.k, d.cap, d.W = m, fixed_k, n, k, max(cap, k), 0.0
    d.work, d.work_limit = 0.0, work_limit
    d.n_cols = int(indices.max()) + 1 if len(indices) else 0
    d.abstains = col_member is not None
    d.col_member = np.ascontiguousarray(col_member if d.abstains else np.zeros(0), dtype=np.int64)
    d.n_members = int(np.max(d.col_member, initial=-1)) + 1
    d.kcap = 0
    d._grow(max(k + (0 if fixed_k else 1), 1))
    for i in range(n):
        if z[i] >= 0:
            d._shift(i, z[i], 1.0)
    for i in range(n):
        if z[i] < 0:
            d._place(i)
    if not steepest:
        return d.passes(max_moves, tolerance)
    d.stamp = <i64*>malloc(max(n, 1) * sizeof(i64))
    d.heap_of = <i64*>malloc(max(n, 1) * sizeof(i64))
    if d.stamp == NULL or d.heap_of == NULL:
        raise MemoryError("BOEM: no memory for the heaps of gains")
    for i in range(n):  # class g holds the weights in (2^(g-1), 2^g] (class 0: up to 1)
        d.stamp[i] = 0
        wclass = 0 if d.w[i] <= 1.0 else <i64>floor(log2(d.w[i]) - 1e-12) + 1
        if wclass > 1000:
            raise ValueError(f"BOEM: an object weight of {d.w[i]} (at most 2^1000 is supported)")
        d.heap_of[i] = wclass
        wmax = max(wmax, <double>wclass)
    d.n_heaps = <int>wmax + 1
    d.heaps = <Heap*>malloc(d.n_heaps * sizeof(Heap))
    if d.heaps == NULL:
        raise MemoryError("BOEM: no memory for the heaps of gains")
    memset(d.heaps, 0, d.n_heaps * sizeof(Heap))
    for i in range(d.n_heaps):
        d.heaps[i].wmax = 2.0 ** i
    return d.run(max_moves, tolerance)
