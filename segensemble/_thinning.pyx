# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Guo & Hall's two-subiteration thinning over the pixels that are on (see
:func:`segensemble.boundarymaps.thin_boundaries`, which gives the deletion tables).

Each sub-iteration computes every on pixel's neighbourhood code from the map as
it was when the sub-iteration began, then deletes the pixels its table marks
(the parallel rule of the algorithm); passes repeat until a whole pass deletes
nothing. Only the on pixels are visited: a pass costs time in their number, not
in the image's.
"""

from libc.stdint cimport int64_t, uint8_t

import numpy as np


def thin_on_pixels(const uint8_t[:, ::1] bmap, const uint8_t[::1] first, const uint8_t[::1] second):
    """The thinned map (uint8, 0/1) of ``bmap`` (uint8, 0/1) by the deletion tables of the two sub-iterations,
    each indexed by the 8-neighbour code (east 1, north-east 2, north 4, ... south-east 128)."""
    if first.shape[0] != 256 or second.shape[0] != 256:
        raise ValueError("first, second: expected tables of 256 entries")
    cdef Py_ssize_t h = bmap.shape[0], w = bmap.shape[1], wp = w + 2, y, x, n = 0, k, m, sub
    padded_arr = np.zeros((h + 2, wp), dtype=np.uint8)
    cdef uint8_t[:, ::1] padded = padded_arr
    for y in range(h):
        for x in range(w):
            if bmap[y, x]:
                padded[y + 1, x + 1] = 1
                n += 1
    on_arr = np.empty(n, dtype=np.int64)
    marks_arr = np.empty(n, dtype=np.uint8)
    cdef int64_t[::1] on = on_arr
    cdef uint8_t[::1] marks = marks_arr
    cdef uint8_t* p = &padded[0, 0] if h else NULL
    cdef const uint8_t* table
    cdef int64_t q
    cdef unsigned int code
    cdef bint deleted = True
    n = 0
    for y in range(h):
        for x in range(w):
            if bmap[y, x]:
                on[n] = (y + 1) * wp + x + 1
                n += 1
    with nogil:
        while deleted:
            deleted = False
            for sub in range(2):
                table = &first[0] if sub == 0 else &second[0]
                for k in range(n):
                    q = on[k]
                    code = (p[q + 1] | (p[q - wp + 1] << 1) | (p[q - wp] << 2) | (p[q - wp - 1] << 3)
                            | (p[q - 1] << 4) | (p[q + wp - 1] << 5) | (p[q + wp] << 6) | (p[q + wp + 1] << 7))
                    marks[k] = table[code]
                m = 0
                for k in range(n):
                    if marks[k]:
                        p[on[k]] = 0
                        deleted = True
                    else:
                        on[m] = on[k]
                        m += 1
                n = m
    return padded_arr[1:-1, 1:-1].copy()
