"""Boundary counts of a whole threshold sweep at once, exactly as threshold by threshold, re-solving only what changed.

The Berkeley boundary benchmark matches every thresholded (and thinned)
machine map with every annotation (:func:`segensemble.evaluation.correspond.correspond_pixels`).
Along a sweep the maps differ by few pixels from one threshold to the next,
and the bipartite graph of candidate pairs falls apart into many small
connected components. Here:

- the candidate pairs are found once per annotation, for the union of the
  machine pixels of every threshold; a threshold's graph is the part of them
  between its own pixels (pairs depend on positions only);
- isolated pairs are matched directly, as the per-threshold matcher does, and
  the rest is solved with the same row side and the same order of rows and
  columns as the whole-graph solve, component by component where needed: a
  component whose vertices are the same as at the previous threshold keeps
  its matching. A component is unchanged exactly when it holds no machine
  pixel new at this threshold and none of its annotation pixels had a
  candidate pair with a machine pixel that left (proof in
  :func:`boundary_counts_sweep`);
- a changed component whose machine pixels were all matched at the last
  step, by pairs costing less than two outlier costs in all, is fully
  matched at the optimum too (``_Sweep._saturated``): its counts need no
  solve. Only the other changed components are passed to the solver,
  together, in one call.

The solver's matching on a graph equals its matchings on the graph's
components solved apart with the same row side and relative order (every
phase of the assignment algorithm only follows edges), so the counts are
those of :func:`segensemble.evaluation.boundaries.boundary_counts` at every
threshold, pixel for pixel — tested on random and real maps.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from segensemble.boundarymaps import thin_boundaries
from segensemble.errors import InputError
from segensemble.evaluation.correspond import _compact, _solve, candidate_edges, check_max_dist, match_radius

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

    Notes
    -----
    Why an unchanged component keeps its matching: let C be a component (of
    three or more vertices) of this threshold's graph with no new machine
    pixel. Its pixels and their pairs were all present at the previous
    threshold, so C lies inside a component C' there. An extra vertex of C'
    would be an annotation pixel paired with a machine pixel of C (then it is
    in C) or a machine pixel paired with an annotation pixel of C: if it is
    still present it is in C, so it left. Hence C' = C unless an annotation
    pixel of C had a pair with a machine pixel that left.

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
        edges = candidate_edges(union, g, radius)
        sweep = _Sweep(edges, len(pixels), int(np.count_nonzero(g)), oc)
        for k in range(len(maps)):
            mi = sweep.step(active[k])
            cnt_r[k] += len(mi)
            matched[k, mi] = True
    cnt_p = matched.sum(axis=1)
    sum_p = active.sum(axis=1)
    return [(int(cnt_r[k]), sum_r, int(cnt_p[k]), int(sum_p[k])) for k in range(len(maps))]


class _Sweep:
    """The matching of one annotation with a sequence of machine pixel sets, kept from one set to the next."""

    def __init__(self, edges, n_machine: int, n_gt: int, oc: int):
        self.i, self.j, self.c = edges
        self.n1, self.n2, self.oc = n_machine, n_gt, oc
        self.previous = None  # (active, row side swapped, rest pairs (machine, annotation)), or None
        self.pairs = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        # the cost of a pair (machine, annotation) by binary search on its key
        keys = self.i * self.n2 + self.j
        self._by_key = np.argsort(keys, kind="stable")
        self._sorted_keys = keys[self._by_key]
        # the last matching: every machine pixel's partner and the pair's cost (-1: unmatched)
        self.partner = np.full(n_machine, -1, dtype=np.int64)
        self.partner_cost = np.full(n_machine, -1, dtype=np.int64)

    def step(self, act: np.ndarray) -> np.ndarray:
        """Matched machine pixels (union ids) of the set ``act`` (a bool mask over the union's pixels)."""
        if self.previous is not None and np.array_equal(act, self.previous[0]):
            return self.pairs[0]
        i, j, c, n1, n2 = self.i, self.j, self.c, self.n1, self.n2
        e = act[i]
        ie, je, ce = i[e], j[e], c[e]
        deg1, deg2 = np.bincount(ie, minlength=n1), np.bincount(je, minlength=n2)
        single = (deg1[ie] == 1) & (deg2[je] == 1)
        ri, rj, rc = ie[~single], je[~single], ce[~single]
        rest = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        swapped = None
        if len(ri):  # the per-threshold matcher's choice of row side: the smaller of the two pixel sets
            swapped = np.count_nonzero(np.bincount(rj, minlength=n2)) < np.count_nonzero(np.bincount(ri, minlength=n1))
            rest = self._solve_rest(act, ri, rj, rc, swapped)
        self.previous = (act, swapped, rest)
        self.pairs = (np.concatenate([ie[single], rest[0]]), np.concatenate([je[single], rest[1]]))
        self.partner[:] = -1
        self.partner_cost[:] = -1
        self.partner[self.pairs[0]] = self.pairs[1]
        self.partner_cost[self.pairs[0]] = self.cost(*self.pairs)
        return self.pairs[0]

    def cost(self, m: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Costs of the candidate pairs (machine ``m``, annotation ``g``)."""
        return self.c[self._by_key[np.searchsorted(self._sorted_keys, m * self.n2 + g)]]

    def _saturated(self, ri, label, dirty):
        """Dirty components the last matching restricted to them proves fully matched on the machine side.

        If every machine pixel of a component C was matched at the last step (its partner, an annotation pixel,
        is still there and still paired with it, so in C), the restriction M_r of that matching to C matches all
        of C's machine pixels, at cost S. Every assignment that leaves a machine pixel of C unmatched costs at
        least 2 oc more than M_r's own assignment minus S — whichever side is the rows (an unmatched machine
        row pays its dummy 2 oc; with annotation rows, one more annotation row pays it) — so when S < 2 oc the
        optimum matches every machine pixel of C: the matched machine pixels and their number are those of
        M_r, whatever matching the solver would pick among equals. The counts need nothing more.
        """
        machine = np.flatnonzero(np.bincount(ri, minlength=self.n1))
        comp = label[machine]
        n = len(dirty)
        unmatched = np.bincount(comp, weights=self.partner_cost[machine] < 0, minlength=n) > 0
        spent = np.bincount(comp, weights=np.maximum(self.partner_cost[machine], 0), minlength=n)
        certain = dirty & ~unmatched & (spent < 2 * self.oc)
        m = machine[certain[comp]]
        return certain, (m, self.partner[m])

    def _solve_rest(self, act, ri, rj, rc, swapped):
        n1, n2 = self.n1, self.n2
        graph = sp.coo_matrix((np.ones(len(ri), np.int8), (ri, n1 + rj)), shape=(n1 + n2, n1 + n2))
        _, label = connected_components(graph, directed=False)
        dirty = np.ones(label.max() + 1, dtype=bool)
        kept = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        prev = self.previous
        if prev is not None and prev[1] == swapped and len(prev[2][0]):
            dirty[:] = False
            dirty[label[np.flatnonzero(act & ~prev[0])]] = True  # components with a new machine pixel
            left = (prev[0] & ~act)[self.i]  # pairs of machine pixels that left ...
            dirty[label[n1 + self.j[left]]] = True  # ... make their annotation pixels' components dirty
            pm, pg = prev[2]
            keep = act[pm] & ~dirty[label[pm]] & ~dirty[label[n1 + pg]]
            kept = (pm[keep], pg[keep])
        certain, saturated = self._saturated(ri, label, dirty)
        dirty &= ~certain
        out_i, out_j = [kept[0], saturated[0]], [kept[1], saturated[1]]
        for di, dj, dc in _batches(ri, rj, rc, label[ri], dirty):
            rows, ranked_i = _compact(di, n1)
            cols, ranked_j = _compact(dj, n2)
            a, b = _solve(ranked_i, ranked_j, dc, len(rows), len(cols), self.oc, swap=swapped)
            out_i.append(rows[a])
            out_j.append(cols[b])
        return np.concatenate(out_i), np.concatenate(out_j)


#: Rows per solver call when small components are solved together (the solver's time grows faster than its
#: size, and each call costs ~0.1 ms).
BATCH_ROWS = 64


def _batches(ri, rj, rc, component, dirty):
    """The edges of the dirty components, in groups of whole components of about :data:`BATCH_ROWS` rows."""
    sel = dirty[component]
    if not sel.any():
        return
    ri, rj, rc, component = ri[sel], rj[sel], rc[sel], component[sel]
    ids, comp = np.unique(component, return_inverse=True)
    size = np.bincount(comp, minlength=len(ids))  # edges per component: a proxy of its size
    batch = np.cumsum(size) // (BATCH_ROWS * 4)  # consecutive components share a group until it is full
    edge_batch = batch[comp]
    order = np.argsort(edge_batch, kind="stable")
    bounds = np.flatnonzero(np.diff(edge_batch[order])) + 1
    for part in np.split(order, bounds):
        yield ri[part], rj[part], rc[part]
