# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Scores of a forest of binary decision trees (LightGBM's numerical splits), compiled.

Each row goes down every tree in turn (:func:`forest_scores` one row at a time, :func:`lockstep_scores` blocks of
rows in lockstep) and the leaf values are added in the
trees' order, starting from 0.0 — the order LightGBM adds them in, so the
sums are its sums. A split reads feature ``f`` as a double and sends the row
left when ``x[f] <= threshold``, except where LightGBM makes another choice:
a value of magnitude at most ``1e-35f`` is read as 0.0 (LightGBM drops such
values when it converts a dense row); NaN is read as 0.0 unless the split's
missing type is NaN; and a split whose missing type is Zero (a value within
``1e-35f`` of 0) or NaN (a NaN) sends its missing values to its default side.

The node arrays are the trees' own, concatenated: ``feature``,
``threshold``, ``missing`` (0 none, 1 zero, 2 NaN), ``default_left`` and
``left``/``right`` children per internal node, where a child ``c >= 0`` is the
internal node ``c`` (an index into the concatenated arrays) and ``c < 0`` the
leaf ``-c - 1`` of ``leaf_value``; ``root[t]`` is tree ``t``'s first node, or
``-leaf - 1`` for a tree that is a single leaf.
"""

from libc.math cimport exp, fabs, isnan
from libc.stdint cimport int8_t, int32_t

import numpy as np

ctypedef fused real:
    float
    double

#: LightGBM's kZeroThreshold (a float constant, 1e-35f, read as a double).
cdef double ZERO = <double> <float> 1e-35


def forest_scores(const real[:, :] rows, const int32_t[::1] root, const int32_t[::1] feature,
                  const double[::1] threshold, const int8_t[::1] missing, const int8_t[::1] default_left,
                  const int32_t[::1] left, const int32_t[::1] right, const double[::1] leaf_value,
                  double sigmoid=0.0):
    """Sum over the trees of each row's leaf value, (n,) float64 (the forest's raw score); with ``sigmoid`` s > 0,
    ``1 / (1 + exp(-s * score))`` instead (LightGBM's output of a binary or cross-entropy model, C's ``exp``)."""
    cdef Py_ssize_t n = rows.shape[0], n_trees = root.shape[0], r, t
    cdef int32_t node
    cdef int8_t kind
    cdef double x, total
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] res = out
    with nogil:
        for r in range(n):
            total = 0.0
            for t in range(n_trees):
                node = root[t]
                while node >= 0:
                    x = rows[r, feature[node]]
                    if -ZERO <= x <= ZERO:
                        x = 0.0
                    kind = missing[node]
                    if isnan(x) and kind != 2:
                        x = 0.0
                    if (kind == 1 and x == 0.0) or (kind == 2 and isnan(x)):
                        node = left[node] if default_left[node] else right[node]
                    elif x <= threshold[node]:
                        node = left[node]
                    else:
                        node = right[node]
                total += leaf_value[-node - 1]
            res[r] = 1.0 / (1.0 + exp(-(sigmoid * total))) if sigmoid > 0.0 else total
    return out


cdef enum:
    BLOCK = 64  # rows walked in lockstep through each tree by lockstep_scores


def _read_as_is(const real[:, :] rows):
    """True when every value is one a split reads unchanged: of magnitude above ``1e-35f``, or a zero (a zero of
    either sign compares with a threshold as 0.0 does). Scanned along the array's contiguous axis, without the GIL
    (the detector predicts in threads)."""
    cdef const real[:, :] by_column = rows if rows.strides[0] <= rows.strides[1] else rows.T
    cdef Py_ssize_t n = by_column.shape[0], k = by_column.shape[1], i, j
    cdef double x
    cdef bint as_is = True
    with nogil:
        for j in range(k):
            for i in range(n):
                x = by_column[i, j]
                if not (fabs(x) > ZERO or x == 0.0):
                    as_is = False
                    break
            if not as_is:
                break
    return as_is


def lockstep_scores(rows, const int32_t[::1] root, const int32_t[::1] depth, const int32_t[::1] feature,
                    const double[::1] threshold, const int32_t[::1] child, const double[::1] value,
                    double sigmoid=0.0):
    """:func:`forest_scores` of a forest whose splits all have missing type none, walked without branches.

    Here the leaves are nodes too: a leaf has threshold +inf and both children itself, so every row of a
    block of rows takes exactly ``depth[t]`` steps through tree ``t`` (``child[2 * node + (x > threshold)]``),
    the rows' walks interleaved. A value that is NaN or of magnitude at most ``1e-35f`` is read as 0.0, as
    LightGBM reads it at a split of missing type none: when the rows hold such values (they seldom do) the walk
    reads a copy with them set to 0.0, so no step tests for them. ``value[node]`` is a leaf's value. The sums are
    the same as :func:`forest_scores`' (the same leaf values added in the same tree order).
    """
    if not _read_as_is(rows):  # NaN too: abs(NaN) > t is False
        rows = np.where(np.abs(rows) > rows.dtype.type(ZERO), rows, rows.dtype.type(0.0))
    return _lockstep(rows, root, depth, feature, threshold, child, value, sigmoid)


def _lockstep(const real[:, :] rows, const int32_t[::1] root, const int32_t[::1] depth, const int32_t[::1] feature,
              const double[::1] threshold, const int32_t[::1] child, const double[::1] value, double sigmoid):
    """The walk of :func:`lockstep_scores` over rows that hold no value to be read as 0.0 but zeros."""
    cdef Py_ssize_t n = rows.shape[0], n_trees = root.shape[0], start, m, i, t, d
    cdef int32_t nodes[BLOCK]
    cdef double acc[BLOCK]
    cdef int32_t nd
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] res = out
    with nogil:
        start = 0
        while start < n:
            m = min(<Py_ssize_t> BLOCK, n - start)
            for i in range(m):
                acc[i] = 0.0
            for t in range(n_trees):
                for i in range(m):
                    nodes[i] = root[t]
                for d in range(depth[t]):
                    for i in range(m):
                        nd = nodes[i]
                        nodes[i] = child[2 * nd + (rows[start + i, feature[nd]] > threshold[nd])]
                for i in range(m):
                    acc[i] += value[nodes[i]]
            for i in range(m):
                res[start + i] = 1.0 / (1.0 + exp(-(sigmoid * acc[i]))) if sigmoid > 0.0 else acc[i]
            start += m
    return out
