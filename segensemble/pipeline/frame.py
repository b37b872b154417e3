"""Image-aware fusion: any consensus method as a spatially coherent image segmenter.

A consensus function labels atoms (sets of pixels with one label signature);
on its own it knows nothing of space, so on a photograph its clusters fall
apart into hundreds of pieces, and its ``'auto'`` number of clusters (an
eigengap, a lifetime) knows nothing of what a region of a natural image is.
On an image every method is therefore run inside one shared frame:

1. **Learned boundary hierarchy of the atoms** — greedy merging of adjacent
   atoms by the learned probability that two regions lie in different
   ground-truth segments (:class:`~segensemble.consensus.merging.BoundaryMerge`,
   criterion ``'learned'``; regions below ``min_size`` first).
2. **Image-aware** ``'auto'`` — the number of regions of that hierarchy cut
   at the learned stopping probability ``threshold`` (what the default recipe
   uses on its own) is the K the method is fit with.
3. **Superatoms** — the hierarchy cut at the lower ``fine_threshold``: every
   superatom is a connected union of atoms the learned criterion is confident
   belong together. The consensus method clusters the superatoms (member
   label of a superatom = the member's pixel-majority label in it; weight =
   pixels), at the K asked for or the image-aware K.
4. **The method's partition as boundary evidence** — the superatoms are
   merged again, weakest key first, with key ``p + w * c``: ``p`` the learned
   probability and ``c`` the share of the shared border across which the
   method's partition separates the two regions (``w =
   partition_weight``); cut at K regions when K is given, else where the key
   reaches ``threshold`` ``t``: regions the method keeps apart merge only
   when ``p < t - w``, the others when ``p < t``. The method adds the
   boundaries it is sure of to the learned ones; it does not erase them.
   Regions are connected unions of adjacent (connected) atoms; the
   pipeline's post-processing then merges the specks left with their atoms
   and pieces below ``min_size``.

Without an image (plain label arrays, ``fuse --inputs`` without ``--image``)
none of this applies: the method is the one of its paper.

References
----------
P. Arbeláez, M. Maire, C. Fowlkes, J. Malik, "Contour detection and hierarchical
image segmentation", IEEE TPAMI 33(5), 2011 (greedy region merging, ultrametric
contour map). J. Nunez-Iglesias et al., "Machine learning of hierarchical
clustering to segment 2D and 3D images", PLoS ONE 8(8), 2013 (learned merge
priority). Z. Li, X.-M. Wu, S.-F. Chang, "Segmentation using superpixels: a
bipartite graph partitioning approach", CVPR 2012 (fusing segmentations on
superpixels as the objects of the consensus). A. Vega-Pons, X. Jiang,
J. Ruiz-Shulcloper, "Segmentation ensemble via kernels", ACPR 2011 (consensus
segmentation on super-pixels).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from segensemble.constraints import Interval, StrOptions
from segensemble.estimator import clone
from segensemble.graph.merger import RegionMerger
from segensemble.consensus.merging import (check_coefficients, image_statistics, atom_adjacency, cut_hierarchy,
                                           learned_merges, normalised_member_weights)
from segensemble.pipeline.superatoms import MIN_PIECE, connected_atoms, majority_ensemble  # noqa: F401
from segensemble.ensemble import Ensemble
from segensemble.errors import InputError
from segensemble.segmentation import canonical_codes
from segensemble.features import boundary_strength

__all__ = ["SPATIAL_DEFAULTS", "SpatialFusion", "image_aware_fit", "check_spatial", "majority_ensemble",
           "connected_atoms", "merge_params", "merge_regions"]

#: Settings of the image-aware frame (a recipe's ``spatial`` table overrides them). ``threshold`` and
#: ``min_size`` are the default recipe's cut and minimum region size (chosen on BSDS500 val);
#: ``fine_threshold`` and ``partition_weight`` were chosen on BSDS500 val
#: (``benchmarks/methods_on_bsds.py``). ``colourless_threshold`` (None: ``threshold``) is the cut of a picture
#: without colour (:mod:`segensemble.pipeline.colourless`; the runner puts it in ``threshold``'s place).
SPATIAL_DEFAULTS = {
    "threshold": 0.45,
    "colourless_threshold": None,
    "min_size": 200,
    "fine_threshold": 0.3,
    "partition_weight": 0.05,
    "member_weights": None,
    "coefficients": None,
    "engine": "numpy",
}

_CONSTRAINTS = {
    "threshold": Interval(Real, 0, 1, closed="both"),
    "min_size": Interval(Integral, 0, None, closed="left"),
    "fine_threshold": Interval(Real, 0, 1, closed="both"),
    "partition_weight": Interval(Real, 0, None, closed="left"),
    "engine": StrOptions({"numpy", "compiled"}),
}


def check_spatial(settings) -> dict:
    """The image-aware settings with defaults filled in, validated (one-line errors naming the key).

    Examples
    --------
    >>> check_spatial({"threshold": 0.4})["threshold"], check_spatial({})["min_size"]
    (0.4, 200)
    >>> check_spatial({"bogus": 1})
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: spatial: unknown key 'bogus'; expected one of threshold, colourless_threshold, \
min_size, fine_threshold, partition_weight, member_weights, coefficients, engine
    """
    if settings is None:
        settings = {}
    if not isinstance(settings, dict):
        raise InputError(f"spatial: expected a table of settings, got {settings!r}")
    unknown = [k for k in settings if k not in SPATIAL_DEFAULTS]
    if unknown:
        raise InputError(f"spatial: unknown key {unknown[0]!r}; expected one of {', '.join(SPATIAL_DEFAULTS)}")
    out = {**SPATIAL_DEFAULTS, **settings}
    for key, constraint in _CONSTRAINTS.items():
        value = out[key]
        if not constraint.accepts(value):
            raise InputError(f"spatial: {key}: expected {constraint}, got {value!r}")
    cut = out["colourless_threshold"]
    if cut is not None and not _CONSTRAINTS["threshold"].accepts(cut):
        raise InputError(f"spatial: colourless_threshold: expected {_CONSTRAINTS['threshold']} (or none), got {cut!r}")
    if out["coefficients"] is not None:
        check_coefficients(out["coefficients"])
    return out


def merge_params(settings) -> dict:
    """The ``merge`` parameters that make boundary merging the image-aware frame itself (no partition vote).

    Examples
    --------
    >>> sorted(merge_params({}))
    ['coefficients', 'criterion', 'engine', 'member_weights', 'min_size', 'threshold']
    """
    s = check_spatial(settings)
    return {"criterion": "auto", "threshold": s["threshold"], "min_size": s["min_size"],
            "member_weights": s["member_weights"], "coefficients": s["coefficients"], "engine": s["engine"]}


class _Borders:
    """Border and region statistics of the atoms, computed once; a :class:`RegionMerger` for any grouping."""

    def __init__(self, ensemble, gradient, member_weights):
        self.pairs, self.length, vote, grad = atom_adjacency(ensemble.index, ensemble.labels, gradient,
                                                             member_weights=member_weights)
        self.border = np.column_stack([vote, grad])
        self.sums = image_statistics(ensemble, ensemble.image)
        self.weights = ensemble.weights

    def merger(self, groups, partition=None) -> RegionMerger:
        """Regions = groups of atoms; with ``partition`` (a label per group) its separation is a third border column."""
        n = int(groups.max()) + 1
        a, b = groups[self.pairs[:, 0]], groups[self.pairs[:, 1]]
        cross = a != b
        lo, hi = np.minimum(a, b)[cross], np.maximum(a, b)[cross]
        length, border = self.length[cross], self.border[cross]
        if partition is not None:
            border = np.column_stack([border, partition[lo] != partition[hi]])
        codes, inverse = np.unique(lo * n + hi, return_inverse=True)
        total = np.bincount(inverse, weights=length)
        means = np.column_stack([np.bincount(inverse, weights=length * border[:, c]) for c in range(border.shape[1])])
        sums = np.column_stack([np.bincount(groups, weights=self.sums[:, c], minlength=n)
                                for c in range(self.sums.shape[1])])
        return RegionMerger(n, np.column_stack([codes // n, codes % n]), total, means / total[:, None],
                            sizes=np.bincount(groups, weights=self.weights, minlength=n), region_sums=sums)


@dataclass
class SpatialFusion:
    """What :func:`image_aware_fit` made.

    Attributes
    ----------
    labels : (n_atoms,) int array
        The image-aware consensus of the atoms (0..K-1).
    n_segments : int
        K: the number asked for, or with ``'auto'`` the number of regions
        of the result (the method was fit with the frame's K).
    atoms : Ensemble
        The atoms of the frame: the 4-connected pieces of the input's atoms
        (:func:`connected_atoms`); ``atoms.to_image(labels)`` paints the result.
    superatoms : (n_atoms,) int array
        Superatom of every atom.
    ensemble : Ensemble
        The superatoms' ensemble the method was fit on.
    partition : (n_superatoms,) int array
        The method's own partition of the superatoms.
    merges, heights : arrays
        The final hierarchy over the superatoms (cut it at any number of
        regions with :meth:`cut`).
    min_size : int
        The frame's minimum region size (pixels).
    estimator : fitted consensus estimator
        Fit on ``ensemble`` (a clone of the one given).
    frame_seconds : float
        Time it took to compute the atoms' learned hierarchy (shared by
        every method fused from the same members and image).
    frame_cached : bool
        The hierarchy was taken from an earlier call with the same inputs.
    """

    labels: np.ndarray
    n_segments: int
    atoms: Ensemble
    superatoms: np.ndarray
    ensemble: Ensemble
    partition: np.ndarray
    merges: np.ndarray
    heights: np.ndarray
    min_size: int
    estimator: object
    frame_seconds: float = 0.0
    frame_cached: bool = False

    def cut(self, n_segments: int) -> np.ndarray:
        """Atom labels of the final hierarchy cut at ``n_segments`` regions."""
        n = self.ensemble.n_objects
        return cut_hierarchy(n, self.merges, self.heights, n_clusters=min(int(n_segments), n))[self.superatoms]


@dataclass
class _Frame:
    """What the frame computes from the members, the image and the settings alone (shared by every method)."""

    borders: _Borders
    merges: np.ndarray
    heights: np.ndarray
    coefficients: dict
    seconds: float


#: Frames of the last few ensembles (keyed by a digest of members, image and settings): fusing the same members
#: with several methods, or K after K, computes the atoms' learned hierarchy once.
_FRAMES: dict = {}
#: The settings the atoms' hierarchy depends on (the cuts are made afterwards, for every threshold and K).
_FRAME_SETTINGS = ("min_size", "member_weights", "coefficients", "engine")
_FRAMES_KEPT = 2
_FRAMES_LOCK = threading.Lock()


def _digest(ensemble, gradient, settings) -> str:
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    for a in (ensemble.index, ensemble.labels, ensemble.weights, ensemble.image,
              np.zeros(0) if gradient is None else np.asarray(gradient, dtype=np.float64)):
        h.update(str(a.shape).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    h.update(repr(sorted(settings.items())).encode())
    return h.hexdigest()


def _frame(ensemble, gradient, s) -> tuple[_Frame, bool]:
    """The frame of an ensemble (from the cache when the same inputs were seen last); (frame, cached)."""
    import time

    key = _digest(ensemble, gradient, {name: s[name] for name in _FRAME_SETTINGS})
    with _FRAMES_LOCK:
        if key in _FRAMES:
            return _FRAMES[key], True
    start = time.perf_counter()
    weights = None
    if s["member_weights"] is not None:
        try:
            weights = normalised_member_weights(s["member_weights"], ensemble.n_members)
        except InputError as exc:
            raise InputError(f"spatial: {exc}") from exc
    coefficients = check_coefficients(s["coefficients"])  # the learned defaults for None
    borders = _Borders(ensemble, boundary_strength(ensemble.image) if gradient is None else gradient, weights)
    merges, heights = learned_merges(borders.merger(np.arange(ensemble.n_objects)), coefficients, engine=s["engine"],
                                     min_size=s["min_size"])
    frame = _Frame(borders, merges, heights, coefficients, time.perf_counter() - start)
    with _FRAMES_LOCK:
        while len(_FRAMES) >= _FRAMES_KEPT:
            _FRAMES.pop(next(iter(_FRAMES)))
        _FRAMES[key] = frame
    return frame, False


def image_aware_fit(estimator, ensemble: Ensemble, *, n_segments="auto", gradient=None, **settings) -> SpatialFusion:
    """Fit a consensus estimator on an image ensemble inside the image-aware frame (see the module docstring).

    Parameters
    ----------
    estimator : consensus estimator
        Its ``n_clusters`` is set to K (a clone is fit; the caller's is not changed).
    ensemble : Ensemble
        Built by :meth:`Ensemble.from_segmentations` with the image.
    n_segments : int or 'auto'
        K regions, or the image-aware K (the learned hierarchy's regions at ``threshold``).
    gradient : (H, W) array, optional
        Boundary strength; default :func:`segensemble.features.boundary_strength` of the image.
    **settings
        :data:`SPATIAL_DEFAULTS` keys.

    Returns
    -------
    SpatialFusion

    Raises
    ------
    InputError
        An ensemble without pixel grid or image; bad settings.

    Examples
    --------
    >>> from segensemble import consensus
    >>> img = np.zeros((20, 20, 3)); img[:, 10:] = 1
    >>> a = np.zeros((20, 20), int); a[:, 10:] = 1; b = np.zeros((20, 20), int); b[10:] = 1
    >>> ens = Ensemble.from_segmentations([a, a, b], image=img)
    >>> fit = image_aware_fit(consensus.get("vote")(), ens, min_size=0)
    >>> fit.atoms.to_image(fit.labels)[0, [0, 19]].tolist(), fit.n_segments
    ([0, 1], 2)
    """
    if ensemble.index is None or ensemble.image is None:
        raise InputError("ensemble: image-aware fusion needs an ensemble built from segmentations with the image")
    s = check_spatial(settings)
    ensemble = connected_atoms(ensemble)
    frame, cached = _frame(ensemble, gradient, s)
    n = ensemble.n_objects
    if n_segments == "auto":
        k = int(cut_hierarchy(n, frame.merges, frame.heights, threshold=s["threshold"]).max()) + 1
    else:
        k = min(int(n_segments), n)
    superatoms = cut_hierarchy(n, frame.merges, frame.heights, threshold=s["fine_threshold"])
    if superatoms.max() + 1 < min(2 * k, n):  # enough superatoms to choose K regions from
        superatoms = cut_hierarchy(n, frame.merges, frame.heights, n_clusters=min(2 * k, n))
    reduced = majority_ensemble(ensemble, superatoms)
    est = clone(estimator).set_params(n_clusters=min(k, reduced.n_objects)).fit(reduced)
    merges, heights = learned_merges(frame.borders.merger(superatoms, est.labels_), frame.coefficients,
                                     engine=s["engine"], partition_weight=s["partition_weight"], min_size=s["min_size"])
    fusion = SpatialFusion(None, k, ensemble, superatoms, reduced, est.labels_, merges, heights, int(s["min_size"]),
                           est, frame.seconds, cached)
    if n_segments == "auto":  # the learned stopping probability, on the key that carries the method's vote
        fusion.labels = cut_hierarchy(reduced.n_objects, merges, heights, threshold=s["threshold"])[superatoms]
        fusion.n_segments = int(fusion.labels.max()) + 1
    else:
        fusion.labels = fusion.cut(k)
    return fusion


def merge_regions(labels, ensemble: Ensemble, n_segments: int, *, gradient=None, member_weights=None,
                  coefficients=None, engine: str = "numpy") -> np.ndarray:
    """Merge the adjacent regions of a label image down to ``n_segments`` regions by the learned criterion.

    The regions are merged greedily, weakest border first, by the learned
    probability that two regions lie in different segments, from the
    members' (weighted) boundary vote across the border, the gradient along
    it and the regions' colour, texture and size — the frame's criterion,
    on the regions of ``labels`` instead of the atoms. Every merge joins two
    adjacent regions, so connected regions stay connected.

    Parameters
    ----------
    labels : (H, W) int array
        The regions (0..n-1).
    ensemble : Ensemble
        The members (with pixel grid and image) the regions were fused from.
    n_segments : int
        The number of regions wanted (more are merged; fewer are returned as they are).
    gradient, member_weights, coefficients, engine
        As in the frame (:data:`SPATIAL_DEFAULTS`); the defaults for None.

    Returns
    -------
    (H, W) int array
        ``labels`` with regions merged, 0..min(n, n_segments)-1.

    Examples
    --------
    >>> img = np.zeros((4, 6, 3)); img[:, 3:] = 1
    >>> a = np.zeros((4, 6), int); a[:, 3:] = 1
    >>> thirds = np.repeat(np.arange(3), 2)[None].repeat(4, axis=0)
    >>> merge_regions(thirds, Ensemble.from_segmentations([a, a], image=img), 2)[0].tolist()
    [0, 0, 1, 1, 1, 1]
    """
    regions = np.unique(np.asarray(labels), return_inverse=True)[1].reshape(np.shape(labels))
    n = int(regions.max()) + 1
    if n <= n_segments:
        return regions
    # pieces: the atoms cut by the regions, each with its atom's member labels
    atom = ensemble.index.ravel().astype(np.int64)
    joint, _ = canonical_codes(atom * n + regions.ravel())
    m = int(joint.max()) + 1
    parent, region = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
    parent[joint], region[joint] = atom, regions.ravel()
    pieces = Ensemble(ensemble.labels[parent], np.bincount(joint, minlength=m).astype(np.float64),
                      index=joint.reshape(regions.shape), image=ensemble.image, names=ensemble.names)
    weights = None if member_weights is None else normalised_member_weights(member_weights, ensemble.n_members)
    borders = _Borders(pieces, boundary_strength(ensemble.image) if gradient is None else gradient, weights)
    merges, heights = learned_merges(borders.merger(region), check_coefficients(coefficients), engine=engine)
    return cut_hierarchy(n, merges, heights, n_clusters=int(n_segments))[regions]
