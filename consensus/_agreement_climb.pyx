# cython: boundscheck=False, wraparound=False, cdivision=True, language_level=3
"""CAP's hill climbing (:mod:`segensemble.consensus.agreement`): one sweep of single-object moves.

P is the (k, D) table of the moving clustering's clusters against the fixed
side's clusters of every block, R_c = sum_d P_cd / m its row masses per block
(m blocks), and the climbed objective is ``sum_c h(P_c)`` with
``h(r) = sum_d r_d log r_d - m R log R``. Object x (row q of Q) touches only
the columns S where q is non-zero, so moving it from cluster a to cluster c
changes the objective by

    G(c) = sum_{d in S} [f(P_cd + q_d) - f(P_cd)] - m [f(R_c + rho) - f(R_c)]
           + sum_{d in S} [f(P_ad - q_d) - f(P_ad)] - m [f(R_a - rho) - f(R_a)]

(f(v) = v log v, 0 for v <= 0; rho = sum(q) / m): O(k |S|) per object
instead of the O(k D) of evaluating h on every row.

Most targets cannot gain, and their logarithms are spared: f is convex with
f'(v) = log v + 1 and f'' = 1 / v, so for v > 0

    f(v + q) - f(v) <= q (log v + 1) + q^2 / v        f(v + q) - f(v) >= q (log v + 1)

with log v = f(v) / v read from the tables. The first bounds the first sum
of G(c), the second the row-mass term, from above; a target whose bound
(plus a tolerance far above the rounding of either sum) is below the best
gain found so far is skipped, and every other one is evaluated exactly as
before, in the same order: the same moves, the same numbers. The table is
kept transposed, (D, k), so the bounds of all targets read a column's
contiguous row.
"""

import numpy as np

from libc.math cimport INFINITY, fabs, log


cdef inline double _f(double v) nogil:
    return v * log(v) if v > 0 else 0.0


cdef inline double _column_mass(double[:, ::1] PT, Py_ssize_t c, double m) nogil:
    cdef Py_ssize_t d
    cdef double row = 0.0
    for d in range(PT.shape[0]):
        row = row + PT[d, c]
    return row / m


def climb_sweep(long long[::1] labels, long long[::1] count, double[:, ::1] PT, double[::1] R,
                double[:, ::1] FPT, double[::1] FR, const long long[::1] order, const long long[::1] indptr,
                const long long[::1] indices, const double[::1] data, const double[::1] fdata, int n_blocks,
                bint prune=True):
    """Visit the objects in ``order``; move each to the cluster of largest gain when it exceeds 1e-12.

    ``labels``, ``count`` (objects per cluster), ``PT`` (P transposed, (D, k)), ``R`` and their f values
    ``FPT``, ``FR`` are updated in place; Q is given as CSR (``indptr``, ``indices``, ``data``, and ``fdata`` =
    f(data)) without explicit zeros, each row's columns in increasing order. A zero of P adds f(q_d) itself, and f
    of P and R are read from ``FPT`` and ``FR``: the same numbers as computing them afresh, with a logarithm only
    where P is non-zero. A cluster's last object stays, and so does an object without mass. Ties go to the
    smallest cluster, staying counting as a gain of 0. ``prune=False`` evaluates every target (the same moves:
    a check and a baseline). Returns the moves.
    """
    cdef Py_ssize_t k = PT.shape[1], n = order.shape[0]
    cdef Py_ssize_t i, j, c, d, a, b, x, start, end
    cdef double m = n_blocks, rho, frho, leave, g, best, p, q, u
    cdef long long moves = 0
    bound_buffer, scale_buffer = np.empty(k), np.empty(k)
    cdef double[::1] bound = bound_buffer, scale = scale_buffer
    with nogil:
        for i in range(n):
            x = order[i]
            a = labels[x]
            start, end = indptr[x], indptr[x + 1]
            if count[a] == 1 or start == end:
                continue
            rho = 0.0
            for j in range(start, end):
                rho = rho + data[j]
            rho = rho / m
            frho = _f(rho)
            leave = -m * (_f(R[a] - rho) - FR[a])
            for j in range(start, end):
                d = indices[j]
                leave = leave + (_f(PT[d, a] - data[j]) - FPT[d, a])
            if prune:  # every target's upper bound, and the magnitude of the numbers its exact gain adds up
                for c in range(k):
                    if R[c] > 0:
                        u = -m * rho * (FR[c] / R[c] + 1.0)
                    else:  # exactly (a negative R is a sum's rounding)
                        u = -m * (frho if R[c] == 0 else _f(R[c] + rho))
                    bound[c] = leave + u
                    scale[c] = fabs(leave) + fabs(u) + 2.0 * m * fabs(FR[c])
                for j in range(start, end):
                    d = indices[j]
                    q = data[j]
                    for c in range(k):
                        p = PT[d, c]
                        if p > 0.0:
                            u = q * (FPT[d, c] + q) / p + q
                        else:  # exactly (a negative P is a sum's rounding)
                            u = fdata[j] if p == 0.0 else _f(p + q)
                        bound[c] = bound[c] + u
                        scale[c] = scale[c] + fabs(u) + 2.0 * fabs(FPT[d, c])
            best, b = 0.0, a
            for c in range(k):
                if c == a or (prune and bound[c] + 1e-12 * scale[c] < best):
                    continue
                g = leave - m * (_f(R[c] + rho) - FR[c])
                for j in range(start, end):
                    d = indices[j]
                    if PT[d, c] == 0.0:
                        g = g + fdata[j]
                    else:
                        g = g + (_f(PT[d, c] + data[j]) - FPT[d, c])
                if g > best:
                    best, b = g, c
            if best <= 1e-12:
                continue
            for j in range(start, end):
                d = indices[j]
                PT[d, a] = PT[d, a] - data[j]
                PT[d, b] = PT[d, b] + data[j]
                FPT[d, a] = _f(PT[d, a])
                FPT[d, b] = _f(PT[d, b])
            R[a] = _column_mass(PT, a, m)
            R[b] = _column_mass(PT, b, m)
            FR[a] = _f(R[a])
            FR[b] = _f(R[b])
            count[a] -= 1
            count[b] += 1
            labels[x] = b
            moves += 1
    return moves


def xlogx(const double[::1] values):
    """v log v of every value (0 where v <= 0), with the logarithm :func:`climb_sweep` uses."""
    cdef Py_ssize_t i
    out = np.empty(values.shape[0])
    cdef double[::1] o = out
    for i in range(values.shape[0]):
        o[i] = _f(values[i])
    return out
