"""Boundary counts of a whole threshold sweep at once, exactly as threshold by threshold.

The Berkeley boundary benchmark matches every thresholded (and thinned)
machine map with every annotation (:func:`segensemble.evaluation.correspond.correspond_pixels`).
Along a sweep the maps share most of their pixels, so here:

- the candidate pairs are found once per annotation, for the union of the
  machine pixels of every threshold, and sorted once by (machine pixel,
  annotation pixel) and by (annotation pixel, machine pixel); a threshold's
  graph is the part of them between its own pixels (pairs depend on
  positions only), already in the row order the solver takes, whichever
  side is the rows;
- isolated pairs are matched directly and the rest is solved in one call,
  as the per-threshold matcher does. Union pixel ids keep the relative order
  of a threshold's own pixel ids, so the solver sees the same graph, rows
  and columns in the same order, and returns the same matching.

So the counts are those of
:func:`segensemble.evaluation.boundaries.boundary_counts` at every
threshold, pixel for pixel — tested on random and real maps.
"""

from __future__ import annotations

import numpy as np

from segensemble.boundarymaps import thin_boundaries
from segensemble.errors import InputError
from segensemble.evaluation.correspond import _assign_sorted, candidate_edges, check_max_dist, match_radius

__all__ = ["boundary_counts_sweep"]


def boundary_counts_sweep(bmaps, gt_boundaries, *, max_dist: float = 0.0075, thin: bool = True) -> list:
    """:func:`~segensemble.evaluation.boundaries.boundary_counts` of every map of a sequence, sharing the work.

    Parameters
    ----------
    bmaps : sequence of (H, W) bool arrays
        The machine boundary maps of a sweep (e.g. a soft map at every
        threshold), thinned first unless ``thin=False``. Any order.
    gt_boundaries : list of (H, W) bool arrays
        Human boundary maps, one per annotator.
    max_dist : float, default 0.0075
        Matching radius as a fraction of the image diagonal.
    thin : bool, default True

    Returns
    -------
    list of (cntR, sumR, cntP, sumP)
        One tuple of ints per map, equal to ``boundary_counts(bmap, gt_boundaries)``.

    Examples
    --------
    >>> from segensemble.evaluation.boundaries import boundary_counts
    >>> gt = np.zeros((20, 20), bool); gt[10, 2:18] = True
    >>> maps = [np.zeros((20, 20), bool) for _ in range(3)]
    >>> maps[0][10, 5:9] = True; maps[1][11, 2:12] = True; maps[2][9:12, 2:18] = True
    >>> sweep = boundary_counts_sweep(maps, [gt], max_dist=0.05)
    >>> sweep == [boundary_counts(m, [gt], max_dist=0.05) for m in maps]
    True
    """
    check_max_dist(max_dist)
    given = [np.asarray(b, dtype=bool) for b in bmaps]
    if not given:
        return []
    shape = given[0].shape
    if any(m.shape != shape for m in given):
        raise InputError(f"bmaps: expected maps of one shape, got {sorted({m.shape for m in given})}")
    first: dict = {}  # equal maps (a ucm2's neighbouring thresholds) are thinned and matched once
    which = [first.setdefault(np.packbits(m).tobytes(), len(first)) for m in given]
    distinct = [given[which.index(k)] for k in range(len(first))]
    counts = _sweep_counts([thin_boundaries(m) if thin else m for m in distinct], gt_boundaries, shape, max_dist)
    return [counts[k] for k in which]


def _sweep_counts(maps, gt_boundaries, shape, max_dist) -> list:
    """(cntR, sumR, cntP, sumP) of every (thinned, distinct) map of one shape."""
    union = np.logical_or.reduce(maps)
    pixels = np.flatnonzero(union)
    active = np.stack([m.ravel()[pixels] for m in maps])  # (maps, union pixels)
    radius = match_radius(shape, max_dist)
    oc = int(round(100 * 100 * radius))
    cnt_r = np.zeros(len(maps), dtype=np.int64)
    sum_r = 0
    matched = np.zeros(active.shape, dtype=bool)  # machine pixels matched to some annotator
    for g in gt_boundaries:
        g = np.asarray(g, dtype=bool)
        if g.shape != shape:
            raise InputError(f"gt_boundaries: expected the shape of bmap {shape}, got {g.shape}")
        sum_r += int(np.count_nonzero(g))
        if not g.any() or not len(pixels):
            continue
        sweep = _Sweep(candidate_edges(union, g, radius), len(pixels), int(np.count_nonzero(g)), oc)
        for k in range(len(maps)):
            mi = sweep.step(active[k])
            cnt_r[k] += len(mi)
            matched[k, mi] = True
    cnt_p = matched.sum(axis=1)
    sum_p = active.sum(axis=1)
    return [(int(cnt_r[k]), sum_r, int(cnt_p[k]), int(sum_p[k])) for k in range(len(maps))]


class _Sweep:
    """The matching of one annotation with each of a sequence of machine pixel sets."""

    def __init__(self, edges, n_machine: int, n_gt: int, oc: int):
        i, j, c = edges
        by_machine, by_gt = np.lexsort((j, i)), np.lexsort((i, j))
        self.by_machine = i[by_machine], j[by_machine], c[by_machine]
        self.by_gt = i[by_gt], j[by_gt], c[by_gt]
        self.n1, self.n2, self.oc = n_machine, n_gt, oc
        self.previous = None  # (the last set, its matched machine pixels)

    def step(self, act: np.ndarray) -> np.ndarray:
        """Matched machine pixels (union ids) of the set ``act`` (a bool mask over the union's pixels)."""
        if self.previous is not None and np.array_equal(act, self.previous[0]):
            return self.previous[1]
        n1, n2 = self.n1, self.n2
        i, j, c = self.by_machine
        e = act[i]
        ie, je = i[e], j[e]
        deg1, deg2 = np.bincount(ie, minlength=n1), np.bincount(je, minlength=n2)
        single = (deg1[ie] == 1) & (deg2[je] == 1)
        out = [ie[single]]
        rest = ~single
        if rest.any():
            rows_m = np.bincount(ie[rest], minlength=n1) > 0
            rows_g = np.bincount(je[rest], minlength=n2) > 0
            # the per-threshold matcher's choice of row side: the smaller of the two pixel sets
            if np.count_nonzero(rows_g) < np.count_nonzero(rows_m):
                i, j, c = self.by_gt
                keep = act[i] & ((deg1[i] != 1) | (deg2[j] != 1))
                ri, rj, rc = i[keep], j[keep], c[keep]
                _, b = _assign_ranked(rj, rows_g, ri, rows_m, rc, self.oc)
                out.append(np.flatnonzero(rows_m)[b])
            else:
                a, _ = _assign_ranked(ie[rest], rows_m, je[rest], rows_g, c[e][rest], self.oc)
                out.append(np.flatnonzero(rows_m)[a])
        matched = np.concatenate(out)
        self.previous = (act, matched)
        return matched


def _assign_ranked(rows, row_present, cols, col_present, cost, oc):
    """:func:`~segensemble.evaluation.correspond.assign` of edges sorted by (row, column), given as ids with the
    masks of the ids present; returns the matched pairs as ranks among the present rows and columns."""
    row_rank = np.cumsum(row_present) - 1
    col_rank = np.cumsum(col_present) - 1
    return _assign_sorted(row_rank[rows], col_rank[cols], cost, int(row_rank[-1]) + 1, int(col_rank[-1]) + 1, oc)
