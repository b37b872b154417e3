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

from numbers import Real

import numpy as np
from segensemble.constraints import Interval, StrOptions

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer
from segensemble.graph.hierarchy import cut_hierarchy, merge_hierarchy  # noqa: F401  (public here too)
from segensemble.graph.adjacency import atom_adjacency
from segensemble.graph.merger import RegionMerger
from segensemble.consensus._registry import REGISTRY
from segensemble.abstentions import separation_matrix, separation_share
from segensemble.consensus._linkage import weighted_linkage
from segensemble.consensus._memory import check_dense
from segensemble.errors import InputError
from segensemble.validation import check_member_weights
from segensemble.features import boundary_strength, lab_colour, standardise, texture_features

__all__ = ["BoundaryMerge", "atom_adjacency", "merge_hierarchy", "cut_hierarchy", "pair_features", "pair_features_many",
           "normalised_member_weights", "region_merger", "boundary_probability", "learned_key", "check_coefficients",
           "image_statistics", "PAIR_FEATURES", "LEARNED_COEFFICIENTS", "LEARNED_THRESHOLD", "MAX_UNGRIDDED"]

#: Objects accepted without a pixel grid when ``min_size`` or ``size_penalty`` make every pair a border to merge.
MAX_UNGRIDDED = 2000

#: What the learned criterion sees of two adjacent regions (see :func:`pair_features`).
PAIR_FEATURES = ("vote", "gradient", "colour", "texture", "size", "length")

#: Logistic coefficients of the learned criterion for an unweighted member vote, fitted on the
#: 200 BSDS500 train images only by ``benchmarks/train_merge_model.py``.
LEARNED_COEFFICIENTS = {
    "vote": 3.251, "gradient": 1.545, "colour": 1.508, "texture": 0.601, "size": 2.233, "length": -0.499,
    "bias": -3.973,
}

#: Cut of the learned criterion (``threshold='auto'``), chosen on the 100 BSDS500 val images.
LEARNED_THRESHOLD = 0.45

#: Feature scales: Lab distance / 50, standardised-texture distance / 2.5 (both capped at 2).
_COLOUR_SCALE, _TEXTURE_SCALE, _CAP = 50.0, 2.5, 2.0


def pair_features(merger: RegionMerger, u: int, v: int) -> np.ndarray:
    """The :data:`PAIR_FEATURES` of two adjacent regions of a merger built by :class:`BoundaryMerge`.

    ``vote`` and ``gradient`` are means along the shared border (border
    quantities 0 and 1); ``colour`` and ``texture`` the distances between
    the regions' mean Lab colour (region sums 0-2, over 50) and mean
    standardised texture energy (the remaining sums, over 2.5), capped at 2;
    ``size`` is ``log10(smaller size / image size) / 4 + 1`` and ``length``
    ``log10(border length) / 3``.

    Examples
    --------
    >>> m = RegionMerger(2, np.array([[0, 1]]), np.array([10.0]), np.array([[1.0, 0.5]]), sizes=np.array([100, 900]),
    ...                  region_sums=np.zeros((2, 9)))
    >>> pair_features(m, 0, 1).round(3).tolist()
    [1.0, 0.5, 0.0, 0.0, 0.75, 0.333]
    """
    su, sv = merger.size[u], merger.size[v]
    d = merger.region_mean(u) - merger.region_mean(v)
    return np.array([
        *merger.border_mean(u, v)[:2],
        min(np.sqrt(d[:3] @ d[:3]) / _COLOUR_SCALE, _CAP),
        min(np.sqrt(d[3:] @ d[3:]) / _TEXTURE_SCALE, _CAP),
        np.log10(min(su, sv) / merger.total) / 4 + 1,
        np.log10(merger.border_length(u, v)) / 3,
    ])


def pair_features_many(merger: RegionMerger, u: int, vs) -> np.ndarray:
    """:func:`pair_features` of region ``u`` with each region of the int array ``vs`` at once, (len(vs), 6).

    ``u`` may also be an int array, one region per entry of ``vs`` (any set of adjacent pairs).

    The same quantities computed as arrays (equal to :func:`pair_features` up to rounding); the image-aware frame
    keys its merges with it.

    Examples
    --------
    >>> m = RegionMerger(2, np.array([[0, 1]]), np.array([10.0]), np.array([[1.0, 0.5]]), sizes=np.array([100, 900]),
    ...                  region_sums=np.zeros((2, 9)))
    >>> pair_features_many(m, 0, np.array([1])).round(3).tolist()
    [[1.0, 0.5, 0.0, 0.0, 0.75, 0.333]]
    """
    vs = np.asarray(vs, dtype=np.int64)
    d = merger.means[u] - merger.means[vs]
    acc = merger.border_sums(u, vs)
    out = np.empty((len(vs), len(PAIR_FEATURES)))
    np.divide(acc[:, 1:3], acc[:, :1], out=out[:, :2])
    out[:, 2] = np.minimum(np.sqrt(np.einsum("ij,ij->i", d[:, :3], d[:, :3])) / _COLOUR_SCALE, _CAP)
    out[:, 3] = np.minimum(np.sqrt(np.einsum("ij,ij->i", d[:, 3:], d[:, 3:])) / _TEXTURE_SCALE, _CAP)
    out[:, 4] = np.log10(np.minimum(merger.size[u], merger.size[vs]) / merger.total) / 4 + 1
    out[:, 5] = np.log10(acc[:, 0]) / 3
    return out


def boundary_probability(features, coefficients):
    """Logistic probability that a border separates two ground-truth segments.

    ``features``: one row of :data:`PAIR_FEATURES` (a float is returned) or an (n, 6) array (n probabilities).

    Examples
    --------
    >>> round(boundary_probability(np.zeros(6), LEARNED_COEFFICIENTS), 3)
    0.018
    """
    f = np.asarray(features, dtype=np.float64)
    if f.ndim == 2:
        z = coefficients["bias"] + f @ np.array([coefficients[k] for k in PAIR_FEATURES])
        return 1.0 / (1.0 + np.exp(-z))
    z = coefficients["bias"] + sum(coefficients[k] * x for k, x in zip(PAIR_FEATURES, f))
    return float(1.0 / (1.0 + np.exp(-z)))


def learned_key(coefficients):
    """Batched learned merge key: :func:`boundary_probability` of :func:`pair_features_many` (coefficients read once).

    Examples
    --------
    >>> m = RegionMerger(2, np.array([[0, 1]]), np.array([10.0]), np.array([[1.0, 0.5]]), sizes=np.array([100, 900]),
    ...                  region_sums=np.zeros((2, 9)))
    >>> key, c = learned_key(LEARNED_COEFFICIENTS), LEARNED_COEFFICIENTS
    >>> bool(np.isclose(key(m, 0, np.array([1]))[0], boundary_probability(pair_features(m, 0, 1), c)))
    True
    """
    bias, w = coefficients["bias"], np.array([coefficients[k] for k in PAIR_FEATURES])

    def key(merger, u, vs):
        z = bias + pair_features_many(merger, u, vs) @ w
        return 1.0 / (1.0 + np.exp(-z))

    return key


def normalised_member_weights(weights, n_members: int) -> np.ndarray:
    """Member weights checked (finite, non-negative, one per member, not all zero) and scaled to sum to 1.

    Examples
    --------
    >>> normalised_member_weights([1, 3], 2).tolist()
    [0.25, 0.75]
    """
    w = check_member_weights(weights, n_members)
    return w / w.sum()


def check_coefficients(coefficients) -> dict:
    """The learned criterion's coefficients checked (one finite number per pair feature and the bias); None:
    the defaults fitted on BSDS500 train.

    Examples
    --------
    >>> check_coefficients(None) is LEARNED_COEFFICIENTS
    True
    >>> check_coefficients({"vote": 1})
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: coefficients: expected exactly the keys [...], got ['vote']
    """
    if coefficients is None:
        return LEARNED_COEFFICIENTS
    if not isinstance(coefficients, dict):
        raise InputError(f"coefficients: expected a mapping of {PAIR_FEATURES + ('bias',)} to numbers, got "
                         f"{type(coefficients).__name__}")
    want = set(PAIR_FEATURES) | {"bias"}
    if set(coefficients) != want:
        raise InputError(f"coefficients: expected exactly the keys {sorted(want)}, got {sorted(coefficients)}")
    out = {}
    for k, v in coefficients.items():
        if isinstance(v, bool) or not isinstance(v, Real) or not np.isfinite(v):
            raise InputError(f"coefficients: {k!r} must be a finite number, got {v!r}")
        out[k] = float(v)
    return out


def image_statistics(ensemble, image):
    """Region sums of Lab colour and standardised texture energy over the atoms: (n_objects, 3 + textures).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> ens = Ensemble.from_segmentations([np.array([[0, 0, 1, 1]] * 4)])
    >>> image_statistics(ens, np.zeros((4, 4, 3)))[:, 0].tolist()  # L* summed over each atom's 8 pixels
    [0.0, 0.0]
    """
    idx = ensemble.index.ravel()
    pix = np.concatenate([lab_colour(image), standardise(texture_features(image))], axis=2)
    pix = pix.reshape(-1, pix.shape[2])
    return np.stack([np.bincount(idx, weights=pix[:, c], minlength=ensemble.n_objects)
                     for c in range(pix.shape[1])], axis=1)


def region_merger(ensemble, gradient, *, member_weights=None, per_member: bool = False) -> RegionMerger:
    """The atoms of an image ensemble as a :class:`RegionMerger` for the learned criterion.

    Border quantities: the member vote (weighted by ``member_weights``, equal
    by default) and the mean of ``gradient``, then with ``per_member`` every
    member's separation (0/1) as further columns; region sums: Lab colour and
    standardised texture energy of ``ensemble.image`` (see
    :func:`pair_features`).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> img = np.zeros((4, 4, 3)); img[:, 2:] = 1
    >>> a = np.array([[0, 0, 1, 1]] * 4); b = np.array([[0, 1, 1, 1]] * 4)
    >>> m = region_merger(Ensemble.from_segmentations([a, b], img), np.zeros((4, 4)), per_member=True)
    >>> m.n_regions, m.border_mean(0, 1).tolist(), m.border_mean(1, 2).tolist()
    (3, [0.5, 0.0, 0.0, 1.0], [0.5, 0.0, 1.0, 0.0])
    """
    pairs, length, vote, g = atom_adjacency(ensemble.index, ensemble.labels, gradient, member_weights=member_weights)
    border = [vote, g]
    if per_member:
        a, b = ensemble.labels[pairs[:, 0]], ensemble.labels[pairs[:, 1]]
        border.append(((a != b) & (a >= 0) & (b >= 0)).astype(np.float64))  # an abstaining member separates nothing
    return RegionMerger(ensemble.n_objects, pairs, length, np.column_stack(border), sizes=ensemble.weights,
                        region_sums=image_statistics(ensemble, ensemble.image))


@REGISTRY.register("merge")
class BoundaryMerge(ConsensusClusterer):
    """Boundary consensus: greedy merging of atoms by the members' boundary vote.

    Needs an ensemble built from segmentations (its pixel index gives the
    atoms' borders; without one, every object borders every other with
    weight ``w_u w_v``: weighted average linkage on the dense ``1 - X``, as
    ``eac`` computes it). Adjacent regions are
    merged weakest border first (see :func:`merge_hierarchy`); the border
    strength depends on ``criterion``:

    - ``'mean'``: ``(1 - gradient_weight) * vote + gradient_weight *
      gradient`` averaged along the border, with ``vote`` the (weighted)
      share of members separating the two sides and ``gradient`` the image's
      colour boundary strength (:func:`segensemble.features.boundary_strength`
      of ``Ensemble.image``, or ``fit(..., gradient=...)``).
    - ``'learned'``: the probability that the two regions belong to different
      ground-truth segments, a logistic model (``coefficients``) of the
      :data:`PAIR_FEATURES` of the two *current* regions: mean vote and
      gradient along their whole border, distance of their mean colour and
      texture, smaller size, border length. Region statistics are updated on
      every merge, so large regions are compared by their whole appearance.
      Needs the image. The default coefficients were fitted on BSDS500 train
      (``benchmarks/train_merge_model.py``).

    Regions smaller than ``min_size`` pixels are merged first, along their
    weakest border.

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
        K regions, or ``'auto'``: cut the hierarchy at ``threshold``.
    threshold : float or 'auto', default 'auto'
        Cut height for ``'auto'`` (a border survives when its strength
        exceeds it); ``'auto'``: 0.45 for the learned criterion (chosen on
        BSDS500 val), 0.5 for ``'mean'``.
    criterion : {'auto', 'mean', 'learned'}, default 'auto'
        ``'auto'``: ``'learned'`` when the ensemble carries the image and its
        pixel grid, else ``'mean'`` (plain label arrays).
    gradient_weight : float in [0, 1], default 0
        Weight of the image gradient in the ``'mean'`` border strength.
    member_weights : array-like of shape (n_members,), optional
        Non-negative weights of the members in the vote (equal by default).
    coefficients : dict, optional
        Logistic coefficients of the ``'learned'`` criterion, one per
        :data:`PAIR_FEATURES` name plus ``'bias'``; default
        :data:`LEARNED_COEFFICIENTS`.
    min_size : float, default 0
        Pixels below which a region is merged before any other.
    size_penalty : float, default 0
        ``'mean'`` only: lowers every border's key by ``size_penalty *
        sqrt(A / smaller size)`` (A = a thousandth of the image), so small
        regions merge more readily.
    refine : bool or int, default False

    Attributes
    ----------
    merges_, heights_ : arrays
        The hierarchy over the atoms (see :func:`merge_hierarchy`).
    criterion_ : str
        The criterion used ('mean' or 'learned').

    References
    ----------
    P. Arbeláez, M. Maire, C. Fowlkes, J. Malik, "Contour detection and
    hierarchical image segmentation", IEEE TPAMI 33(5), 2011 (greedy merging
    by mean boundary strength, ultrametric contour map).
    J. Nunez-Iglesias, R. Kennedy, T. Parag, J. Shi, D. B. Chklovskii,
    "Machine learning of hierarchical clustering to segment 2D and 3D
    images", PLoS ONE 8(8), 2013 (a learned merge priority over region-pair
    features, trained on the merges the current policy makes).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> a = np.array([[0, 0, 1, 1]] * 2); b = np.array([[0, 0, 0, 1]] * 2)
    >>> ens = Ensemble.from_segmentations([a, a, b])
    >>> BoundaryMerge(n_clusters=2).fit(ens).labels_.tolist()
    [0, 1, 1]
    >>> BoundaryMerge(n_clusters=2, member_weights=[0, 0, 1]).fit(ens).labels_.tolist()
    [0, 0, 1]
    """

    #: A member that leaves an atom unlabelled does not vote on its borders: the vote is the share of the members
    #: that label both sides (0.5 where none does).
    capabilities = Capabilities(hierarchy=True, uses_image=True, abstain=True)
    _parameter_constraints: dict = {
        "n_clusters": N_CLUSTERS,
        "threshold": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "criterion": [StrOptions({"auto", "mean", "learned"})],
        "gradient_weight": [Interval(Real, 0, 1, closed="both")],
        "member_weights": ["array-like", None],
        "coefficients": [dict, None],
        "min_size": [Interval(Real, 0, None, closed="left")],
        "size_penalty": [Interval(Real, 0, None, closed="left")],
        "refine": REFINE,
    }

    def __init__(self, n_clusters="auto", *, threshold="auto", criterion="auto", gradient_weight=0.0,
                 member_weights=None, coefficients=None, min_size=0, size_penalty=0.0, refine=False):
        self.n_clusters = n_clusters
        self.threshold = threshold
        self.criterion = criterion
        self.gradient_weight = gradient_weight
        self.member_weights = member_weights
        self.coefficients = coefficients
        self.min_size = min_size
        self.size_penalty = size_penalty
        self.refine = refine

    def fit(self, X, y=None, sample_weight=None, *, gradient=None):
        """Fit on an Ensemble built from segmentations; ``gradient`` (H, W) is the image's boundary strength."""
        return super().fit(X, y, sample_weight, gradient=gradient)

    def _member_weights(self, ensemble) -> np.ndarray:
        m = ensemble.n_members
        return np.full(m, 1.0 / m) if self.member_weights is None else normalised_member_weights(self.member_weights, m)

    @staticmethod
    def _image_gradient(ensemble, grad):
        if grad is None and ensemble.image is not None:
            grad = boundary_strength(ensemble.image)
        if grad is None:
            raise InputError("gradient: gradient_weight > 0 needs the image (Ensemble.from_segmentations(segs, image)) "
                             "or fit(..., gradient=...)")
        return grad

    def _fit(self, ensemble, gradient=None):
        n = ensemble.n_objects
        weights = self._member_weights(ensemble)
        criterion = self.criterion
        if criterion == "auto":
            criterion = "learned" if ensemble.index is not None and ensemble.image is not None else "mean"
        self.criterion_ = criterion
        if ensemble.index is None:  # no pixel grid: every object borders every other (average linkage on 1 - X)
            if criterion == "learned":
                raise InputError("criterion: 'learned' needs an ensemble built from segmentations and the image, "
                                 "got one without a pixel grid; use criterion='mean'")
            if self.min_size == 0 and self.size_penalty == 0:  # plain weighted average linkage, on the dense 1 - X
                check_dense(n, n, "boundary merging without a pixel grid (1 - X and its linkage)",
                            copies=2.5 if ensemble.abstains else 1.5, pairwise=True)  # measured 2.1 / 1.1
                D = separation_matrix(ensemble.incidence, ensemble.labels, ensemble.n_clusters, weights)
                return self._cut(n, weighted_linkage(D, ensemble.weights, "average"))
            if n > MAX_UNGRIDDED:
                raise InputError(
                    f"X: without a pixel grid boundary merging compares all pairs, at most {MAX_UNGRIDDED} objects, "
                    f"got {n}; build the ensemble with Ensemble.from_segmentations, or use eac"
                )
            u, v = np.triu_indices(n, 1)
            pairs, length = np.stack([u, v], axis=1), ensemble.weights[u] * ensemble.weights[v]
            strength = separation_share(ensemble.labels[u], ensemble.labels[v], weights)
            return self._cut(n, merge_hierarchy(n, pairs, length, strength, sizes=ensemble.weights,
                                             min_size=self.min_size, size_penalty=self.size_penalty))
        if criterion == "learned":
            coefficients = check_coefficients(self.coefficients)
            if ensemble.image is None:
                raise InputError("criterion: 'learned' needs the image (Ensemble.from_segmentations(segs, image))")
            merger = region_merger(ensemble, self._image_gradient(ensemble, gradient), member_weights=weights)
            return self._cut(n, merger.run(
                learned_key(coefficients),
                min_size=self.min_size, batched=True))
        grad = self._image_gradient(ensemble, gradient) if self.gradient_weight > 0 else None
        pairs, length, strength, g = atom_adjacency(ensemble.index, ensemble.labels, grad, member_weights=weights)
        if g is not None:
            strength = (1 - self.gradient_weight) * strength + self.gradient_weight * g
        return self._cut(n, merge_hierarchy(n, pairs, length, strength, sizes=ensemble.weights, min_size=self.min_size,
                                         size_penalty=self.size_penalty))

    def _cut(self, n, hierarchy):
        self.merges_, self.heights_ = hierarchy
        if self.n_clusters == "auto":
            threshold = self.threshold
            if threshold == "auto":
                threshold = LEARNED_THRESHOLD if self.criterion_ == "learned" else 0.5
            return cut_hierarchy(n, self.merges_, self.heights_, threshold=threshold)
        return cut_hierarchy(n, self.merges_, self.heights_, n_clusters=int(self.n_clusters))
