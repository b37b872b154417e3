"""Boundary consensus by hierarchical region merging (OWT-UCM style) on the atoms of an image ensemble.

The members vote on boundaries: between two adjacent atoms, the share of
members that separate them (``1 - X_uv``, the co-association complement) is
the consensus boundary strength of their shared border; optionally blended
with the image's colour gradient along the border. Regions are merged
greedily, always the adjacent pair with the weakest *mean* boundary along
their whole shared border (border-length weighted), as in the oriented
watershed / ultrametric contour map construction. The merge heights form an
ultrametric hierarchy: cutting it at a threshold or at K regions gives a
segmentation, and sweeping the cut gives a hierarchical result.
"""

from __future__ import annotations

import heapq
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from segensemble.consensus._base import N_CLUSTERS, REFINE, ConsensusClusterer
from segensemble.consensus._registry import REGISTRY
from segensemble.errors import InputError

__all__ = ["BoundaryMerge", "atom_adjacency", "merge_hierarchy", "cut_hierarchy", "MAX_UNGRIDDED"]

#: Objects accepted without a pixel grid (all pairs are borders).
MAX_UNGRIDDED = 2000


def atom_adjacency(index, labels, gradient=None):
    """Adjacent atom pairs with their border length, member vote and mean gradient.

    Parameters
    ----------
    index : (H, W) int array
        Atom of every pixel.
    labels : (n_atoms, m) int array
        Member labels of every atom.
    gradient : (H, W) array, optional
        Boundary-strength image; averaged over the two pixels of every
        4-adjacent pixel pair on the border.

    Returns
    -------
    pairs : (E, 2) int array (a < b)
    length : (E,) float array
        Number of 4-adjacent pixel pairs across the border.
    vote : (E,) float array
        Share of members that separate the two atoms.
    grad : (E,) float array or None

    Examples
    --------
    >>> idx = np.array([[0, 0, 1], [2, 2, 1]])
    >>> L = np.array([[0, 0], [1, 0], [1, 1]])
    >>> pairs, length, vote, _ = atom_adjacency(idx, L)
    >>> pairs.tolist(), length.tolist(), vote.tolist()
    ([[0, 1], [0, 2], [1, 2]], [1.0, 2.0, 1.0], [0.5, 1.0, 0.5])
    """
    from segensemble.segmenters._common import adjacent_pairs

    pairs, counts, d, inverse = adjacent_pairs(index, return_inverse=True)
    length = counts.astype(np.float64)
    vote = np.mean(labels[pairs[:, 0]] != labels[pairs[:, 1]], axis=1)
    grad = None
    if gradient is not None:
        g = np.asarray(gradient, dtype=np.float64)
        ga = np.concatenate([g[:, :-1].ravel(), g[:-1, :].ravel()])[d]
        gb = np.concatenate([g[:, 1:].ravel(), g[1:, :].ravel()])[d]
        grad = np.bincount(inverse, weights=(ga + gb) / 2, minlength=len(pairs)) / length
    return pairs, length, vote, grad


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
    size = np.ones(n_regions) if sizes is None else np.asarray(sizes, dtype=np.float64).copy()
    ref = size.sum() / 1000.0

    def key(u, v, acc):
        small = min(size[u], size[v])
        return acc[1] / acc[0] - (1.0 if small < min_size else 0.0) - size_penalty * np.sqrt(ref / small)

    nbr = [dict() for _ in range(n_regions)]  # region -> {neighbour: [sum length, sum length * strength]}
    for (u, v), ln, st in zip(np.asarray(pairs).tolist(), np.asarray(length, float), np.asarray(strength, float)):
        nbr[u][v] = [ln, ln * st]
        nbr[v][u] = nbr[u][v]
    heap = [(key(u, v, acc), u, v) for u in range(n_regions) for v, acc in nbr[u].items() if u < v]
    heapq.heapify(heap)
    alive = np.ones(n_regions, dtype=bool)
    merges, heights = [], []
    top = -np.inf
    while heap:
        k, u, v = heapq.heappop(heap)
        if not (alive[u] and alive[v]) or v not in nbr[u]:
            continue
        if abs(key(u, v, nbr[u][v]) - k) > 1e-12:  # stale entry
            continue
        keep, gone = min(u, v), max(u, v)
        del nbr[keep][gone], nbr[gone][keep]
        size[keep] += size[gone]
        for w, acc_w in nbr[gone].items():  # move gone's borders to keep
            del nbr[w][gone]
            if w in nbr[keep]:
                tot = nbr[keep][w]
                tot[0] += acc_w[0]
                tot[1] += acc_w[1]
            else:
                tot = [acc_w[0], acc_w[1]]
                nbr[keep][w] = tot
                nbr[w][keep] = tot
        for w, tot in nbr[keep].items():  # keep's size changed: re-key all its borders
            heapq.heappush(heap, (key(keep, w, tot), min(keep, w), max(keep, w)))
        nbr[gone] = {}
        alive[gone] = False
        top = max(top, k)
        merges.append((keep, gone))
        heights.append(top)
    return np.array(merges, dtype=np.int64).reshape(-1, 2), np.array(heights)


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
    for keep, gone in merges[:steps]:
        parent[gone] = keep
    for i in range(n_regions):  # merges point to smaller survivors: one pass in index order resolves chains
        parent[i] = parent[parent[i]]
    return np.unique(parent, return_inverse=True)[1]


@REGISTRY.register("merge")
class BoundaryMerge(ConsensusClusterer):
    """Boundary consensus: greedy merging of atoms by the members' mean boundary vote.

    Needs an ensemble built from segmentations (its pixel index gives the
    atoms' borders; without one, every object borders every other with
    weight ``w_u w_v`` — average linkage on ``1 - X``). The border strength is ``(1 - gradient_weight) * vote +
    gradient_weight * gradient``, with the gradient the image's colour
    boundary strength (:func:`segensemble.features.boundary_strength` of
    ``Ensemble.image``, or ``fit(..., gradient=...)``). Regions smaller than
    ``min_size`` pixels are merged first, along their weakest border.

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
        K regions, or ``'auto'``: cut the hierarchy at ``threshold``.
    threshold : float, default 0.5
        Cut height for ``'auto'`` (a border survives when its mean strength
        exceeds it).
    gradient_weight : float in [0, 1], default 0
        Weight of the image gradient in the border strength.
    min_size : float, default 0
        Pixels below which a region is merged before any other.
    size_penalty : float, default 0
        Lowers every border's key by ``size_penalty * sqrt(A / smaller size)``
        (A = a thousandth of the image), so small regions merge more readily.
    refine : bool or int, default False

    Attributes
    ----------
    merges_, heights_ : arrays
        The hierarchy over the atoms (see :func:`merge_hierarchy`).

    References
    ----------
    P. Arbeláez, M. Maire, C. Fowlkes, J. Malik, "Contour detection and
    hierarchical image segmentation", IEEE TPAMI 33(5), 2011 (greedy merging
    by mean boundary strength, ultrametric contour map).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> a = np.array([[0, 0, 1, 1]] * 2); b = np.array([[0, 0, 0, 1]] * 2)
    >>> ens = Ensemble.from_segmentations([a, a, b])
    >>> BoundaryMerge(n_clusters=2).fit(ens).labels_.tolist()
    [0, 1, 1]
    """

    _parameter_constraints: dict = {
        "n_clusters": N_CLUSTERS,
        "threshold": [Interval(Real, 0, None, closed="left")],
        "gradient_weight": [Interval(Real, 0, 1, closed="both")],
        "min_size": [Interval(Real, 0, None, closed="left")],
        "size_penalty": [Interval(Real, 0, None, closed="left")],
        "refine": REFINE,
    }

    def __init__(self, n_clusters="auto", *, threshold=0.5, gradient_weight=0.0, min_size=0, size_penalty=0.0,
                 refine=False):
        self.n_clusters = n_clusters
        self.threshold = threshold
        self.gradient_weight = gradient_weight
        self.min_size = min_size
        self.size_penalty = size_penalty
        self.refine = refine

    def fit(self, X, y=None, sample_weight=None, *, gradient=None):
        """Fit on an Ensemble built from segmentations; ``gradient`` (H, W) is the image's boundary strength."""
        self._gradient = gradient
        try:
            return super().fit(X, y, sample_weight)
        finally:
            self._gradient = None

    def _fit(self, ensemble):
        n = ensemble.n_objects
        if ensemble.index is None:  # no pixel grid: every object borders every other (average linkage on 1 - X)
            if n > MAX_UNGRIDDED:
                raise InputError(
                    f"X: without a pixel grid boundary merging compares all pairs, at most {MAX_UNGRIDDED} objects, "
                    f"got {n}; build the ensemble with Ensemble.from_segmentations, or use eac"
                )
            u, v = np.triu_indices(n, 1)
            pairs, length = np.stack([u, v], axis=1), ensemble.weights[u] * ensemble.weights[v]
            strength = np.mean(ensemble.labels[u] != ensemble.labels[v], axis=1)
            return self._cut(n, pairs, length, strength, ensemble.weights)
        grad = None
        if self.gradient_weight > 0:
            grad = self._gradient
            if grad is None and ensemble.image is not None:
                from segensemble.features import boundary_strength

                grad = boundary_strength(ensemble.image)
            if grad is None:
                raise InputError(
                    "gradient: gradient_weight > 0 needs the image (Ensemble.from_segmentations(segs, image)) "
                    "or fit(..., gradient=...)"
                )
        pairs, length, vote, g = atom_adjacency(ensemble.index, ensemble.labels, grad)
        strength = vote if g is None else (1 - self.gradient_weight) * vote + self.gradient_weight * g
        return self._cut(n, pairs, length, strength, ensemble.weights)

    def _cut(self, n, pairs, length, strength, weights):
        self.merges_, self.heights_ = merge_hierarchy(n, pairs, length, strength, sizes=weights,
                                                      min_size=self.min_size, size_penalty=self.size_penalty)
        if self.n_clusters == "auto":
            return cut_hierarchy(n, self.merges_, self.heights_, threshold=self.threshold)
        return cut_hierarchy(n, self.merges_, self.heights_, n_clusters=int(self.n_clusters))
