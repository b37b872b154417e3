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
from segensemble.consensus._learned import (LEARNED_COEFFICIENTS, PAIR_FEATURES, boundary_probability,
                                            check_coefficients, learned_key, learned_merges, pair_features,
                                            pair_features_many)

__all__ = ["BoundaryMerge", "atom_adjacency", "merge_hierarchy", "cut_hierarchy", "pair_features", "pair_features_many",
           "normalised_member_weights", "region_merger", "boundary_probability", "learned_key", "learned_merges",
           "check_coefficients",
           "image_statistics", "PAIR_FEATURES", "LEARNED_COEFFICIENTS", "LEARNED_THRESHOLD", "MAX_UNGRIDDED"]

#: Objects accepted without a pixel grid when ``min_size`` or ``size_penalty`` make every pair a border to merge.
MAX_UNGRIDDED = 2000

#: Cut of the learned criterion (``threshold='auto'``), chosen on the 100 BSDS500 val images.
LEARNED_THRESHOLD = 0.45

def normalised_member_weights(weights, n_members: int) -> np.ndarray:
    """Member weights checked (finite, non-negative, one per member, not all zero) and scaled to sum to 1.

    Examples
    --------
    >>> normalised_member_weights([1, 3], 2).tolist()
    [0.25, 0.75]
    """
    w = check_member_weights(weights, n_members)
    return w / w.sum()


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
    lab = lab_colour(image)
    pix = np.concatenate([lab, standardise(texture_features(image, lab=lab))], axis=2)
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
    engine : {'numpy', 'compiled'}, default 'numpy'
        ``'learned'`` only: how the merges are computed (:func:`learned_merges`); ``'compiled'`` is about twenty
        times faster, equal to a few ulps (the default recipe from version 7 uses it).
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
        "engine": [StrOptions({"numpy", "compiled"})],
        "refine": REFINE,
    }

    def __init__(self, n_clusters="auto", *, threshold="auto", criterion="auto", gradient_weight=0.0,
                 member_weights=None, coefficients=None, min_size=0, size_penalty=0.0, engine="numpy", refine=False):
        self.n_clusters = n_clusters
        self.threshold = threshold
        self.criterion = criterion
        self.gradient_weight = gradient_weight
        self.member_weights = member_weights
        self.coefficients = coefficients
        self.min_size = min_size
        self.size_penalty = size_penalty
        self.engine = engine
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
            return self._cut(n, learned_merges(merger, coefficients, engine=self.engine, min_size=self.min_size))
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
