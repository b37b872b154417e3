# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The greedy merge pass of Felzenszwalb-Huttenlocher segmentation over edges sorted once.

Felzenszwalb & Huttenlocher (IJCV 59(2), 2004, Sec. 4, Algorithm 1): edges
in non-decreasing weight; an edge joins its two components when its weight is
below both components' internal difference plus ``k / |C|``; then components
below ``min_size`` are joined along the sorted edges. Only ``k`` and
``min_size`` depend on the scale, so the sorted edges of an image serve every
scale (:mod:`segensemble.segmenters.felzenszwalb`).

The conventions are scikit-image's (``skimage.segmentation.felzenszwalb``, so
the labels are the same): a component is represented by its smallest pixel
index; the threshold ``internal + k / size`` is rounded to single precision
before the comparison, which is strict; the ``min_size`` pass adds the sizes
of the components it joins; labels number the components in the raster order
of their first pixel.
"""

import numpy as np

ctypedef Py_ssize_t idx


cdef inline idx _root(idx* parent, idx n) noexcept nogil:
    """The root of ``n``'s component, halving the path on the way (roots, and so every decision, are unchanged)."""
    while parent[n] < n:
        parent[n] = parent[parent[n]]
        n = parent[n]
    return n


cdef inline void _point(idx* parent, idx n, idx root) noexcept nogil:
    cdef idx j
    while parent[n] < n:
        j = parent[n]
        parent[n] = root
        n = j
    parent[n] = root


cdef inline idx _join(idx* parent, idx a, idx b) noexcept nogil:
    """Join the components of roots ``a`` and ``b``; the new root (the smaller)."""
    cdef idx root = a if a < b else b
    _point(parent, a, root)
    _point(parent, b, root)
    return root


def segment_sorted(const idx[:, ::1] edges, const double[::1] weights, idx n_pixels, double k, idx min_size):
    """Labels (0..K-1, raster order of first pixel) of ``n_pixels`` pixels from edges sorted by ``weights``."""
    parent_array = np.arange(n_pixels, dtype=np.intp)
    size_array = np.ones(n_pixels, dtype=np.intp)
    internal_array = np.zeros(n_pixels, dtype=np.float64)
    labels_array = np.empty(n_pixels, dtype=np.intp)
    cdef idx[::1] parent = parent_array
    cdef idx[::1] size = size_array
    cdef double[::1] internal = internal_array
    cdef idx[::1] labels = labels_array
    cdef idx e, a, b, root, p, count = 0
    cdef float ta, tb
    with nogil:
        for e in range(edges.shape[0]):
            a = _root(&parent[0], edges[e, 0])
            b = _root(&parent[0], edges[e, 1])
            if a == b:
                continue
            ta = internal[a] + k / size[a]
            tb = internal[b] + k / size[b]
            if weights[e] < (ta if ta < tb else tb):
                root = _join(&parent[0], a, b)
                size[root] = size[a] + size[b]
                internal[root] = weights[e]
        for e in range(edges.shape[0]):
            a = _root(&parent[0], edges[e, 0])
            b = _root(&parent[0], edges[e, 1])
            if a == b:
                continue
            if size[a] < min_size or size[b] < min_size:
                root = _join(&parent[0], a, b)
                size[root] = size[a] + size[b]
        for p in range(n_pixels):  # a root precedes every pixel of its component
            root = _root(&parent[0], p)
            if root == p:
                labels[p] = count
                count += 1
            else:
                labels[p] = labels[root]
    return labels_array
