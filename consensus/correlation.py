"""Correlation-clustering consensus: CC-Pivot and Best One Element Moves (BOEM).

Both minimise the correlation-clustering cost of the co-association X,
``C(z) = sum_{i<j} w_i w_j ([z_i = z_j](1 - X_ij) + [z_i != z_j] X_ij)``, which
equals the summed Mirkin distance to the members up to a constant. They run on
the ensemble with identical objects merged (weights = copies by construction;
identical objects move together).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from segensemble.abstentions import speaking_members
from segensemble.constraints import Interval, StrOptions

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, seed_from
from segensemble.consensus._best_moves import best_moves
from segensemble.consensus._linkage import clusters_to_k, member_contingency
from segensemble.consensus._memory import check_dense
from segensemble.consensus.bestofk import BestOfK, column_members
from segensemble.consensus._registry import REGISTRY
from segensemble.errors import InputError

__all__ = ["CCPivot", "BOEM", "correlation_cost", "coassociation_degrees", "member_cluster_weights", "member_rows"]

#: Most gain entries BOEM computes (per scoring of an object: its incidence entries + 1, times the open clusters)
#: before it gives up with an error: half a minute on one core here. Integer K stays far below it (10^6 objects,
#: m = 10, K = 10: 1.4 s); with n_clusters='auto' every move may open a new singleton (10^5 RPM objects: 3 320
#: clusters, 17 s), and 10^6 such objects would score for hours: they stop after 28 s with 11 663 clusters open.
BOEM_WORK_LIMIT = 6e10

def member_cluster_weights(ensemble) -> np.ndarray:
    """``H^T w``: the weight of every member cluster, one ``bincount`` per member (the sparse product's sums).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> member_cluster_weights(Ensemble.from_labels([[0, 0], [0, 1], [1, 1]], [1, 2, 3])).tolist()
    [3.0, 3.0, 1.0, 5.0]
    """
    return member_contingency(ensemble, np.zeros(ensemble.n_objects, dtype=np.int64), 1).ravel()


def correlation_cost(ensemble, labels, *, cluster_weights=None) -> float:
    """Correlation-clustering cost of a labelling against the co-association.

    Computed from the members' contingency with the labelling (:func:`member_contingency`) in O(n m + sum k K):
    same-cluster pairs cost 1 - X, others X. ``cluster_weights``: the weight of every member cluster
    (:func:`member_cluster_weights`), which depends on the ensemble only, when already at hand. That is the
    members' disagreements with the labelling, pair by pair, averaged over the members; with members that
    abstain, each member's disagreements count on the pairs it labels, averaged over the members that label
    something (a member abstaining everywhere changes nothing).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> ens = Ensemble.from_labels([[0, 0], [0, 1], [1, 1]])
    >>> correlation_cost(ens, np.array([0, 0, 1])), correlation_cost(ens, np.array([0, 1, 2]))
    (1.0, 1.0)
    >>> correlation_cost(Ensemble.from_labels([[0, 0], [0, -1], [1, 0]]), np.array([0, 0, 1]))  # pair (0, 2)
    0.5
    """
    w, m = ensemble.weights, ensemble.n_members
    z = np.asarray(labels)
    k = int(z.max()) + 1
    HZ = member_contingency(ensemble, z, k)  # (sum k, K)
    if ensemble.abstains:  # ordered pairs a member labels on which it and z disagree, member by member
        off, disagree = ensemble.offsets, 0.0
        for j in range(m):
            block = HZ[off[j]:off[j + 1]]
            together = float(np.sum(block**2))
            sizes, clusters = block.sum(axis=0), block.sum(axis=1)  # of the objects member j labels
            disagree += float(np.sum(sizes**2)) - together + float(np.sum(clusters**2)) - together
        return 0.5 * disagree / speaking_members(ensemble.n_clusters)
    same_x = float(np.sum(HZ**2)) / m  # sum_{i,j same} w_i w_j X_ij, i = j included
    size = np.bincount(z, weights=w, minlength=k)
    same_pairs = float(np.sum(size**2))
    hw = cluster_weights if cluster_weights is not None else member_cluster_weights(ensemble)
    all_x = float(hw @ hw) / m  # sum_{i,j} w_i w_j X_ij
    diag = float(np.sum(w**2))  # i = j terms: X_ii = 1
    # ordered pairs i != j, halved
    same_cost = (same_pairs - diag) - (same_x - diag)
    diff_cost = all_x - same_x
    return 0.5 * (same_cost + diff_cost)


def member_rows(labels) -> np.ndarray:
    """The (n, m) labels as (m, n) rows, one per member, in the smallest integer type holding them (-1 too).

    Examples
    --------
    >>> member_rows(np.array([[0, 2], [1, 0]])).tolist()
    [[0, 1], [2, 0]]
    >>> member_rows(np.array([[0, -1], [300, 0]])).tolist()  # -1 kept: a signed type
    [[0, 300], [-1, 0]]
    """
    labels = np.asarray(labels)
    low, high = int(labels.min(initial=0)), int(labels.max(initial=0))
    return np.ascontiguousarray(labels.T, dtype=np.result_type(np.min_scalar_type(low), np.min_scalar_type(high)))


def coassociation_degrees(rows, w) -> np.ndarray:
    """``X @ w`` from the members' labels ``rows`` (m, n), never forming X: ``sum_j counts_j[label_j] / m``
    with ``counts_j`` the weight of every label of member j (summed exactly when the weights are whole).

    Examples
    --------
    >>> rows = member_rows(np.array([[0, 0], [0, 1], [1, 1]]))
    >>> coassociation_degrees(rows, np.ones(3)).tolist()  # X = [[1, .5, 0], [.5, 1, .5], [0, .5, 1]]
    [1.5, 2.0, 1.5]
    """
    total = np.zeros(rows.shape[1])
    for lab in rows:
        total += np.bincount(lab, weights=w)[lab]
    return total / len(rows)


@REGISTRY.register("ccpivot")
class CCPivot(ConsensusClusterer):
    """CC-Pivot (Ailon, Charikar & Newman 2008) on the co-association, as Goder & Filkov.

    Repeatedly pick a pivot among the unclustered objects and put every
    unclustered object whose co-association with it exceeds ``threshold`` in its
    cluster. ``pivot='random'`` draws pivots with probability proportional to
    weight and keeps the best of ``n_init`` runs (lowest correlation cost);
    ``pivot='degree'`` takes the object with the largest weighted co-association
    degree (deterministic). The number of clusters is the algorithm's own with
    ``n_clusters='auto'``; an integer K is reached by average-linkage merging of
    the pivot clusters (or splitting off the least associated objects).
    Works from the members' labels, never forming X: a pivot compares its
    labels with those of the unclustered objects (O(n m) time and memory per
    pivot; ``X = c / m`` exactly for c agreeing members), and the degrees are
    label counts (:func:`coassociation_degrees`).

    With members that abstain, X of the pivot and an object is the share of
    agreeing members among those that label both (none: 0, no join), and
    the runs are compared by :func:`correlation_cost` with each member's
    disagreements counted on the pairs it labels. ``pivot='degree'`` needs
    every member to label every object (its degrees are label counts) and is
    refused then.

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
    threshold : float in [0, 1), default 0.25
        Join when ``X(pivot, j) > threshold`` (distance ``1 - X < 1 - threshold``);
        0.5 is the majority rule of Ailon et al., 0.25 the setting of Goder &
        Filkov and Zhou et al.
    pivot : {'random', 'degree'}, default 'random'
    n_init : int, default 10
    refine : bool or int, default False
    random_state : None or int, default 0

    References
    ----------
    N. Ailon, M. Charikar, A. Newman, "Aggregating inconsistent information:
    ranking and clustering", JACM 55(5), 2008; A. Goder, V. Filkov, "Consensus
    clustering algorithms: comparison and refinement", ALENEX 2008.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> CCPivot(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    capabilities = Capabilities(distinct_rows=True, abstain=True)
    _parameter_constraints: dict = {
        "n_clusters": N_CLUSTERS,
        "threshold": [Interval(Real, 0, 1, closed="left")],
        "pivot": [StrOptions({"random", "degree"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "refine": REFINE,
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters="auto", *, threshold=0.25, pivot="random", n_init=10, refine=False,
                 random_state=0):
        self.n_clusters = n_clusters
        self.threshold = threshold
        self.pivot = pivot
        self.n_init = n_init
        self.refine = refine
        self.random_state = random_state

    def _run(self, rows, w, gen, degree, abstains: bool = False):
        """One pass of pivots over the members' labels ``rows`` (m, n); the clusters' labels."""
        m, n = rows.shape
        z = np.full(n, -1)
        idx = np.arange(n)
        joins = np.array([c / m > self.threshold for c in range(m + 1)])  # X(pivot, j) = c / m for c agreeing
        c = 0
        while len(idx):
            if self.pivot == "random":
                j = int(gen.choice(len(idx), p=w[idx] / w[idx].sum()))
            else:
                j = int(np.argmax(degree[idx]))
            if abstains:  # X: the share of agreeing members among those that label both
                agree, both = np.zeros(len(idx)), np.zeros(len(idx))
                for lab, value in zip(rows, rows[:, j].tolist()):
                    if value >= 0:
                        both += lab >= 0
                        agree += lab == value
                join = np.divide(agree, both, out=np.zeros(len(idx)), where=both > 0) > self.threshold
            else:
                agree = np.zeros(len(idx), dtype=np.min_scalar_type(m))
                for lab, value in zip(rows, rows[:, j].tolist()):
                    agree += lab == value
                join = joins[agree]
            join[j] = True
            z[idx[join]] = c
            keep = np.flatnonzero(~join)
            idx, rows = idx[keep], rows[:, keep]
            c += 1
        return z

    def _fit(self, ensemble):
        if ensemble.abstains and self.pivot == "degree":
            raise InputError("pivot: 'degree' needs every member to label every object (its degrees are label "
                             "counts), got members that abstain; use pivot='random'")
        rows = member_rows(ensemble.labels)
        w = ensemble.weights
        degree = coassociation_degrees(rows, w) if self.pivot == "degree" else None
        gen = np.random.default_rng(seed_from(self.random_state))
        runs = 1 if self.pivot == "degree" else self.n_init
        best = None
        totals = member_cluster_weights(ensemble)
        for _ in range(runs):
            z = self._run(rows, w, gen, degree, ensemble.abstains)
            cost = correlation_cost(ensemble, z, cluster_weights=totals)
            if best is None or cost < best[1]:
                best = (z, cost)
        z = best[0]
        if self.n_clusters != "auto":
            z = clusters_to_k(ensemble, z, int(self.n_clusters))
        self.cost_ = correlation_cost(ensemble, z, cluster_weights=totals)
        return z


@REGISTRY.register("boem")
class BOEM(ConsensusClusterer):
    """Best One Element Moves (Goder & Filkov 2008) from the Best-of-K start.

    One-element moves: an object (identical objects move together) goes to
    the cluster — or, with ``n_clusters='auto'``, the new singleton — that
    lowers the correlation-clustering cost the most, until no move improves
    it. ``algorithm='passes'`` (default) visits the objects in order, each
    making its best move when it improves, and repeats until a pass makes no
    move: O(nnz(H) K) per pass, a few passes (10^6 objects, m = 10, K = 10:
    five passes, about a second). ``algorithm='steepest'`` makes the best
    move of all objects each time (ties: the smallest object, then the
    smallest cluster); a move changes any object's best gain by at most
    ``2 m w_i w_v`` (scaled by the m members), so each object keeps its last
    exact gain as a bound and only those whose bound could still win are
    re-scored (:mod:`segensemble.consensus._best_moves`) — the same moves as
    re-scoring all, but about one move per four noisy objects, each costing
    more as n grows. Both end in a local minimum of the cost; on the
    benchmark's RPM members (10^4 and 10^5 objects) both end in the same
    partition. The gains come from the members' labels counted per cluster,
    so X is never formed; with 0/1 memberships and whole weights they are
    exact whole numbers. With an integer K no move may empty a cluster or
    open a new one, so the result keeps the number of clusters of the start
    (K when a member has K clusters, as Best-of-K).

    With members that abstain, each member's disagreements count on the
    pairs it labels (:func:`correlation_cost`): the gains use, for every
    member labelling the object, the weight of each cluster's objects that
    member labels, and the start is Best-of-K's completed medoid.

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
    algorithm : {'passes', 'steepest'}, default 'passes'
        The order of the moves (above).
    max_moves : int or None, default None
        Moves at most (None: until no move improves). A fit that would score more than
        :data:`BOEM_WORK_LIMIT` gain entries (half a minute; with ``'auto'`` and many new singletons) stops
        with an error naming ccpivot and kcc.
    refine : bool or int, default False

    Attributes
    ----------
    n_moves_ : int
    cost_ : float

    References
    ----------
    A. Goder, V. Filkov, ALENEX 2008; A. Gionis, H. Mannila, P. Tsaparas,
    "Clustering aggregation", ACM TKDD 1(1), 2007.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> BOEM(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    capabilities = Capabilities(distinct_rows=True, abstain=True)
    _parameter_constraints: dict = {
        "n_clusters": N_CLUSTERS,
        "algorithm": [StrOptions({"passes", "steepest"})],
        "max_moves": [Interval(Integral, 0, None, closed="left"), None],
        "refine": REFINE,
    }

    def __init__(self, n_clusters="auto", *, algorithm="passes", max_moves=None, refine=False):
        self.n_clusters = n_clusters
        self.algorithm = algorithm
        self.max_moves = max_moves
        self.refine = refine

    def _fit(self, ensemble):
        k_start = self.n_clusters if self.n_clusters == "auto" else min(int(self.n_clusters), ensemble.n_objects)
        start = BestOfK(n_clusters=k_start).fit(ensemble).labels_  # identical objects collapsed: maybe < K left
        H, w, m = ensemble.incidence.tocsr(), ensemble.weights, ensemble.n_members
        fixed_k = self.n_clusters != "auto"
        z = np.unique(start, return_inverse=True)[1].astype(np.int64)
        k = int(z.max()) + 1
        check_dense(H.shape[1], k + 1, "weights of every member cluster in every cluster (BOEM)", copies=2)
        max_moves = np.iinfo(np.int64).max if self.max_moves is None else int(self.max_moves)
        cap = k if fixed_k else k + min(max_moves, len(w)) + 1  # every move opens at most one cluster
        # with 'auto' one empty cluster stands for a new singleton; a move made while m * delta < -1e-12 m
        self.n_moves_ = best_moves(H.indptr, H.indices, H.data, w, float(m), z, k if fixed_k else k + 1, fixed_k,
                                   cap, max_moves, 1e-12 * m, steepest=self.algorithm == "steepest",
                                   work_limit=BOEM_WORK_LIMIT,
                                   col_member=column_members(ensemble) if ensemble.abstains else None)
        z = np.unique(z, return_inverse=True)[1]
        self.cost_ = correlation_cost(ensemble, z)
        return z
