"""Greedy merging of adjacent regions with mergeable border and region statistics.

The machinery under the boundary-merge consensus: a region adjacency graph
whose borders carry length-weighted sums of per-border quantities (member
votes, image gradient) and whose regions carry sums of per-pixel quantities
(colour, texture) and their size. Merging two regions adds their sums, so
the mean of every quantity over a merged border or region stays exact.
"""

from __future__ import annotations

import heapq
from typing import Callable

import numpy as np

__all__ = ["RegionMerger"]


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
        length = np.asarray(length, dtype=np.float64)
        border = np.asarray(border, dtype=np.float64)
        if border.ndim == 1:
            border = border[:, None]
        acc = np.column_stack([length, border * length[:, None]])  # [sum length, sum length * quantity...]
        self._nbr: list[dict] = [dict() for _ in range(self.n_regions)]
        for (u, v), a in zip(np.asarray(pairs, dtype=np.int64).reshape(-1, 2).tolist(), acc):
            self._nbr[u][v] = a
            self._nbr[v][u] = a

    def border_length(self, u: int, v: int) -> float:
        return float(self._nbr[u][v][0])

    def border_mean(self, u: int, v: int) -> np.ndarray:
        """Length-weighted mean of the border quantities between ``u`` and ``v``."""
        a = self._nbr[u][v]
        return a[1:] / a[0]

    def region_mean(self, u: int) -> np.ndarray:
        return self.sums[u] / self.size[u]

    def border_means(self, u: int, vs) -> np.ndarray:
        """(len(vs), d) length-weighted means of the border quantities between ``u`` and each of ``vs``."""
        acc = np.array([self._nbr[u][v] for v in vs])
        return acc[:, 1:] / acc[:, :1]

    def border_lengths(self, u: int, vs) -> np.ndarray:
        return np.array([self._nbr[u][v][0] for v in vs])

    def run(self, key: Callable, *, min_size: float = 0, on_merge: Callable | None = None, batched: bool = False):
        """Merge until one region per connected component is left.

        ``key(merger, u, v)`` scores a border (lower merges first); a pair with
        a region smaller than ``min_size`` is keyed ``key - 1``, so small
        regions go first, each along its weakest border. ``on_merge(merger,
        keep, gone)`` is called before every merge, with the statistics of
        both regions still apart. With ``batched``, ``key(merger, u, vs)``
        scores the borders of ``u`` with every region of the int array ``vs``
        at once (an array of keys): the same merges, far fewer calls.

        Returns
        -------
        merges : (n_merges, 2) int array
            Merged pairs in order (the smaller index survives).
        heights : (n_merges,) array
            Key of every merge, made non-decreasing (an ultrametric).
        """
        nbr, size = self._nbr, self.size

        def full_keys(u, vs: list) -> list:
            if batched:
                a = np.array(vs, dtype=np.int64)
                return (key(self, u, a) - (np.minimum(size[u], size[a]) < min_size)).tolist()
            return [key(self, u, v) - (1.0 if min(size[u], size[v]) < min_size else 0.0) for v in vs]

        def full_key(u, v):
            return full_keys(u, [v])[0]

        # Batched keys are checked for staleness by region versions (a merge bumps the survivor's), not recomputed.
        version = [0] * self.n_regions

        def entries(u, vs: list) -> list:
            out = []
            for k, v in zip(full_keys(u, vs), vs):
                a, b = min(u, v), max(u, v)
                out.append((k, a, b, version[a], version[b]) if batched else (k, a, b))
            return out

        heap = []
        for u in range(self.n_regions):
            vs = [v for v in nbr[u] if u < v]
            if vs:
                heap.extend(entries(u, vs))
        heapq.heapify(heap)
        alive = np.ones(self.n_regions, dtype=bool)
        merges, heights = [], []
        top = -np.inf
        while heap:
            k, u, v, *stamp = heapq.heappop(heap)
            if not (alive[u] and alive[v]) or v not in nbr[u]:
                continue
            if (stamp != [version[u], version[v]]) if batched else abs(full_key(u, v) - k) > 1e-12:  # stale entry
                continue
            keep, gone = min(u, v), max(u, v)
            if on_merge is not None:
                on_merge(self, keep, gone)
            del nbr[keep][gone], nbr[gone][keep]
            size[keep] += size[gone]
            if self.sums is not None:
                self.sums[keep] += self.sums[gone]
            for w, acc_w in nbr[gone].items():  # move gone's borders to keep
                del nbr[w][gone]
                if w in nbr[keep]:
                    nbr[keep][w] += acc_w  # shared array: both directions see the sum
                else:
                    nbr[keep][w] = acc_w
                    nbr[w][keep] = acc_w
            version[keep] += 1
            ws = list(nbr[keep])  # keep's statistics changed: re-key all its borders
            if ws:
                for entry in entries(keep, ws):
                    heapq.heappush(heap, entry)
            nbr[gone] = {}
            alive[gone] = False
            top = max(top, k)
            merges.append((keep, gone))
            heights.append(top)
        return np.array(merges, dtype=np.int64).reshape(-1, 2), np.array(heights, dtype=np.float64)
