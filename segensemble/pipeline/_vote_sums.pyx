# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The sums of the joint bilateral vote of :func:`segensemble.pipeline.workscale.upsample_labels`, compiled.

:func:`label_sums` gives, for every band pixel ``n`` and candidate ``j``, the support
``sum_k [cand[n, k] == cand[n, j]] * ws[n, k]`` and the weighted colour sums
``sum_k [cand[n, k] == cand[n, j]] * ws[n, k] * col[n, k, c]`` without the (n, 9, 9) table of label
equalities that NumPy's ``einsum`` reads. Each is added in float32 in the order of ``k``, a product
``ws * col`` rounded once (built without fused multiply-add), as ``einsum("njk,nk,nkc->njc", ...)`` adds
them: the colour sums are ``einsum``'s bit for bit. The support is added in the same order (``einsum``'s
two-operand sum may group its terms otherwise, by the processor's vector width: a last-bit difference). A
candidate whose label an earlier candidate of the pixel has gets that candidate's sums (the same terms in the
same order).
"""

import numpy as np


def label_sums(const int[:, ::1] cand, const float[:, ::1] ws, const float[:, :, ::1] col):
    """(support (n, m) float32, colour sums (n, m, 3) float32) of candidates ``cand`` (n, m) with weights
    ``ws`` (n, m) and colours ``col`` (n, m, 3)."""
    cdef Py_ssize_t n = cand.shape[0], m = cand.shape[1], i, j, k, prev
    if ws.shape[0] != n or ws.shape[1] != m or col.shape[0] != n or col.shape[1] != m or col.shape[2] != 3:
        raise ValueError("label_sums: cand (n, m), ws (n, m) and col (n, m, 3) must agree")
    support = np.zeros((n, m), np.float32)
    sums = np.zeros((n, m, 3), np.float32)
    cdef float[:, ::1] sup = support
    cdef float[:, :, ::1] tot = sums
    cdef float s, c0, c1, c2, w
    cdef int label
    with nogil:
        for i in range(n):
            for j in range(m):
                label = cand[i, j]
                prev = -1
                for k in range(j):
                    if cand[i, k] == label:
                        prev = k
                        break
                if prev >= 0:
                    sup[i, j] = sup[i, prev]
                    tot[i, j, 0] = tot[i, prev, 0]
                    tot[i, j, 1] = tot[i, prev, 1]
                    tot[i, j, 2] = tot[i, prev, 2]
                    continue
                s = 0.0
                c0 = 0.0
                c1 = 0.0
                c2 = 0.0
                for k in range(m):
                    if cand[i, k] == label:
                        w = ws[i, k]
                        s = s + w
                        c0 = c0 + w * col[i, k, 0]
                        c1 = c1 + w * col[i, k, 1]
                        c2 = c2 + w * col[i, k, 2]
                sup[i, j] = s
                tot[i, j, 0] = c0
                tot[i, j, 1] = c1
                tot[i, j, 2] = c2
    return support, sums
