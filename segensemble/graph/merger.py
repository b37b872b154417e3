"""Greedy merging of adjacent regions with mergeable border and region statistics.

The machinery under the boundary-merge consensus: a region adjacency graph
whose borders carry length-weighted sums of per-border quantities (member
votes, image gradient) and whose regions carry sums of per-pixel quantities
(colour, texture) and their size. Merging two regions adds their sums, so
the mean of every quantity over a merged border or region stays exact.

:meth:`RegionMerger.run` takes any key (a Python function); the two keys the
product uses run in compiled code (:mod:`segensemble.graph._merge`):
:meth:`RegionMerger.run_border_mean` (the ultrametric contour map's, bit for
bit the Python walk) and :meth:`RegionMerger.run_learned` (the learned
criterion's, equal to a few ulps).
"""

from __future__ import annotations

import heapq
from typing import Callable

import numpy as np

from segensemble.graph import _merge

__all__ = ["RegionMerger", "LEARNED_FEATURES", "LEARNED_SCALES"]

#: Order of the learned criterion's coefficients as :meth:`RegionMerger.run_learned` reads them (then the bias).
LEARNED_FEATURES = ("vote", "gradient", "colour", "texture", "size", "length")

#: Scales of the learned criterion's colour and texture features: Lab distance / 50, standardised-texture
#: distance / 2.5, both capped at 2.
LEARNED_SCALES = {"colour_scale": 50.0, "texture_scale": 2.5, "cap": 2.0}


class RegionMerger:
    """A region adjacency graph merged greedily by the weakest key.

    Parameters
    ----------
    n_regions : int
    pairs : (E, 2) int array
        Adjacent region pairs.
    length : (E,) array
        Border length of every pair (weights of the border means).
    border : (E, d) array
        Per-border quantities (their length-weighted mean is tracked).
    sizes : (n_regions,) array, optional
        Region sizes (pixels); ones by default.
    region_sums : (n_regions, r) array, optional
        Per-region sums of pixel quantities (their mean is tracked).

    Examples
    --------
    >>> m = RegionMerger(3, np.array([[0, 1], [1, 2]]), np.ones(2), np.array([[0.2], [0.6]]))
    >>> merges, heights = m.run(lambda m, u, v: m.border_mean(u, v)[0])
    >>> merges.tolist(), heights.tolist()
    ([[0, 1], [0, 2]], [0.2, 0.6])
    """

    def __init__(self, n_regions: int, pairs, length, border, *, sizes=None, region_sums=None):
        self.n_regions = int(n_regions)
        self.size = np.ones(self.n_regions) if sizes is None else np.asarray(sizes, dtype=np.float64).copy()
        self.total = float(self.size.sum())
        self.sums = None if region_sums is None else np.asarray(region_sums, dtype=np.float64).copy()
        #: Per-region means of the pixel quantities (``sums / size``, updated on every merge).
        self.means = None if self.sums is None else self.sums / self.size[:, None]
        length = np.asarray(length, dtype=np.float64)
        border = np.asarray(border, dtype=np.float64)
        if border.ndim == 1:
            border = border[:, None]
        # [sum length, sum length * quantity...] per border; a region's neighbours map to rows of it (a merge adds
        # gone's row into keep's, or re-points the row, so both directions always read one row)
        self._acc = np.column_stack([length, border * length[:, None]])
        self._pairs = np.ascontiguousarray(np.asarray(pairs, dtype=np.int64).reshape(-1, 2))
        self._neighbours: list[dict] | None = None

    @property
    def _nbr(self) -> list[dict]:
        """Every region's neighbours, each mapped to the row of their shared border (built when first needed)."""
        if self._neighbours is None:
            self._neighbours = [dict() for _ in range(self.n_regions)]
            for e, (u, v) in enumerate(self._pairs.tolist()):
                self._neighbours[u][v] = e
                self._neighbours[v][u] = e
        return self._neighbours

    def border_length(self, u: int, v: int) -> float:
        return float(self._acc[self._nbr[u][v], 0])

    def border_mean(self, u: int, v: int) -> np.ndarray:
        """Length-weighted mean of the border quantities between ``u`` and ``v``."""
        a = self._acc[self._nbr[u][v]]
        return a[1:] / a[0]

    def region_mean(self, u: int) -> np.ndarray:
        return self.means[u].copy()

    def border_sums(self, u, vs) -> np.ndarray:
        """(len(vs), 1 + d): border length and length-weighted sums of the quantities, ``u`` with each of ``vs``.

        ``u`` is one region, or an int array of one region per entry of ``vs`` (the borders of those pairs).
        """
        vs = vs.tolist() if isinstance(vs, np.ndarray) else vs
        if isinstance(u, np.ndarray):
            return self._acc[[self._nbr[a][b] for a, b in zip(u.tolist(), vs)]]
        nbr = self._nbr[u]
        return self._acc[[nbr[v] for v in vs]]

    def border_means(self, u: int, vs) -> np.ndarray:
        """(len(vs), d) length-weighted means of the border quantities between ``u`` and each of ``vs``."""
        acc = self.border_sums(u, vs)
        return acc[:, 1:] / acc[:, :1]

    def _compilable(self) -> bool:
        """Whether the compiled walks apply: not yet merged, distinct pairs of two regions each, positive sizes,
        finite sums and positive border lengths."""
        p, n = self._pairs, self.n_regions
        if self._neighbours is not None:
            return False
        if not len(p):
            return bool(np.all(self.size > 0))
        lo, hi = np.minimum(p[:, 0], p[:, 1]), np.maximum(p[:, 0], p[:, 1])
        return (bool(np.all(lo < hi)) and lo.min() >= 0 and hi.max() < n and len(np.unique(lo * n + hi)) == len(p)
                and bool(np.all(self.size > 0)) and bool(np.all(np.isfinite(self._acc)))
                and bool(np.all(self._acc[:, 0] > 0)) and (self.sums is None or bool(np.all(np.isfinite(self.sums)))))

    def _consumed(self):
        self._neighbours = [dict() for _ in range(self.n_regions)]  # the walk merged everything

    def run_border_mean(self, *, min_size: float = 0, size_penalty: float = 0.0):
        """:meth:`run` with the key ``border mean of quantity 0 - size_penalty * sqrt(A / smaller size)``, A a
        thousandth of the total size, in compiled code (bit for bit the Python walk's merges and heights)."""
        ref = self.size.sum() / 1000.0
        if not self._compilable():
            def key(m, u, v):
                return m.border_mean(u, v)[0] - size_penalty * np.sqrt(ref / min(m.size[u], m.size[v]))

            return self.run(key, min_size=min_size)
        merges, heights = _merge.mean_merge(self.n_regions, self._pairs, self._acc, self.size, float(size_penalty),
                                            float(ref), float(min_size))
        self._consumed()
        return merges, heights

    def run_learned(self, coefficients: dict, *, partition_weight: float = 0.0, min_size: float = 0):
        """Merge by the learned criterion in compiled code: the logistic probability of the six pair features of
        :func:`segensemble.consensus.merging.pair_features` (``coefficients``: one per name of
        :data:`LEARNED_FEATURES` and ``'bias'``), plus ``partition_weight`` times the mean of border quantity 2.

        The merges of the batched :meth:`run` with :func:`segensemble.consensus.merging.learned_key`, its keys
        computed with C's ``exp`` and ``log10`` instead of NumPy's vectorised ones (equal to a few ulps), about
        twenty times faster. Needs region sums of Lab colour (3 columns) and texture.
        """
        if self.sums is None or self.sums.shape[1] < 3 or self._acc.shape[1] < (4 if partition_weight else 3):
            raise ValueError("run_learned: needs Lab colour region sums and vote and gradient border quantities")
        if not self._compilable():
            raise ValueError("run_learned: needs positive sizes and finite, positive border lengths")
        weights = np.array([coefficients[k] for k in LEARNED_FEATURES] + [coefficients["bias"]], dtype=np.float64)
        merges, heights = _merge.learned_merge(self.n_regions, self._pairs, self._acc, self.size, self.sums,
                                               self.means, weights, self.total, float(partition_weight),
                                               float(min_size), **LEARNED_SCALES)
        self._consumed()
        return merges, heights

    def run(self, key: Callable, *, min_size: float = 0, on_merge: Callable | None = None, batched: bool = False):
        """Merge until one region per connected component is left.

        ``key(merger, u, v)`` scores a border (lower merges first); a pair with
        a region smaller than ``min_size`` is keyed ``key - 1``, so small
        regions go first, each along its weakest border. ``on_merge(merger,
        keep, gone)`` is called before every merge, with the statistics of
        both regions still apart. With ``batched``, ``key(merger, u, vs)``
        scores the borders of ``u`` with every region of the int array ``vs``
        at once (an array of keys): the same merges, far fewer calls. The
        first keying passes every border at once, ``u`` then being an int
        array of one region per entry of ``vs``.

        Returns
        -------
        merges : (n_merges, 2) int array
            Merged pairs in order (the smaller index survives).
        heights : (n_merges,) array
            Key of every merge, made non-decreasing (an ultrametric).
        """
        nbr, size, acc = self._nbr, self.size, self._acc

        def full_keys(u, vs: list) -> list:
            if batched:  # u: one region, or (the first keying) an int array of one region per entry of vs
                a = np.array(vs, dtype=np.int64)
                return (key(self, u, a) - (np.minimum(size[u], size[a]) < min_size)).tolist()
            return [key(self, u, v) - (1.0 if min(size[u], size[v]) < min_size else 0.0) for v in vs]

        def full_key(u, v):
            return full_keys(u, [v])[0]

        # Batched keys are checked for staleness by region versions (a merge bumps the survivor's), not recomputed.
        version = [0] * self.n_regions

        def entries(u, vs: list):
            if not batched:
                return [(k, min(u, v), max(u, v)) for k, v in zip(full_keys(u, vs), vs)]
            lo = [v if v < u else u for v in vs]
            hi = [u if v < u else v for v in vs]
            return zip(full_keys(u, vs), lo, hi, [version[a] for a in lo], [version[b] for b in hi])

        heap = []
        if batched:  # every border keyed in one call (the same entries, in the same order, as region by region)
            pairs = [(u, v) for u in range(self.n_regions) for v in nbr[u] if u < v]
            if pairs:
                us, vs = (list(t) for t in zip(*pairs))
                heap = [(k, u, v, 0, 0) for k, u, v in zip(full_keys(np.array(us, dtype=np.int64), vs), us, vs)]
        else:
            for u in range(self.n_regions):
                vs = [v for v in nbr[u] if u < v]
                if vs:
                    heap.extend(entries(u, vs))
        heapq.heapify(heap)
        merges, heights = [], []
        top = -np.inf
        pop = heapq.heappop
        while heap:
            entry = pop(heap)
            k, u, v = entry[0], entry[1], entry[2]
            if v not in nbr[u]:  # a merged region has no borders left: u or v is gone, or they merged
                continue
            if (entry[3] != version[u] or entry[4] != version[v]) if batched else abs(full_key(u, v) - k) > 1e-12:
                continue  # stale entry
            keep, gone = min(u, v), max(u, v)
            if on_merge is not None:
                on_merge(self, keep, gone)
            del nbr[keep][gone], nbr[gone][keep]
            size[keep] += size[gone]
            if self.sums is not None:
                self.sums[keep] += self.sums[gone]
                self.means[keep] = self.sums[keep] / size[keep]
            for w, e in nbr[gone].items():  # move gone's borders to keep
                del nbr[w][gone]
                if w in nbr[keep]:
                    acc[nbr[keep][w]] += acc[e]  # one row: both directions see the sum
                else:
                    nbr[keep][w] = e
                    nbr[w][keep] = e
            version[keep] += 1
            ws = list(nbr[keep])  # keep's statistics changed: re-key all its borders
            if ws:
                push = heapq.heappush
                for entry in entries(keep, ws):
                    push(heap, entry)
            nbr[gone] = {}
            top = max(top, k)
            merges.append((keep, gone))
            heights.append(top)
        return np.array(merges, dtype=np.int64).reshape(-1, 2), np.array(heights, dtype=np.float64)
