"""Exact pixel correspondence between two boundary maps (Berkeley benchmark).

A machine pixel and a human pixel may be matched when their Euclidean distance
is at most ``max_dist`` x the image diagonal; every pixel is matched at most
once; the matching minimises ``sum(cost of matched pairs) + oc * (number of
unmatched pixels)``, costs being distances rounded to 1/100 pixel and ``oc =
100 x max_dist x diagonal`` (in pixels) — so it maximises the number of matches
first and then minimises the total distance. The official code approximates
this optimum with a sparse assignment solver and random outlier edges (its
results vary in the 4th decimal); this module computes the exact optimum.

Exact solution: candidate edges of the two pixel sets are found with one
vectorised pass per integer offset inside the radius. Pixels without any
candidate stay unmatched, and isolated single edges are matched directly. The
rest is a rectangular assignment problem: one row per pixel of the smaller
side, one column per pixel of the other side plus a private "unmatched" column
per row costing ``2 oc``. Every row is assigned, so an assignment containing
the matching M costs ``sum(cost of M) + 2 oc (rows - |M|)`` — the official
objective ``sum(cost of M) + oc (n1 + n2 - 2|M|)`` minus a constant: the same
optimum. A sparse shortest augmenting path solver (Jonker & Volgenant's
LAPJVsp, :mod:`segensemble.evaluation._sparse_assignment`) finds it exactly,
choosing among equal optima as SciPy's ``min_weight_full_bipartite_matching``
does (the solver this module used before; same assignment, tested), in time
proportional to each row's own search rather than rows x columns.

References
----------
D. Martin, C. Fowlkes, J. Malik, "Learning to detect natural image boundaries
using local brightness, color, and texture cues", IEEE TPAMI 26(5), 2004,
Sec. 4 (benchmark correspondence); P. Arbelaez et al., TPAMI 2011.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from segensemble.errors import InputError
from segensemble.evaluation._sparse_assignment import assign_integer_rows

__all__ = ["correspond_pixels", "candidate_edges", "check_max_dist", "match_radius", "assign",
           "scipy_assign_rows"]


#: Largest matching radius accepted (fraction of the diagonal): the benchmark protocols in use match within
#: 0.0075 (BSDS) and 0.011 (NYUD-v2); the candidate pairs grow with the square of the radius, so a radius near
#: the whole image (0.99 took > 120 s and 3 GB on one BSDS image) is refused instead of computed.
MAX_DIST_LIMIT = 0.05


def check_max_dist(max_dist, name: str = "max_dist") -> float:
    """``max_dist`` checked: a matching radius as a fraction of the image diagonal, in (0, 0.05].

    Examples
    --------
    >>> check_max_dist(0.011)
    0.011
    >>> check_max_dist(0.5, "--max-dist")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: --max-dist: expected a fraction of the image diagonal in (0, 0.05] (BSDS 0.0075, NYUD 0.011), got 0.5
    """
    from numbers import Real

    if isinstance(max_dist, bool) or not isinstance(max_dist, Real) or not 0 < max_dist <= MAX_DIST_LIMIT:
        raise InputError(f"{name}: expected a fraction of the image diagonal in (0, {MAX_DIST_LIMIT}] "
                         f"(BSDS 0.0075, NYUD 0.011), got {max_dist!r}")
    return float(max_dist)


def match_radius(shape, max_dist: float = 0.0075) -> float:
    """Matching radius in pixels: ``max_dist`` x the image diagonal.

    Examples
    --------
    >>> round(match_radius((321, 481)), 3)
    4.337
    """
    return float(max_dist) * float(np.hypot(shape[0], shape[1]))


@lru_cache(maxsize=32)
def _offsets(radius: float):
    r = int(np.floor(radius))
    dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
    d = np.hypot(dy, dx)
    keep = d <= radius + 1e-9
    dy, dx, d = dy[keep], dx[keep], d[keep]
    order = np.argsort(d, kind="stable")
    return dy[order], dx[order], np.round(d[order] * 100).astype(np.int64)


def candidate_edges(bmap1: np.ndarray, bmap2: np.ndarray, radius: float):
    """All pairs (pixel of bmap1, pixel of bmap2) within ``radius``.

    Returns
    -------
    i, j : int arrays
        Indices into ``np.flatnonzero(bmap1)`` and ``np.flatnonzero(bmap2)``.
    cost : int64 array
        Distance in 1/100 pixel, rounded.

    Examples
    --------
    >>> a = np.zeros((3, 3), bool); a[1, 1] = True
    >>> b = np.zeros((3, 3), bool); b[1, 2] = b[0, 0] = True
    >>> i, j, c = candidate_edges(a, b, 1.5)
    >>> sorted(zip(j.tolist(), c.tolist()))
    [(0, 141), (1, 100)]
    """
    r = int(np.floor(radius))
    h, w = bmap1.shape
    wp = w + 2 * r
    id2 = np.full((h + 2 * r, wp), -1, dtype=np.int64)
    id2[r : r + h, r : r + w][bmap2] = np.arange(int(np.count_nonzero(bmap2)))
    flat = id2.ravel()
    y1, x1 = np.nonzero(bmap1)
    base = (y1 + r) * wp + (x1 + r)
    ii, jj, cc = [], [], []
    for dy, dx, c in zip(*_offsets(radius)):
        j = flat[base + (dy * wp + dx)]
        hit = np.flatnonzero(j >= 0)
        if len(hit):
            ii.append(hit)
            jj.append(j[hit])
            cc.append(np.full(len(hit), c, dtype=np.int64))
    if not ii:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    return np.concatenate(ii), np.concatenate(jj), np.concatenate(cc)


def _solve(i, j, c, n1, n2, oc, *, swap: bool | None = None):
    """Optimal matching of an edge list; returns matched (i, j) pairs.

    ``swap``: solve with the second side as rows (None: when it is the smaller side; a sub-graph solved apart
    passes its whole graph's choice).

    Rows are the pixels of the smaller side; columns the pixels of the other
    side plus one private dummy per row at cost 2*oc. Every row is matched (to
    a real column or its dummy), so a solution costs ``sum(c of M) + 2*oc*(r -
    |M|)`` with r rows, which differs from ``sum(c of M) + oc*(n1 + n2 - 2|M|)``
    by the constant ``oc*(|n1 - n2|)``: the same optimum, on a graph half the
    size of the square formulation (and the solver is several times faster
    with the smaller side as rows).
    """
    if n2 < n1 if swap is None else swap:
        b, a = assign(j, i, c, n2, n1, oc)
        return a, b
    return assign(i, j, c, n1, n2, oc)


def assign(i, j, c, n1, n2, oc):
    """The matching of :func:`_solve` with the first side as rows, whatever the sizes: matched (i, j) pairs.

    The solution on a graph that falls apart into components equals the solutions on the components solved apart
    with the same row side and the same relative order of rows and of columns (tested against whole-graph solves).

    Examples
    --------
    >>> a, b = assign(np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([100, 0, 100]), 2, 2, 400)
    >>> a.tolist(), b.tolist()
    ([0, 1], [0, 1])
    """
    # the CSR arrays directly (row by row, columns sorted): the pairs are distinct, so one int64 key
    order = np.argsort(np.asarray(i, dtype=np.int64) * n2 + j)
    return _assign_sorted(i[order], j[order], c[order], n1, n2, oc)


def _assign_sorted(i, j, c, n1, n2, oc):
    """:func:`assign` of edges already sorted by (row, column)."""
    indptr = np.zeros(n1 + 1, dtype=np.int64)
    np.cumsum(np.bincount(i, minlength=n1), out=indptr[1:])
    # Weights shifted by +1 (a constant: every row is assigned once), the same numbers SciPy's solver was given.
    col_ind = assign_integer_rows(indptr, np.ascontiguousarray(j, dtype=np.int64), c.astype(np.int64) + 1, n2,
                                  2 * int(oc) + 1)
    real = np.flatnonzero(col_ind < n2)
    return real, col_ind[real]


def scipy_assign_rows(indptr, indices, cost, n_real, private_cost):
    """:func:`~segensemble.evaluation._sparse_assignment.assign_rows` computed by SciPy's
    ``min_weight_full_bipartite_matching`` (the solver this module used before): the reference the tests and
    ``benchmarks/bench_evaluation.py`` compare with. Time rows x columns.

    Examples
    --------
    >>> from segensemble.evaluation._sparse_assignment import assign_rows
    >>> graph = (np.array([0, 1, 3]), np.array([0, 0, 1]), np.array([1.0, 2.0, 4.0]), 2, 5.0)
    >>> scipy_assign_rows(*graph).tolist(), assign_rows(*graph).tolist()
    ([0, 1], [0, 1])
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    n_rows = len(indptr) - 1
    degree = np.diff(indptr)
    at = np.cumsum(degree + 1) - 1  # each row's private column comes last (the largest column index)
    cols = np.empty(len(indices) + n_rows, dtype=np.int64)
    data = np.empty(len(cols))
    real = np.ones(len(cols), dtype=bool)
    real[at] = False
    cols[real], data[real] = indices, cost
    cols[at], data[at] = n_real + np.arange(n_rows), private_cost
    graph = sp.csr_matrix((data, cols, np.concatenate([[0], np.cumsum(degree + 1)])), shape=(n_rows, n_real + n_rows))
    return min_weight_full_bipartite_matching(graph)[1].astype(np.int64)


def correspond_pixels(bmap1, bmap2, max_dist: float = 0.0075):
    """Match the pixels of two boundary maps (benchmark ``correspondPixels``).

    Parameters
    ----------
    bmap1, bmap2 : (H, W) bool arrays
        Machine and human boundary maps.
    max_dist : float, default 0.0075
        Matching radius as a fraction of the image diagonal.

    Returns
    -------
    match1 : (H, W) bool
        Pixels of ``bmap1`` that are matched.
    match2 : (H, W) bool
        Pixels of ``bmap2`` that are matched.

    Examples
    --------
    >>> a = np.zeros((10, 10), bool); a[5, 2:8] = True
    >>> b = np.zeros((10, 10), bool); b[6, 3:9] = True
    >>> m1, m2 = correspond_pixels(a, b, max_dist=0.15)
    >>> int(m1.sum()), int(m2.sum())
    (6, 6)
    """
    b1 = np.asarray(bmap1, dtype=bool)
    b2 = np.asarray(bmap2, dtype=bool)
    if b1.shape != b2.shape:
        raise InputError(f"bmap2: expected the shape of bmap1 {b1.shape}, got {b2.shape}")
    m1 = np.zeros(b1.shape, dtype=bool)
    m2 = np.zeros(b2.shape, dtype=bool)
    if not b1.any() or not b2.any():
        return m1, m2
    radius = match_radius(b1.shape, max_dist)
    oc = int(round(100 * 100 * radius))
    i, j, c = candidate_edges(b1, b2, radius)
    if len(i) == 0:
        return m1, m2
    p1, p2 = _match_edges(i, j, c, oc, int(np.count_nonzero(b1)), int(np.count_nonzero(b2)))
    m1.ravel()[np.flatnonzero(b1)[p1]] = True
    m2.ravel()[np.flatnonzero(b2)[p2]] = True
    return m1, m2


def _compact(x: np.ndarray, n: int):
    """(sorted distinct values, their rank for every element) of ids in 0..n-1, in O(n)."""
    present = np.zeros(n, dtype=bool)
    present[x] = True
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present), rank[x]


def _match_edges(i, j, c, oc, n1, n2):
    """Optimal matching restricted to pixels with candidates; single edges matched directly."""
    ui, i = _compact(i, n1)
    uj, j = _compact(j, n2)
    deg1 = np.bincount(i, minlength=len(ui))
    deg2 = np.bincount(j, minlength=len(uj))
    single = (deg1[i] == 1) & (deg2[j] == 1)
    out1, out2 = [ui[i[single]]], [uj[j[single]]]
    rest = ~single
    if rest.any():
        ki, ri = _compact(i[rest], len(ui))
        kj, rj = _compact(j[rest], len(uj))
        a, b = _solve(ri, rj, c[rest], len(ki), len(kj), oc)
        out1.append(ui[ki[a]])
        out2.append(uj[kj[b]])
    return np.concatenate(out1), np.concatenate(out2)
