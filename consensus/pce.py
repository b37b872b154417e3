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
from scipy.optimize import linear_sum_assignment
from segensemble.constraints import Interval

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, FitResult, fill_docstring
from segensemble.consensus._linkage import cut_tree, weighted_linkage
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


def tanimoto_distances(gammas, deltas, weights) -> np.ndarray:
    """Tanimoto distances between the projective matrices of all clusters (Proposition 4).

    ``T(C, C') = 1 - p / (q(C) + q(C') - p)`` with
    ``p = (Gamma_C W Gamma_C')(Delta_C . Delta_C')`` and ``q(C) = p(C, C)``:
    the Tanimoto distance of ``X_C = Gamma_C Delta_C^T`` with object weights,
    without forming the n x |F| matrices.

    Parameters
    ----------
    gammas : list of (n, k_j) arrays
    deltas : list of (k_j, F) arrays
    weights : (n,) array

    Returns
    -------
    (N_c, N_c) array over all clusters, solution by solution

    Examples
    --------
    >>> g = np.eye(2)[[0, 0, 1]]
    >>> tanimoto_distances([g, g], [np.eye(2), np.eye(2)], np.ones(3)).round(3).tolist()[0]
    [0.0, 1.0, 0.0, 1.0]
    """
    from segensemble.consensus._memory import check_dense

    total = sum(g.shape[1] for g in gammas)
    check_dense(total, total, "Tanimoto distances between all member clusters", copies=3)
    G = np.concatenate(gammas, axis=1)
    D = np.concatenate(deltas, axis=0)
    P = (G.T @ (G * weights[:, None])) * (D @ D.T)
    q = np.diag(P)
    denom = q[:, None] + q[None, :] - P
    with np.errstate(divide="ignore", invalid="ignore"):
        T = np.where(denom > 0, 1.0 - P / np.where(denom > 0, denom, 1.0), 0.0)
    np.fill_diagonal(T, 0.0)
    return np.clip(T, 0.0, 1.0)


def metacluster_objective(T, metaclusters) -> float:
    """V: the sum of the Tanimoto distances of all pairs inside each metacluster.

    Examples
    --------
    >>> T = np.array([[0.0, 0.2, 0.9], [0.2, 0.0, 0.8], [0.9, 0.8, 0.0]])
    >>> metacluster_objective(T, [[0, 1], [2]])
    0.2
    """
    return float(sum(T[np.ix_(m, m)].sum() / 2 for m in metaclusters))


def _feasible_start(T, solution, k):
    """Metaclusters satisfying both coverage constraints: seeds from the largest solution, Hungarian for the rest."""
    sizes = np.bincount(solution)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    seed = int(np.argmax(sizes))
    meta = [[int(first[seed] + (i % sizes[seed]))] for i in range(k)]
    for extra in range(k, sizes[seed]):  # a seed solution with more than K clusters: the rest to the nearest
        c = int(first[seed] + extra)
        meta[int(np.argmin([T[c, m[0]] for m in meta]))].append(c)
    for s in range(len(sizes)):
        if s == seed:
            continue
        members = first[s] + np.arange(sizes[s])
        cost = np.array([[T[c, m].mean() for m in meta] for c in members])  # clusters x metaclusters
        rows, cols = linear_sum_assignment(cost)
        placed = set()
        for r, c in zip(rows, cols):
            meta[c].append(int(members[r]))
            placed.add(r)
        filled = set(cols.tolist())
        for r in range(sizes[s]):  # clusters left over (more than K): their nearest metacluster
            if r not in placed:
                meta[int(np.argmin(cost[r]))].append(int(members[r]))
        for c in range(k):  # metaclusters left empty (fewer than K): lend the nearest cluster
            if c not in filled:
                meta[c].append(int(members[int(np.argmin(cost[:, c]))]))
    return [sorted(m) for m in meta]


def ecbpce_metaclusters(T, solution, k, *, max_iter: int = 10_000):
    """E-CB-PCE metaclusters: local search on V under both coverage constraints.

    Every metacluster keeps at least one cluster of every solution and every
    cluster stays in some metacluster (a solution with fewer than K clusters
    lends clusters to several). A move takes a cluster from its metacluster to
    another; when it is the only cluster of its solution there, it is swapped
    with the target's cluster of the same solution that gives the smallest V.
    The best improving move is taken until none improves V (a local minimum).

    Parameters
    ----------
    T : (N_c, N_c) array
        Tanimoto distances.
    solution : (N_c,) int array
        Solution of every cluster (clusters of a solution are contiguous).
    k : int
    max_iter : int

    Returns
    -------
    metaclusters : list of K sorted lists of cluster indices
    history : list of float
        V after the start and after every move (never increasing).

    Examples
    --------
    >>> T = np.array([[0, 1, .1, 1], [1, 0, 1, .1], [.1, 1, 0, 1], [1, .1, 1, 0]])
    >>> ecbpce_metaclusters(T, np.array([0, 0, 1, 1]), 2)[0]
    [[0, 2], [1, 3]]
    """
    solution = np.asarray(solution)
    meta = _feasible_start(T, solution, k)
    history = [metacluster_objective(T, meta)]
    for _ in range(max_iter):
        move = _best_move(T, solution, meta)
        if move is None:
            break
        s_idx, t_idx, a, b, gain = move
        meta[s_idx].remove(a)
        meta[t_idx].append(a)
        if b is not None:
            meta[t_idx].remove(b)
            meta[s_idx].append(b)
        meta = [sorted(m) for m in meta]
        history.append(history[-1] + gain)  # V changes by the move's gain
    return meta, history


def _best_move(T, solution, meta):
    """The improving move (or swap) of smallest V change, first in (source, cluster, target, partner) order, as
    (source, target, cluster, partner or None, change of V); None when none lowers V by more than 1e-12.

    Gains come from ``S = T Z`` (S[c, t]: summed distance of cluster c to metacluster t): moving a from s to t
    changes V by ``S[a, t] - S[a, s]``; swapping it with b (same solution) by ``S[a, t] - T[a, b] - S[a, s] +
    S[b, s] - T[b, a] - S[b, t]``, all candidates at once.
    """
    n, k = len(solution), len(meta)
    Z = np.zeros((n, k), dtype=bool)
    for t, m in enumerate(meta):
        Z[m, t] = True
    S = T @ Z.astype(np.float64)
    n_sol = int(solution.max()) + 1
    counts = np.zeros((k, n_sol), dtype=np.int64)  # clusters of every solution in every metacluster
    for t, m in enumerate(meta):
        np.add.at(counts[t], solution[m], 1)
    src_t, src_a = np.nonzero(Z.T)  # every (metacluster, cluster in it), in (source, cluster) order
    alone = counts[src_t, solution[src_a]] == 1
    cands = []  # (gain, s, a, t, b) arrays
    s1, a1 = src_t[~alone], src_a[~alone]
    if len(a1):
        gain = S[a1] - S[a1, s1][:, None]  # (P, K)
        ok = ~Z[a1] & (np.arange(k)[None, :] != s1[:, None])
        p, t = np.nonzero(ok)
        cands.append((gain[p, t], s1[p], a1[p], t, np.full(len(p), -1)))
    s2, a2 = src_t[alone], src_a[alone]
    for g in np.unique(solution[a2]) if len(a2) else []:
        sel = solution[a2] == g
        ss, aa = s2[sel], a2[sel]
        bb = np.flatnonzero(solution == g)
        qi, tj = np.nonzero(Z[bb])  # every partner b (same solution) and the metacluster t holding it
        b_all = bb[qi]
        # (alone pairs, partner memberships): a moves to t, b moves from t to s
        ok = (~Z[aa][:, tj] & ~Z[b_all][:, ss].T & (tj[None, :] != ss[:, None]))
        p, e = np.nonzero(ok)
        a, b, s_, t = aa[p], b_all[e], ss[p], tj[e]
        gain = S[a, t] - T[a, b] - S[a, s_] + S[b, s_] - T[b, a] - S[b, t]
        cands.append((gain, s_, a, t, b))
    if not cands:
        return None
    gain, s_, a, t, b = (np.concatenate(x) for x in zip(*cands))
    improving = gain < -1e-12
    if not improving.any():
        return None
    gain, s_, a, t, b = gain[improving], s_[improving], a[improving], t[improving], b[improving]
    best = np.flatnonzero(gain == gain.min())
    first = best[np.lexsort((b[best], t[best], a[best], s_[best]))[0]]
    return int(s_[first]), int(t[first]), int(a[first]), None if b[first] < 0 else int(b[first]), float(gain[first])


def _closed_form(cost, power):
    """argmin of sum_M x_M^power cost_M s.t. sum_M x_M = 1, x >= 0 (Theorems 2 and 3), along axis 0."""
    zero = cost <= 1e-12
    with np.errstate(divide="ignore"):
        inv = np.where(zero, 0.0, cost ** (-1.0 / (power - 1.0)))
    out = inv / np.maximum(inv.sum(axis=0, keepdims=True), 1e-300)
    anyzero = zero.any(axis=0)
    if anyzero.any():  # a zero cost takes all the mass (shared among the zeros)
        out[:, anyzero] = zero[:, anyzero] / zero[:, anyzero].sum(axis=0, keepdims=True)
    return out


def projective_consensus(metaclusters, gamma_all, delta_all, *, alpha: float = 2.0, beta: float = 2.0):
    """Consensus Gamma* and Delta* of metaclusters (Theorems 2 and 3).

    ``A_{M,o} = mean_{C in M} (1 - Gamma_{C,o})``,
    ``Gamma*_{M,o} = [sum_{M'} (A_{M,o} / A_{M',o})^{1/(alpha-1)}]^{-1}``;
    ``B_{M,f} = mean_{C in M} (1 - Delta_{C,f})``, Delta* likewise over f with beta.

    Parameters
    ----------
    metaclusters : list of lists of cluster indices
    gamma_all : (n, N_c) array
    delta_all : (N_c, F) array
    alpha, beta : float > 1

    Returns
    -------
    gamma : (n, K) array, rows summing to 1
    delta : (K, F) array, rows summing to 1

    Examples
    --------
    >>> g, d = projective_consensus([[0], [1]], np.eye(2)[[0, 0, 1]], np.eye(2))
    >>> g.tolist(), d.tolist()
    ([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    """
    A = np.stack([1.0 - gamma_all[:, m].mean(axis=1) for m in metaclusters])  # (K, n)
    B = np.stack([1.0 - delta_all[m].mean(axis=0) for m in metaclusters])  # (K, F)
    return _closed_form(A, alpha).T, _closed_form(B.T, beta).T


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
        merges, _ = weighted_linkage(T.copy(), np.ones(len(T)), "average")
        roots = cut_tree(merges, len(T), k)
        return [np.flatnonzero(roots == r).tolist() for r in np.unique(roots)]
