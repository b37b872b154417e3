"""Base class shared by every consensus estimator."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from numbers import Integral
from typing import NamedTuple

import numpy as np
from segensemble.constraints import Interval, StrOptions, ValidatedParams, validate_params
from segensemble.estimator import ClusterMixin, Estimator

from segensemble.ensemble import Ensemble
from segensemble.validation import check_weights
from segensemble.errors import InputError
from segensemble.segmentation import canonical_codes, signature_codes
from segensemble.consensus._refine import local_refinement
from segensemble.consensus._registry import REGISTRY

__all__ = ["ConsensusClusterer", "Capabilities", "FitResult", "as_ensemble", "collapse_duplicate_rows", "seed_from",
           "fill_docstring", "methods_with", "N_CLUSTERS",
           "REFINE"]

#: Parameter constraints shared by the estimators: K >= 1 or 'auto'; refinement passes.
N_CLUSTERS = [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})]
REFINE = ["boolean", Interval(Integral, 0, None, closed="left")]


def as_ensemble(X, sample_weight=None) -> Ensemble:
    """An :class:`Ensemble` from an Ensemble or an (n_objects, n_members) label array.

    ``sample_weight`` multiplies the object weights; the caller's ensemble is
    not modified.
    """
    if isinstance(X, Ensemble):
        if sample_weight is None:
            return X
        return X.copy_with(weights=X.weights * check_weights(sample_weight, X.n_objects, "sample_weight"))
    ens = Ensemble.from_labels(X)
    return ens if sample_weight is None else ens.copy_with(
        weights=check_weights(sample_weight, ens.n_objects, "sample_weight"))


def fill_docstring(**fragments):
    """Class decorator: replace ``{name}`` in the docstring by shared text (parameters shared by a family).

    Examples
    --------
    >>> @fill_docstring(shared="x : int")
    ... class A:
    ...     __doc__ = "Parameters: {shared}"
    >>> A.__doc__
    'Parameters: x : int'
    """

    def decorate(cls):
        doc = cls.__doc__
        for name, text in fragments.items():
            doc = doc.replace("{" + name + "}", text)
        cls.__doc__ = doc
        return cls

    return decorate


def seed_from(random_state) -> int:
    """An int seed from a scikit-learn ``random_state`` (None, int or RandomState), drawn as scikit-learn's
    ``check_random_state(random_state).randint(0, 2**31 - 1)``: None draws from NumPy's global RandomState.

    Examples
    --------
    >>> seed_from(0) == seed_from(0) == seed_from(np.random.RandomState(0))
    True
    """
    validate_params({"random_state": ["random_state"]}, {"random_state": random_state}, "seed_from")
    if random_state is None:
        state = np.random.mtrand._rand
    elif isinstance(random_state, np.random.RandomState):
        state = random_state
    else:
        state = np.random.RandomState(int(random_state))
    return int(state.randint(0, 2**31 - 1))


#: The live results of :func:`collapse_duplicate_rows` by id: their rows are distinct already, so collapsing one
#: again (Basic's start inside EM or NMF) returns it as it is, instead of a copy whose incidence is built anew.
_COLLAPSED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def collapse_duplicate_rows(ensemble: Ensemble) -> tuple[Ensemble, np.ndarray]:
    """Merge objects with identical label rows into one object with the summed weight.

    Heuristic solvers (METIS, random pivots) see different problems for an
    object of weight w and for w copies of it; running them on the collapsed
    ensemble makes both inputs the same problem.

    Returns
    -------
    reduced : Ensemble
    inverse : (n_objects,) int array
        Row of ``reduced`` of every original object.

    Examples
    --------
    >>> red, inv = collapse_duplicate_rows(Ensemble.from_labels([[0, 1], [0, 1], [1, 0]]))
    >>> red.weights.tolist(), inv.tolist()
    ([2.0, 1.0], [0, 0, 1])
    """
    if _COLLAPSED.get(id(ensemble)) is ensemble:  # a collapse's result (a method fitted inside another's fit):
        return ensemble, np.arange(ensemble.n_objects, dtype=np.int64)  # nothing to merge: no copy, no new incidence
    key = signature_codes(list(ensemble.member_labels + 1))  # abstaining (-1) too
    inverse, _ = canonical_codes(key)
    n = int(inverse.max()) + 1
    first = np.full(n, len(inverse), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(inverse)))
    weights = np.bincount(inverse, weights=ensemble.weights, minlength=n)
    # the first object of every distinct row, in object order, holds each member's labels in their first
    # occurrence order: the codes stay canonical and every label stays present
    reduced = ensemble._rows(first, weights)
    _COLLAPSED[id(reduced)] = reduced
    return reduced, inverse.astype(np.int64)


@dataclass(frozen=True)
class Capabilities:
    """What a consensus estimator gives and needs, declared once per class and read in one place.

    Attributes
    ----------
    soft : bool
        Sets ``memberships_`` (n_objects, K), columns in the order of
        ``labels_``: confidence maps (:func:`segensemble.confidence_map`).
    hierarchy : bool
        Sets ``merges_`` and ``heights_``: a merge tree that can be cut at
        any height (written as the hierarchy by ``bench``).
    feature_weights : bool
        Sets ``feature_weights_`` (K, n_features) and has ``top_features(n)``
        (``fuse --explain``).
    uses_image : bool
        Uses the image, or the atoms' image features, when the ensemble
        carries them (colour gradient, region colour and texture).
    distinct_rows : bool
        A heuristic solver that must see identical objects once: ``fit`` runs
        ``_fit`` on the ensemble with duplicate rows collapsed (weights
        summed), so an object of weight w and w copies are the same problem.
    abstain : bool
        Accepts members that leave objects unlabelled (``-1``;
        :mod:`segensemble.abstentions`), with the meaning its docstring
        states; the others refuse such ensembles in ``fit``.

    Examples
    --------
    >>> from segensemble import consensus
    >>> consensus.get("borda").capabilities.soft, consensus.get("merge").capabilities.hierarchy
    (True, True)
    """

    soft: bool = False
    hierarchy: bool = False
    feature_weights: bool = False
    uses_image: bool = False
    distinct_rows: bool = False
    abstain: bool = False


def methods_with(capability: str) -> list[str]:
    """Registered methods whose :class:`Capabilities` set ``capability`` (e.g. ``'soft'``, ``'abstain'``).

    Examples
    --------
    >>> from segensemble import consensus
    >>> "borda" in methods_with("soft"), "eac" in methods_with("soft")
    (True, False)
    """
    return [name for name in REGISTRY.available() if getattr(REGISTRY.get(name).capabilities, capability)]


class FitResult(NamedTuple):
    """What ``_fit`` returns: object labels, and per-cluster results that :meth:`ConsensusClusterer.fit` puts
    in the canonical cluster order and sets as attributes.

    ``columns``: name -> (n_objects, K) array whose columns follow the clusters (e.g. ``memberships_``);
    ``rows``: name -> (K, ...) array whose rows follow the clusters (e.g. ``feature_weights_``).
    """

    labels: np.ndarray
    columns: dict | None = None
    rows: dict | None = None


class ConsensusClusterer(ValidatedParams, ClusterMixin, Estimator):
    """Base of every consensus method: scikit-learn estimator conventions.

    Subclasses store their parameters in ``__init__``, declare
    ``_parameter_constraints`` and :class:`Capabilities`, and implement
    ``_fit(ensemble, **fit_params)`` returning the object labels or a
    :class:`FitResult`; the default parameters are ``n_clusters`` (int or
    'auto') and ``refine``. A subclass with a ``refine`` parameter (bool or
    number of passes) gets local refinement (Zhou et al. 2023, Algorithm 3)
    applied after its own result. :meth:`fit` validates the parameters
    (errors name the parameter, the value and what is expected), converts the
    input to an :class:`Ensemble`, and stores ``labels_`` numbered
    ``0..K-1`` in order of first occurrence, so the output is the same for any
    relabelling of the input members; the per-cluster results of the
    :class:`FitResult` get their columns (rows) put in the order of
    ``labels_`` (clusters left empty last); with refinement they remain the
    method's own, before the refinement.
    """

    _parameter_constraints: dict = {"n_clusters": N_CLUSTERS, "refine": REFINE}
    #: What the method gives and needs (see :class:`Capabilities`).
    capabilities: Capabilities = Capabilities()
    #: True for methods that set ``memberships_`` (``capabilities.soft``; kept for existing callers).
    gives_memberships: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.gives_memberships = cls.capabilities.soft

    def __init__(self, n_clusters="auto", *, refine=False):
        self.n_clusters = n_clusters
        self.refine = refine

    def fit(self, X, y=None, sample_weight=None, **fit_params):
        """Compute the consensus of an ensemble.

        Parameters
        ----------
        X : Ensemble or (n_objects, n_members) int array
            The ensemble; rows are objects, columns are members.
        y : ignored
        sample_weight : (n_objects,) array, optional
            Positive object weights (multiply the ensemble's weights).
        **fit_params
            Passed to the method (e.g. ``gradient`` for ``merge``).

        Returns
        -------
        self
        """
        try:
            self._validate_params()
        except (ValueError, TypeError) as exc:
            raise InputError(str(exc).replace("\n", " ")) from exc
        ens = as_ensemble(X, sample_weight)
        if ens.abstains and not self.capabilities.abstain:
            raise InputError(f"X: some members leave objects unlabelled (-1 or NaN); {type(self).__name__} cannot use "
                             f"such members; methods that can: {', '.join(methods_with('abstain'))}")
        k = getattr(self, "n_clusters", None)
        if isinstance(k, (int, np.integer)) and k > ens.n_objects:
            raise InputError(
                f"n_clusters: expected at most the number of objects ({ens.n_objects}), got {k}"
            )
        if self.capabilities.distinct_rows:
            reduced, inverse = collapse_duplicate_rows(ens)
            out = _as_fit_result(self._fit(reduced, **fit_params))
            out = out._replace(labels=out.labels[inverse],
                               columns={name: a.take(inverse, axis=0) for name, a in out.columns.items()})
        else:
            out = _as_fit_result(self._fit(ens, **fit_params))
        width = next(iter(out.columns.values())).shape[1] if out.columns else None
        labels, old = canonical_codes(out.labels, width)
        for name, a in out.columns.items():  # columns follow the canonical labels; clusters left empty come last
            setattr(self, name, a.take(old, axis=1))  # the copy a[:, old] makes, 1.5-2x faster
        for name, a in out.rows.items():
            setattr(self, name, a[old] if out.columns else a[canonical_codes(out.labels, len(a))[1]])
        passes = getattr(self, "refine", False)
        if passes:
            labels = canonical_codes(local_refinement(ens, labels, n_iter=int(passes)))[0]
        self.labels_ = labels
        self.n_clusters_ = int(self.labels_.max()) + 1
        return self

    def _fit(self, ensemble: Ensemble, **fit_params):  # pragma: no cover - abstract
        raise NotImplementedError


def _as_fit_result(out) -> FitResult:
    if isinstance(out, FitResult):
        return FitResult(np.asarray(out.labels), dict(out.columns or {}), dict(out.rows or {}))
    return FitResult(np.asarray(out), {}, {})
