# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The comparison step of :func:`segensemble.evaluation.nms.non_maximum_suppression`, compiled.

For every pixel of a band of rows, the map is read at ``d = 1, -1, 2, -2, .., r, -r`` pixels along the normal by
bilinear interpolation, and the pixel is kept where ``value * multiplier`` reaches every reading; the first
reading above it ends the pixel's test (the nearest readings first: on a slope the next pixel up already is). The
positions are computed as NumPy computes them (``clip(y + d * sin, 0, h - 1) - lo``, ``clip(x + d * cos, 0,
w - 1)``), and a reading is the value ``scipy.ndimage.map_coordinates(order=1)`` gives there, bit for bit:
with ``f = c - floor(c)`` along each axis the weights are ``1 - f`` and ``1 - (1 - f)``, and the four terms
``(value * row weight) * column weight`` are added in row-major order from zero. A neighbour beyond the last
row or column (a position on it exactly) has weight zero and adds nothing. Built without fused
multiply-add, so that every product and sum is rounded as there.
"""

import numpy as np
from libc.math cimport floor


cdef inline double _bilinear(const double[:, ::1] e, double cy, double cx) noexcept nogil:
    cdef Py_ssize_t bh = e.shape[0], w = e.shape[1]
    cdef double fy0 = floor(cy), fx0 = floor(cx)
    cdef Py_ssize_t y0 = <Py_ssize_t>fy0, x0 = <Py_ssize_t>fx0
    cdef Py_ssize_t y1 = y0 + 1 if y0 + 1 < bh else y0, x1 = x0 + 1 if x0 + 1 < w else x0
    cdef double wy0 = 1.0 - (cy - fy0), wx0 = 1.0 - (cx - fx0)
    cdef double wy1 = 1.0 - wy0, wx1 = 1.0 - wx0
    cdef double t = 0.0
    t += (e[y0, x0] * wy0) * wx0
    t += (e[y0, x1] * wy0) * wx1
    t += (e[y1, x0] * wy1) * wx0
    t += (e[y1, x1] * wy1) * wx1
    return t


def suppress_band(const double[:, ::1] e, const double[:, ::1] cos, const double[:, ::1] sin, Py_ssize_t lo,
                  Py_ssize_t h, int r, double multiplier, Py_ssize_t first, Py_ssize_t stop):
    """Rows ``first:stop`` of ``e`` (rows ``lo`` on of a map ``h`` rows high) where ``e * multiplier`` reaches
    the map at 1..``r`` pixels on either side along the normal (``cos``, ``sin`` of its angle), 0 elsewhere
    (float64, ``stop - first`` rows). The band's other rows are the margin those rows read."""
    cdef Py_ssize_t bh = e.shape[0], w = e.shape[1], i, j
    cdef int d, k
    cdef double v, y, x, cy, cx, top = <double>(h - 1), right = <double>(w - 1), shift = <double>lo
    if cos.shape[0] != bh or cos.shape[1] != w or sin.shape[0] != bh or sin.shape[1] != w:
        raise ValueError("suppress_band: e, cos and sin must have one shape")
    if r < 1 or lo < 0 or lo + bh > h or not 0 <= first <= stop <= bh:
        raise ValueError("suppress_band: expected r >= 1, the band's rows inside the map and first:stop in it")
    out = np.empty((stop - first, w), np.float64)
    cdef double[:, ::1] o = out
    cdef bint keep
    with nogil:
        for i in range(first, stop):
            y = <double>(lo + i)
            for j in range(w):
                v = e[i, j]
                x = <double>j
                keep = True
                for k in range(2 * r):  # d = 1, -1, 2, -2, ..., r, -r: the nearest readings first
                    d = k // 2 + 1 if k % 2 == 0 else -(k // 2 + 1)
                    cy = y + d * sin[i, j]
                    cy = (0.0 if cy < 0.0 else (top if cy > top else cy)) - shift
                    cx = x + d * cos[i, j]
                    cx = 0.0 if cx < 0.0 else (right if cx > right else cx)
                    if cy < 0.0 or cy > <double>(bh - 1):  # a band's margin covers every position its rows read
                        with gil:
                            raise ValueError("suppress_band: a position falls outside the band; widen its margin")
                    if not (v * multiplier >= _bilinear(e, cy, cx)):
                        keep = False
                        break
                o[i - first, j] = v if keep else 0.0
    return out


def bilinear_readings(const double[:, ::1] e, const double[::1] cy, const double[::1] cx):
    """The readings :func:`suppress_band` takes, at positions ``(cy[k], cx[k])`` inside ``e`` (float64): the
    values of ``scipy.ndimage.map_coordinates(e, [cy, cx], order=1)``."""
    cdef Py_ssize_t n = cy.shape[0], k
    if cx.shape[0] != n:
        raise ValueError("bilinear_readings: cy and cx must have one length")
    for k in range(n):
        if not (0.0 <= cy[k] <= e.shape[0] - 1 and 0.0 <= cx[k] <= e.shape[1] - 1):
            raise ValueError("bilinear_readings: expected positions inside the map")
    out = np.empty(n, np.float64)
    cdef double[::1] o = out
    with nogil:
        for k in range(n):
            o[k] = _bilinear(e, cy[k], cx[k])
    return out
