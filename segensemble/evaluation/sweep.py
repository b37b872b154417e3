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
  and columns in the same order, and returns the same matching;
- except for the connected components that did not change since the last
  threshold: they keep their matching, and only the others are solved
  (together). A component is unchanged exactly when it holds no machine
  pixel new at this threshold and none of its annotation pixels had a
  candidate pair with a machine pixel that left (``_Sweep._changed``); the
  solver's matching of a graph is its matchings of the components solved
  apart, with the same row side and relative order (each row's search stays
  inside its component).

So the counts are those of
:func:`segensemble.evaluation.boundaries.boundary_counts` at every
threshold, pixel for pixel — tested on random and real maps.
"""

from __future__ import annotations

import numpy as np

from segensemble.boundarymaps import thin_boundaries
from segensemble.errors import InputError
from segensemble.evaluation._sweep_graph import assign_edges, plan_step
from segensemble.evaluation.correspond import candidate_edges, check_max_dist, match_radius

__all__ = ["boundary_counts_sweep"]


def boundary_counts_sweep(bmaps, gt_boundaries, *, max_dist: float = 0.0075, thin: bool = True) -> list:
    """:func:`~segensemble.evaluation.boundaries.boundary_counts` of every map of a sequence, sharing the work.

    Parameters
    ----------
    bmaps : sequence of (H, W) bool arrays
        The machine boundary maps of a sweep (e.g. a soft map at every
        threshold), thinned first unless ``thin=False``. Any order; the work
        saved is largest when consecutive maps differ little.
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


_NO_PAIRS = (np.zeros(0, np.int64), np.zeros(0, np.int64))


class _Sweep:
    """The matching of one annotation with each of a sequence of machine pixel sets."""

    def __init__(self, edges, n_machine: int, n_gt: int, oc: int):
        i, j, c = edges
        # (machine, annotation) and (annotation, machine) order: the pairs are distinct, so one int64 key each
        by_machine, by_gt = np.argsort(i * n_gt + j), np.argsort(j * n_machine + i)
        # each order as the other end, the cost and the start of every pixel's pairs (its CSR form)
        starts = [np.concatenate([[0], np.cumsum(np.bincount(x, minlength=n))]) for x, n in ((i, n_machine), (j, n_gt))]
        self.by_machine = j[by_machine], c[by_machine], starts[0]
        self.by_gt = i[by_gt], c[by_gt], starts[1]
        self.n1, self.n2, self.oc = n_machine, n_gt, oc
        self.previous = None  # the last set, its matched machine pixels, its row side (-1: none), its solved pairs

    def step(self, act: np.ndarray) -> np.ndarray:
        """Matched machine pixels (union ids) of the set ``act`` (a bool mask over the union's pixels).

        Isolated pairs are matched directly; the rest is solved with the per-threshold matcher's row side (the
        smaller of the two pixel sets among the remaining pairs' ends), except the connected components that did
        not change since the last set, which keep their last matching
        (:func:`~segensemble.evaluation._sweep_graph.plan_step` finds them). A component C with no new machine
        pixel lies inside a component C' of the last set (its pixels and pairs were all there). An extra vertex of
        C' would be an annotation pixel paired with a machine pixel of C (so in C) or a machine pixel paired with
        an annotation pixel of C: in C if still present, so it left. Hence C' = C unless an annotation pixel of C
        has a pair with a machine pixel that left; and solved with the same row side and relative order, C has
        C's matching of the last set (components are solved apart exactly as together: each row's search stays in
        its component).
        """
        prev = self.previous
        if prev is not None and np.array_equal(act, prev[0]):
            return prev[1]
        before, side, (pm, pg) = (None, -1, _NO_PAIRS) if prev is None else (prev[0].view(np.uint8), prev[2], prev[3])
        single, side, rows, cols, cost, kept_m, kept_g = plan_step(act.view(np.uint8), before, side, pm, pg,
                                                                   self.by_machine, self.by_gt, self.n1, self.n2)
        pairs = _NO_PAIRS
        if side >= 0:
            if side:  # annotation pixels are the rows
                solved_g, solved_m = assign_edges(rows, cols, cost, self.n1, 2 * self.oc + 1)
            else:
                solved_m, solved_g = assign_edges(rows, cols, cost, self.n2, 2 * self.oc + 1)
            pairs = np.concatenate([kept_m, solved_m]), np.concatenate([kept_g, solved_g])
        matched = np.concatenate([single, pairs[0]])
        self.previous = (act, matched, side, pairs)
        return matched

