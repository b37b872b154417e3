"""Projective clustering ensembles: E-CB-PCE and CB-PCE (Gullo, Domeniconi & Tagarelli).

A projective cluster C has object memberships Gamma_C (over the objects) and
feature weights Delta_C (over the features). Its projective matrix is
X_C = Gamma_C Delta_C^T; clusters are compared by the Tanimoto distance of
these matrices, computed in O(n + |F|) per pair (Proposition 4) — here for all
pairs at once as ``P = (Gamma W Gamma^T) o (Delta Delta^T)``. Clusters of the
ensemble are grouped into K metaclusters; each metacluster gives one consensus
cluster by the closed forms of Theorems 2 and 3.

For image segmentations, Gamma comes from each member (one-hot, or its soft
memberships) and Delta from the spread of the standardised image features of
the objects inside each cluster, LAC style:
``Delta_{C,f} = softmax_f(-U(C, f) / h)`` with U the weighted variance.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np
from segensemble.constraints import Interval

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, FitResult, fill_docstring
from segensemble.consensus._linkage import weighted_linkage
from segensemble.graph.hierarchy import Hierarchy
from segensemble.consensus._pce_solver import (ecbpce_metaclusters, metacluster_objective, projective_consensus,
                                              tanimoto_distances)
from segensemble.consensus._registry import REGISTRY
from segensemble.consensus.soft import member_memberships
from segensemble.ensemble import Ensemble
from segensemble.errors import InputError
from segensemble.segmentation import canonical_codes

__all__ = ["ECBPCE", "CBPCE", "ProjectiveEnsemble", "lac_feature_weights", "tanimoto_distances",
           "metacluster_objective", "ecbpce_metaclusters", "projective_consensus"]


@dataclass
class ProjectiveEnsemble:
    """An ensemble of projective clusterings given directly.

    Parameters
    ----------
    gammas : list of (n_objects, k_j) arrays
        Object-to-cluster memberships of every solution (rows sum to 1).
    deltas : list of (k_j, n_features) arrays
        Feature-to-cluster weights of every solution (non-negative).
    weights : (n_objects,) array, optional
        Object weights.

    Examples
    --------
    >>> g = np.eye(2)[[0, 0, 1]]
    >>> pe = ProjectiveEnsemble([g, g], [np.eye(2), np.eye(2)])
    >>> pe.n_objects, pe.n_features
    (3, 2)
    """

    gammas: list
    deltas: list
    weights: np.ndarray | None = None

    def __post_init__(self):
        if len(self.gammas) == 0 or len(self.gammas) != len(self.deltas):
            raise InputError(
                f"gammas, deltas: expected one (Gamma, Delta) pair per solution, got {len(self.gammas)} and "
                f"{len(self.deltas)}"
            )
        self.gammas = [np.asarray(g, dtype=np.float64) for g in self.gammas]
        self.deltas = [np.asarray(d, dtype=np.float64) for d in self.deltas]
        n, f = self.gammas[0].shape[0], self.deltas[0].shape[1]
        for j, (g, d) in enumerate(zip(self.gammas, self.deltas)):
            if g.ndim != 2 or g.shape[0] != n or np.any(g < 0) or not np.all(np.isfinite(g)):
                raise InputError(f"gammas[{j}]: expected a non-negative ({n}, k) array, got shape {g.shape}")
            if d.ndim != 2 or d.shape != (g.shape[1], f) or np.any(d < 0) or not np.all(np.isfinite(d)):
                raise InputError(f"deltas[{j}]: expected a non-negative ({g.shape[1]}, {f}) array, got {d.shape}")

    @property
    def n_objects(self) -> int:
        return self.gammas[0].shape[0]

    @property
    def n_features(self) -> int:
        return self.deltas[0].shape[1]

    def to_ensemble(self):
        """(Ensemble with labels argmax Gamma and the memberships, deltas in the same cluster order)."""
        labels, mems, deltas = [], [], []
        for g, d in zip(self.gammas, self.deltas):
            codes, old = canonical_codes(np.argmax(g, axis=1), g.shape[1])
            labels.append(codes)
            mems.append(g[:, old])
            deltas.append(d[old])
        return Ensemble(np.stack(labels, axis=1), self.weights, memberships=mems), deltas


def lac_feature_weights(gamma, features, weights, h: float = 0.2) -> np.ndarray:
    """LAC feature weights of clusters: ``softmax_f(-U(C, f) / h)``, U the weighted variance in C.

    Parameters
    ----------
    gamma : (n, k) array
        Memberships of the objects in the k clusters.
    features : (n, F) array
        Object features (standardised by the caller).
    weights : (n,) array
    h : float
        LAC's bandwidth (Domeniconi et al.); small h concentrates the weight.

    Returns
    -------
    (k, F) array, rows summing to 1

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [0.0, 2.0], [5.0, 0.0], [5.0, 2.0]])
    >>> lac_feature_weights(np.eye(2)[[0, 0, 1, 1]], X, np.ones(4)).round(3).tolist()
    [[0.993, 0.007], [0.993, 0.007]]
    """
    G = gamma * weights[:, None]
    mass = np.maximum(G.sum(axis=0), 1e-300)
    mean = (G.T @ features) / mass[:, None]
    U = (G.T @ features**2) / mass[:, None] - mean**2
    E = -np.maximum(U, 0.0) / h
    E -= E.max(axis=1, keepdims=True)
    D = np.exp(E)
    return D / D.sum(axis=1, keepdims=True)


_SHARED = """\
    n_clusters : int or 'auto', default 'auto'
        K ('auto': the largest number of clusters of a solution).
    alpha, beta : float > 1, default 2
        Fuzziness of the consensus object and feature assignments.
    h : float, default 0.2
        LAC bandwidth of the members' feature weights, computed from
        ``Ensemble.features`` standardised over the objects. Without features
        (a bare label array) every cluster gets one constant feature, and the
        consensus rests on the object memberships alone.
    refine : bool or int, default False
"""
_ATTRIBUTES = """\
    Attributes
    ----------
    labels_ : (n_objects,) int array
        argmax of Gamma*.
    memberships_ : (n_objects, K) array
        Gamma*, columns in the order of ``labels_``.
    feature_weights_ : (K, n_features) array
        Delta*: which features define each consensus cluster (rows sum to 1).
    feature_names_ : list of str
    metaclusters_ : list of lists
        Ensemble clusters (numbered solution by solution) in each metacluster.
    objective_ : float
        V of the metaclusters.
    distances_ : (N_c, N_c) array
        Tanimoto distances between the ensemble's clusters.
"""


class _PCE(ConsensusClusterer):
    """Shared fit of the metacluster-based PCE methods."""

    _parameter_constraints: dict = {
        "n_clusters": N_CLUSTERS,
        "alpha": [Interval(Real, 1, None, closed="neither")],
        "beta": [Interval(Real, 1, None, closed="neither")],
        "h": [Interval(Real, 0, None, closed="neither")],
        "refine": REFINE,
    }
    capabilities = Capabilities(soft=True, feature_weights=True, uses_image=True)

    def __init__(self, n_clusters="auto", *, alpha=2.0, beta=2.0, h=0.2, refine=False):
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.beta = beta
        self.h = h
        self.refine = refine

    def fit(self, X, y=None, sample_weight=None):
        """Fit on an Ensemble with features, a label array with features absent (error), or a ProjectiveEnsemble."""
        self._given_deltas = None
        if isinstance(X, ProjectiveEnsemble):
            X, self._given_deltas = X.to_ensemble()
        try:
            return super().fit(X, y, sample_weight)
        finally:
            self._given_deltas = None

    def _representation(self, ensemble):
        gammas = [member_memberships(ensemble, j) for j in range(ensemble.n_members)]
        if self._given_deltas is not None:
            return gammas, self._given_deltas, [f"feature{i}" for i in range(self._given_deltas[0].shape[1])]
        if ensemble.features is None:  # no features: one constant feature, so only the objects count
            return gammas, [np.ones((g.shape[1], 1)) for g in gammas], ["(none)"]
        w = ensemble.weights
        F = ensemble.features
        mean = np.average(F, axis=0, weights=w)
        sd = np.sqrt(np.average((F - mean) ** 2, axis=0, weights=w))
        Fs = (F - mean) / np.where(sd > 0, sd, 1.0)
        deltas = [lac_feature_weights(g, Fs, w, self.h) for g in gammas]
        return gammas, deltas, ensemble.feature_names

    def _fit(self, ensemble):
        gammas, deltas, names = self._representation(ensemble)
        w = ensemble.weights
        ks = np.array([g.shape[1] for g in gammas])
        k = int(ks.max()) if self.n_clusters == "auto" else int(self.n_clusters)
        T = tanimoto_distances(gammas, deltas, w)
        solution = np.repeat(np.arange(len(gammas)), ks)
        meta = self._metaclusters(T, solution, k)
        gamma, delta = projective_consensus(meta, np.concatenate(gammas, axis=1), np.concatenate(deltas, axis=0),
                                            alpha=self.alpha, beta=self.beta)
        self.distances_ = T
        self.metaclusters_ = meta
        self.objective_ = metacluster_objective(T, meta)
        self.feature_names_ = list(names)
        return FitResult(np.argmax(gamma, axis=1), {"memberships_": gamma}, {"feature_weights_": delta})

    def top_features(self, n: int = 3):
        """The n most weighted features of every consensus cluster, as (name, weight) pairs."""
        order = np.argsort(-self.feature_weights_, axis=1, kind="stable")[:, :n]
        return [[(self.feature_names_[f], float(self.feature_weights_[c, f])) for f in row]
                for c, row in enumerate(order[: self.n_clusters_])]


@REGISTRY.register("ecbpce")
@fill_docstring(shared=_SHARED, attributes=_ATTRIBUTES)
class ECBPCE(_PCE):
    """E-CB-PCE: metaclusters by constrained local search, consensus by Theorems 2 and 3.

    Every metacluster holds at least one cluster of every solution and every
    cluster belongs to some metacluster (:func:`ecbpce_metaclusters`).

    Parameters
    ----------
{shared}
{attributes}    objective_history_ : list of float
        V at the start and after every local-search move.

    References
    ----------
    F. Gullo, C. Domeniconi, A. Tagarelli, "Metacluster-based projective
    clustering ensembles", Machine Learning 98, 2015 (Function 2, Theorems
    2-3, Proposition 4).

    Examples
    --------
    >>> from segensemble.consensus.pce import ProjectiveEnsemble
    >>> g1, g2 = np.eye(2)[[0, 0, 1, 1]], np.eye(2)[[1, 1, 0, 0]]
    >>> d = np.array([[0.9, 0.1], [0.2, 0.8]])
    >>> est = ECBPCE(n_clusters=2).fit(ProjectiveEnsemble([g1, g2], [d, d[::-1]]))
    >>> est.labels_.tolist(), est.feature_weights_.round(2).tolist()
    ([0, 0, 1, 1], [[0.9, 0.1], [0.2, 0.8]])
    """

    def _metaclusters(self, T, solution, k):
        meta, self.objective_history_ = ecbpce_metaclusters(T, solution, k)
        return meta


@REGISTRY.register("cbpce")
@fill_docstring(shared=_SHARED, attributes=_ATTRIBUTES)
class CBPCE(_PCE):
    """CB-PCE: metaclusters by average linkage on the Tanimoto distances, consensus by Theorems 2 and 3.

    The clusters of the ensemble are grouped by a standard clustering (average
    linkage, cut at K groups) without the coverage constraints of E-CB-PCE.

    Parameters
    ----------
{shared}
{attributes}
    References
    ----------
    F. Gullo, C. Domeniconi, A. Tagarelli, "Projective clustering ensembles",
    ICDM 2009 / Data Min. Knowl. Disc. 26, 2013 (CB-PCE, Algorithm 1).

    Examples
    --------
    >>> from segensemble.consensus.pce import ProjectiveEnsemble
    >>> g1, g2 = np.eye(2)[[0, 0, 1, 1]], np.eye(2)[[1, 1, 0, 0]]
    >>> d = np.array([[0.9, 0.1], [0.2, 0.8]])
    >>> CBPCE(n_clusters=2).fit(ProjectiveEnsemble([g1, g2], [d, d[::-1]])).labels_.tolist()
    [0, 0, 1, 1]
    """

    def _metaclusters(self, T, solution, k):
        k = min(k, len(T))
        merges, heights = weighted_linkage(T.copy(), np.ones(len(T)), "average")
        roots = Hierarchy(len(T), merges, heights).cut(n_regions=k)
        return [np.flatnonzero(roots == r).tolist() for r in np.unique(roots)]
