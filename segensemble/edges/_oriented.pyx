# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The per-pixel statistics of a channel's oriented responses, compiled (one pass instead of NumPy's five).

:func:`orientation_stats` gives what ``np.abs``, ``max(axis=0)`` and ``mean(axis=0)`` give on an
``(orientations, H, W)`` float32 stack, and :func:`add_scaled` what ``total += resp / divisor`` gives, bit for
bit: the absolute value and the maximum are exact; the mean adds the orientations in their order in float32
(as NumPy reduces an outer axis: ``((r0 + r1) + r2) + ...``) and divides by their number in float32; the
quotient is IEEE float32 division, and ``total`` gains it by a float32 addition. The loops run over contiguous
planes, one orientation after the other, so the compiler vectorises them without changing any operation.
"""

from libc.math cimport fabsf

import numpy as np


def orientation_stats(float[:, :, ::1] resp):
    """Replace ``resp`` by its absolute values in place; return (maximum, mean) over its first axis, float32."""
    cdef Py_ssize_t n = resp.shape[0], size = resp.shape[1] * resp.shape[2], k, i
    strongest = np.empty((resp.shape[1], resp.shape[2]), np.float32)
    mean = np.empty((resp.shape[1], resp.shape[2]), np.float32)
    cdef float[:, ::1] hi_view = strongest, av_view = mean
    cdef float *hi
    cdef float *av
    cdef float *r
    cdef float v, count = <float> n
    if n == 0:
        raise ValueError("orientation_stats: resp has no orientations (first axis of length 0)")
    if size == 0:
        return strongest, mean
    hi, av = &hi_view[0, 0], &av_view[0, 0]
    with nogil:
        r = &resp[0, 0, 0]
        for i in range(size):
            v = fabsf(r[i])
            r[i] = v
            hi[i] = v
            av[i] = v
        for k in range(1, n):
            r = &resp[k, 0, 0]
            for i in range(size):
                v = fabsf(r[i])
                r[i] = v
                hi[i] = v if v > hi[i] else hi[i]
                av[i] = av[i] + v
        for i in range(size):
            av[i] = av[i] / count
    return strongest, mean


def add_scaled(float[:, :, ::1] total, const float[:, :, ::1] resp, float divisor):
    """``total += resp / divisor`` in float32, in place (``total`` and ``resp`` of one shape)."""
    cdef Py_ssize_t count = resp.shape[0] * resp.shape[1] * resp.shape[2], i
    if total.shape[0] != resp.shape[0] or total.shape[1] != resp.shape[1] or total.shape[2] != resp.shape[2]:
        raise ValueError("add_scaled: total and resp differ in shape")
    cdef float *t
    cdef const float *r
    if count == 0:
        return
    t, r = &total[0, 0, 0], &resp[0, 0, 0]
    with nogil:
        for i in range(count):
            t[i] = t[i] + r[i] / divisor
