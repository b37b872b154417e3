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
"""

import numpy as np

from libc.math cimport INFINITY, log


cdef inline double _f(double v) nogil:
    return v * log(v) if v > 0 else 0.0


cdef inline double _row_mass(double[:, ::1] P, Py_ssize_t c, double m) nogil:
    cdef Py_ssize_t d
    cdef double row = 0.0
    for d in range(P.shape[1]):
        row = row + P[c, d]
    return row / m


def climb_sweep(long long[::1] labels, long long[::1] count, double[:, ::1] P, double[::1] R,
                double[:, ::1] FP, double[::1] FR, const long long[::1] order, const long long[::1] indptr,
                const long long[::1] indices, const double[::1] data, const double[::1] fdata, int n_blocks):
    """Visit the objects in ``order``; move each to the cluster of largest gain when it exceeds 1e-12.

    ``labels``, ``count`` (objects per cluster), ``P``, ``R`` and their f values ``FP``, ``FR`` are updated in
    place; Q is given as CSR (``indptr``, ``indices``, ``data``, and ``fdata`` = f(data)) without explicit zeros.
    A zero of P adds f(q_d) itself, and f of P and R are read from ``FP`` and ``FR``: the same numbers as
    computing them afresh, with a logarithm only where P is non-zero. A cluster's last object stays, and so does an
    object without mass. Ties go to the smallest cluster, staying counting as a gain of 0. Returns the moves.
    """
    cdef Py_ssize_t k = P.shape[0], n = order.shape[0]
    cdef Py_ssize_t i, j, c, d, a, b, x, start, end
    cdef double m = n_blocks, rho, leave, g, best
    cdef long long moves = 0
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
            leave = -m * (_f(R[a] - rho) - FR[a])
            for j in range(start, end):
                d = indices[j]
                leave = leave + (_f(P[a, d] - data[j]) - FP[a, d])
            best, b = -INFINITY, a
            for c in range(k):
                if c == a:
                    g = 0.0
                else:
                    g = leave - m * (_f(R[c] + rho) - FR[c])
                    for j in range(start, end):
                        d = indices[j]
                        if P[c, d] == 0.0:
                            g = g + fdata[j]
                        else:
                            g = g + (_f(P[c, d] + data[j]) - FP[c, d])
                if g > best:
                    best, b = g, c
            if best <= 1e-12:
                continue
            for j in range(start, end):
                d = indices[j]
                P[a, d] = P[a, d] - data[j]
                P[b, d] = P[b, d] + data[j]
                FP[a, d] = _f(P[a, d])
                FP[b, d] = _f(P[b, d])
            R[a] = _row_mass(P, a, m)
            R[b] = _row_mass(P, b, m)
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
