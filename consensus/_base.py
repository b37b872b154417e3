"""Base class shared by every consensus estimator."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions

from segensemble.ensemble import Ensemble, check_weights
from segensemble.errors import InputError
from segensemble.segmentation import canonical_codes

__all__ = ["ConsensusClusterer", "as_ensemble", "collapse_duplicate_rows", "seed_from", "fill_docstring", "N_CLUSTERS",
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
    """An int seed from a scikit-learn ``random_state`` (None, int or RandomState).

    Examples
    --------
    >>> seed_from(0) == seed_from(0)
    True
    """
    from sklearn.utils import check_random_state

    return int(check_random_state(random_state).randint(0, 2**31 - 1))


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
    from segensemble.ensemble import _signature_codes

    key = _signature_codes([ensemble.labels[:, j] for j in range(ensemble.n_members)])
    inverse, _ = canonical_codes(key)
    n = int(inverse.max()) + 1
    first = np.full(n, len(inverse), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(inverse)))
    weights = np.bincount(inverse, weights=ensemble.weights, minlength=n)
    return Ensemble(ensemble.labels[first], weights, names=ensemble.names), inverse.astype(np.int64)


class ConsensusClusterer(ClusterMixin, BaseEstimator):
    """Base of every consensus method: scikit-learn estimator conventions.

    Subclasses store their parameters in ``__init__``, declare
    ``_parameter_constraints`` and implement ``_fit(ensemble) -> labels``; the
    default parameters are ``n_clusters`` (int or 'auto') and ``refine``.
    A subclass with a ``refine`` parameter (bool or number of passes) gets local
    refinement (Zhou et al. 2023, Algorithm 3) applied after its own result.
    :meth:`fit` validates the parameters (errors name the parameter, the value
    and what is expected), converts the input to an :class:`Ensemble`, and
    stores ``labels_`` numbered ``0..K-1`` in order of first occurrence, so the
    output is the same for any relabelling of the input members. Per-cluster
    results set in ``_fit`` (``memberships_``, and any attribute named in
    ``_cluster_columns``), (n_objects, K), get their columns put in the order
    of ``labels_`` (clusters left empty last), and those named in
    ``_cluster_rows``, (K, ...), their rows; with refinement they remain the
    method's own, before the refinement.
    """

    _parameter_constraints: dict = {"n_clusters": N_CLUSTERS, "refine": REFINE}
    #: Per-object, per-cluster results of ``_fit`` whose columns follow the clusters.
    _cluster_columns: tuple = ("memberships_",)
    #: Per-cluster results of ``_fit`` whose rows follow the clusters.
    _cluster_rows: tuple = ()
    #: True for methods that set ``memberships_`` (soft consensus, confidence maps).
    gives_memberships: bool = False

    def __init__(self, n_clusters="auto", *, refine=False):
        self.n_clusters = n_clusters
        self.refine = refine

    def fit(self, X, y=None, sample_weight=None):
        """Compute the consensus of an ensemble.

        Parameters
        ----------
        X : Ensemble or (n_objects, n_members) int array
            The ensemble; rows are objects, columns are members.
        y : ignored
        sample_weight : (n_objects,) array, optional
            Positive object weights (multiply the ensemble's weights).

        Returns
        -------
        self
        """
        try:
            self._validate_params()
        except (ValueError, TypeError) as exc:
            raise InputError(str(exc).replace("\n", " ")) from exc
        ens = as_ensemble(X, sample_weight)
        k = getattr(self, "n_clusters", None)
        if isinstance(k, (int, np.integer)) and k > ens.n_objects:
            raise InputError(
                f"n_clusters: expected at most the number of objects ({ens.n_objects}), got {k}"
            )
        for name in self._cluster_columns + self._cluster_rows:
            if hasattr(self, name):
                delattr(self, name)  # never leave a previous fit's per-cluster results behind
        if getattr(self, "_collapse_duplicates", False):
            reduced, inverse = collapse_duplicate_rows(ens)
            raw = np.asarray(self._fit(reduced))[inverse]
            for name in self._cluster_columns:
                if hasattr(self, name):
                    setattr(self, name, getattr(self, name)[inverse])
        else:
            raw = np.asarray(self._fit(ens))
        present = [name for name in self._cluster_columns if hasattr(self, name)]
        labels, old = canonical_codes(raw, getattr(self, present[0]).shape[1] if present else None)
        for name in present:  # columns follow the canonical labels; clusters left empty come last
            setattr(self, name, getattr(self, name)[:, old])
        for name in self._cluster_rows:
            if hasattr(self, name):
                rows = getattr(self, name)
                setattr(self, name, rows[old] if present else rows[canonical_codes(raw, len(rows))[1]])
        passes = getattr(self, "refine", False)
        if passes:
            from segensemble.consensus._refine import local_refinement

            labels = canonical_codes(local_refinement(ens, labels, n_iter=int(passes)))[0]
        self.labels_ = labels
        self.n_clusters_ = int(self.labels_.max()) + 1
        return self

    def _fit(self, ensemble: Ensemble) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError
