"""Merge trees of regions: built by greedy merging of the weakest border, cut at a height or a region count.

The graph layer's hierarchy, shared by the consensus ``merge`` method, the
image-aware frame, the boundary detector's ultrametric contour map and the
recipe runner's hierarchy levels. A tree is ``(merges, heights)``: the pairs
of representatives merged in order (the smaller index survives) and the
non-decreasing height of each merge, over ``n_regions`` leaves; :class:`Hierarchy` holds one
(the model is higra's tree with altitudes, kept as its list of merges).
"""

from __future__ import annotations

import numpy as np

from segensemble.errors import InputError
from segensemble.graph.merger import RegionMerger

__all__ = ["Hierarchy", "merge_hierarchy", "cut_hierarchy", "ultrametric_distances"]


def merge_hierarchy(n_regions: int, pairs, length, strength, *, sizes=None, min_size: float = 0,
                    size_penalty: float = 0.0):
    """Greedy merging by the weakest mean border strength.

    With ``sizes`` and ``min_size``, a pair with a region smaller than
    ``min_size`` is keyed ``strength - 1``: small regions are merged first,
    each along its weakest border, before any border between large regions.
    ``size_penalty`` lowers the key of every pair by
    ``size_penalty * sqrt(A / min(size_u, size_v))`` with A a thousandth of
    the total size, so smaller regions merge more readily at every scale.

    Parameters
    ----------
    n_regions : int
    pairs : (E, 2) int array
    length : (E,) array
        Border lengths (weights of the mean).
    strength : (E,) array
        Boundary strength of every border, in [0, 1].
    sizes : (n_regions,) array, optional
        Region sizes (pixels).
    min_size : float, default 0
    size_penalty : float, default 0

    Returns
    -------
    merges : (n_merges, 2) int array
        Representatives merged in order (the smaller index survives).
    heights : (n_merges,) array, non-decreasing
        Key of the border removed by each merge (mean strength, minus 1 for
        small regions), made monotone.

    Examples
    --------
    >>> m, h = merge_hierarchy(3, np.array([[0, 1], [1, 2]]), np.ones(2), np.array([0.2, 0.6]))
    >>> m.tolist(), h.tolist()
    ([[0, 1], [0, 2]], [0.2, 0.6])
    """
    sizes = np.ones(n_regions) if sizes is None else np.asarray(sizes, dtype=np.float64)
    return RegionMerger(n_regions, pairs, length, strength, sizes=sizes).run_border_mean(
        min_size=min_size, size_penalty=size_penalty)


def cut_hierarchy(n_regions: int, merges, heights, *, threshold=None, n_clusters=None):
    """Labels after the merges below ``threshold`` (or down to ``n_clusters`` regions).

    Examples
    --------
    >>> m, h = np.array([[0, 1], [0, 2]]), np.array([0.2, 0.6])
    >>> cut_hierarchy(3, m, h, threshold=0.5).tolist(), cut_hierarchy(3, m, h, n_clusters=1).tolist()
    ([0, 0, 1], [0, 0, 0])
    """
    if n_clusters is not None:
        steps = max(0, min(len(merges), n_regions - int(n_clusters)))
    else:
        steps = int(np.searchsorted(heights, threshold, side="right"))
    parent = np.arange(n_regions)
    done = np.asarray(merges, dtype=np.int64).reshape(-1, 2)[:steps]
    parent[done[:, 1]] = done[:, 0]  # a region is merged away once: its survivor
    while True:  # pointer jumping: every region ends at the root of its chain
        jumped = parent[parent]
        if np.array_equal(jumped, parent):
            break
        parent = jumped
    return np.unique(parent, return_inverse=True)[1]


def ultrametric_distances(n_regions: int, merges, heights, pairs) -> np.ndarray:
    """Height at which the two regions of every pair first join in the hierarchy, (len(pairs),).

    Pairs never joined (separate components) get ``inf``.

    Examples
    --------
    >>> ultrametric_distances(3, np.array([[0, 1], [0, 2]]), np.array([0.2, 0.6]),
    ...                       np.array([[0, 1], [1, 2], [0, 2]])).tolist()
    [0.2, 0.6, 0.6]
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    out = np.full(len(pairs), np.inf)
    # every component keeps the set of unresolved pairs touching it; joining two resolves their common ones
    touching = [set() for _ in range(int(n_regions))]
    for e, (a, b) in enumerate(pairs.tolist()):
        touching[a].add(e)
        touching[b].add(e)
    owner = list(range(int(n_regions)))
    for (keep, gone), h in zip(np.asarray(merges, dtype=np.int64).tolist(), np.asarray(heights).tolist()):
        a, b = owner[keep], owner[gone]
        small, big = (a, b) if len(touching[a]) < len(touching[b]) else (b, a)
        common = touching[small] & touching[big]
        for e in common:
            out[e] = h
        touching[big] ^= touching[small]
        touching[small] = set()
        owner[keep] = owner[gone] = big
    return out


class Hierarchy:
    """A merge tree over ``n_leaves`` leaves: the one hierarchy type of the product.

    Built by :func:`merge_hierarchy` (the region merger), by the consensus
    linkages (EAC, PCE's meta-clusters) and by the boundary detector's
    ultrametric contour map; cut at a height or a region count, and read as
    boundary persistence (the height at which two leaves first join).

    Parameters
    ----------
    n_leaves : int
    merges : (n_merges, 2) int array
        Representatives merged in order; the smaller index survives and represents the union.
    heights : (n_merges,) array, non-decreasing

    Examples
    --------
    >>> h = Hierarchy(3, np.array([[0, 1], [0, 2]]), np.array([0.2, 0.6]))
    >>> h.cut(threshold=0.5).tolist(), h.cut(n_regions=1).tolist()
    ([0, 0, 1], [0, 0, 0])
    >>> h.persistence(np.array([[1, 2]])).tolist()
    [0.6]
    """

    def __init__(self, n_leaves: int, merges, heights):
        self.n_leaves = int(n_leaves)
        self.merges = np.asarray(merges, dtype=np.int64).reshape(-1, 2)
        self.heights = np.asarray(heights, dtype=np.float64)
        if len(self.heights) != len(self.merges) or len(self.merges) >= max(self.n_leaves, 1):
            raise InputError(f"merges, heights: expected as many heights as merges and fewer merges than the "
                             f"{self.n_leaves} leaves, got {len(self.merges)} merges and {len(self.heights)} heights")

    def cut(self, *, threshold=None, n_regions=None) -> np.ndarray:
        """(n_leaves,) labels after the merges up to ``threshold`` (inclusive) or down to ``n_regions`` regions."""
        if (threshold is None) == (n_regions is None):
            raise InputError("cut: give exactly one of threshold and n_regions")
        return cut_hierarchy(self.n_leaves, self.merges, self.heights, threshold=threshold, n_clusters=n_regions)

    def persistence(self, pairs) -> np.ndarray:
        """Height at which the two leaves of every pair first join (``inf`` if never), (len(pairs),)."""
        return ultrametric_distances(self.n_leaves, self.merges, self.heights, pairs)
