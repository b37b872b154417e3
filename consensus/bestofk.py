"""Best-of-K: the member closest to all others (summed Mirkin distance)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from segensemble.consensus._base import Capabilities, ConsensusClusterer
from segensemble.consensus._best_moves import best_moves
from segensemble.consensus._linkage import clusters_to_k
from segensemble.consensus._registry import REGISTRY

__all__ = ["BestOfK", "mirkin_distance_matrix", "medoid_member", "disagreement_shares", "completed_member",
           "column_members"]

#: Objects :func:`mirkin_distance_matrix` counts at a time when its sums are exact in any order (whole weights).
MIRKIN_BLOCK = 16384


def mirkin_distance_matrix(ensemble) -> np.ndarray:
    """Pairwise Mirkin distances between members, with object weights.

    ``M(a, b) = sum_u n_u^2 + sum_v n_v^2 - 2 sum_uv n_uv^2`` (weighted counts):
    the number of ordered object pairs on which two partitions disagree.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> mirkin_distance_matrix(Ensemble.from_labels([[0, 0], [0, 1]])).tolist()
    [[0.0, 2.0], [2.0, 0.0]]
    """
    w, ks, m, n = ensemble.weights, ensemble.n_clusters, ensemble.n_members, ensemble.n_objects
    pairs = [(a, b) for a in range(m) for b in range(a + 1, m)]
    small = [(a, b) for a, b in pairs if ks[a] * ks[b] <= 4 * n + 1024]
    # in blocks when the weights are whole (exact integers in any order), else in one pass: the same numbers
    counts, joint = _counts(ensemble, small, MIRKIN_BLOCK if _whole(w) else max(n, 1))
    for a, b in pairs:
        if (a, b) not in joint:  # many labels (a colour PNG): only the pairs that occur, never ka x kb cells
            code = ensemble.member_labels[a].astype(np.int64) * ks[b] + ensemble.member_labels[b]
            joint[a, b] = np.bincount(np.unique(code, return_inverse=True)[1], weights=w)
    self_sq = np.array([np.sum(c**2) for c in counts])
    D = np.zeros((m, m))
    for a, b in pairs:
        D[a, b] = D[b, a] = self_sq[a] + self_sq[b] - 2 * np.sum(joint[a, b] ** 2)
    return D


def _whole(w) -> bool:
    """Whole weights summing below 2^53: every count is an exact integer, whatever the order it is summed in."""
    return bool(np.all(w == np.round(w))) and float(w.sum()) < 2.0**53


def _counts(ensemble, pairs, rows: int):
    """The weighted label counts of every member and the joint tables of ``pairs`` for
    :func:`mirkin_distance_matrix`, ``rows`` objects at a time (blocks stay in cache: half the time at 10^6)."""
    w, ks = ensemble.weights, ensemble.n_clusters
    counts = [np.zeros(k) for k in ks]
    joint = {(a, b): np.zeros(ks[a] * ks[b]) for a, b in pairs}
    for s in range(0, ensemble.n_objects, rows):
        block, wb = ensemble.member_labels[:, s:s + rows].astype(np.int64), w[s:s + rows]
        for j, lab in enumerate(block):
            counts[j] += np.bincount(lab, weights=wb, minlength=ks[j])
        for a, b in pairs:
            joint[a, b] += np.bincount(block[a] * ks[b] + block[b], weights=wb, minlength=ks[a] * ks[b])
    return counts, joint


def disagreement_shares(ensemble) -> list:
    """Every member's summed share of disagreeing object pairs with the others, over the pairs both label.

    For members a and b, the Mirkin distance over the objects both label divided by the square of those objects'
    weight (a pair of members with no such object adds nothing). Exact fractions when the weights are whole, so
    that equal sums tie whatever the order of the members; floats otherwise.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> [str(c) for c in disagreement_shares(Ensemble.from_labels([[0, 0, -1], [0, 1, 1], [1, 1, 1]]))]
    ['17/18', '4/9', '1/2']
    """
    w, ks, labels, m = ensemble.weights, ensemble.n_clusters, ensemble.member_labels, ensemble.n_members
    exact = _whole(w)
    cost = [Fraction(0) if exact else 0.0 for _ in range(m)]
    said = [labels[j] >= 0 for j in range(m)]
    for a in range(m):
        for b in range(a + 1, m):
            both = np.flatnonzero(said[a] & said[b])
            if not len(both):
                continue
            la, lb, wb = labels[a][both].astype(np.int64), labels[b][both], w[both]
            code = la * ks[b] + lb
            if ks[a] * ks[b] > 4 * len(both) + 1024:  # many labels: only the pairs that occur, never ka x kb cells
                code = np.unique(code, return_inverse=True)[1].ravel()
            joint = np.bincount(code, weights=wb)
            pairs = (np.sum(np.bincount(la, weights=wb) ** 2) + np.sum(np.bincount(lb, weights=wb) ** 2)
                     - 2 * np.sum(joint**2))
            total = float(wb.sum())
            share = Fraction(int(pairs), int(total) ** 2) if exact else pairs / total**2
            cost[a] += share
            cost[b] += share
    return cost


def medoid_member(ensemble, n_clusters="auto"):
    """The member with the smallest summed Mirkin distance to the others.

    With an integer ``n_clusters`` only members with that many clusters compete;
    returns None when there is none. With members that abstain, the distances
    are :func:`disagreement_shares` and only members that label some object
    compete.

    Returns
    -------
    index : int or None
    costs : (n_members,) array of summed distances

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> medoid_member(Ensemble.from_labels([[0, 0, 1], [0, 0, 0], [1, 1, 1]]))[0]
    0
    """
    if ensemble.abstains:
        shares, ks = disagreement_shares(ensemble), np.array(ensemble.n_clusters)
        cand = [j for j in range(ensemble.n_members)
                if ks[j] > 0 and (n_clusters == "auto" or ks[j] == int(n_clusters))]
        best = min(cand, key=lambda j: (shares[j], j)) if cand else None
        return best, np.array([float(c) for c in shares])
    cost = mirkin_distance_matrix(ensemble).sum(axis=1)
    cand = np.arange(ensemble.n_members)
    if n_clusters != "auto":
        cand = cand[np.array(ensemble.n_clusters) == int(n_clusters)]
        if not len(cand):
            return None, cost
    return int(cand[np.argmin(cost[cand])]), cost


def column_members(ensemble) -> np.ndarray:
    """The member of every incidence column (member cluster).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> column_members(Ensemble.from_labels([[0, 0], [1, 0], [2, -1]])).tolist()
    [0, 0, 0, 1]
    """
    return np.repeat(np.arange(ensemble.n_members), np.diff(ensemble.offsets))


def completed_member(ensemble, j: int) -> np.ndarray:
    """Member j's labels with every object it leaves unlabelled placed in one of its clusters.

    The objects go one by one, in index order, to the cluster whose correlation-clustering cost with the
    members that label them is smallest given those placed before (ties: the smallest cluster): the start of
    :class:`~segensemble.consensus.correlation.BOEM`'s moves (:mod:`segensemble.consensus._best_moves`). Each
    member's disagreements count on the pairs it labels, as in
    :func:`~segensemble.consensus.correlation.correlation_cost`.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> ens = Ensemble.from_labels([[0, 0, 0], [0, 0, 0], [-1, 1, 1], [1, 1, 1]])
    >>> completed_member(ens, 0).tolist()  # object 2 sides with object 3 in both other members
    [0, 0, 1, 1]
    """
    z = np.array(ensemble.labels[:, j], dtype=np.int64)
    H, k = ensemble.incidence.tocsr(), int(z.max()) + 1
    best_moves(H.indptr, H.indices, H.data, ensemble.weights, float(ensemble.n_members), z, k, True, k, 0, 0.0,
               col_member=column_members(ensemble) if ensemble.abstains else None)
    return z


@REGISTRY.register("bestofk")
class BestOfK(ConsensusClusterer):
    """Best-of-K: return the input partition with the smallest summed Mirkin distance.

    A 2-approximation of the median partition (Gionis, Mannila & Tsaparas),
    inconsistent under the random perturbation model (Zhou et al. 2023,
    Appendix A). With an integer ``n_clusters`` K, only members with exactly K
    clusters compete. When none has K, K is still honoured: the medoid of the
    members with more than K clusters has its clusters merged by average
    linkage on their co-association until K are left (when every member has
    fewer, the medoid's least-associated objects start new clusters until
    there are K) — the same step that brings CC-Pivot to K. ``best_member_``
    is then the member that was merged or split.

    With members that abstain, the medoid is taken over the pairs each two
    members both label (:func:`medoid_member`; a member that labels nothing
    never competes), and the objects it leaves unlabelled join its clusters
    one by one where they cost least (:func:`completed_member`).

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
    refine : bool or int, default False

    Attributes
    ----------
    best_member_ : int
        Index of the chosen member.

    References
    ----------
    A. Gionis, H. Mannila, P. Tsaparas, "Clustering aggregation", ACM TKDD 1(1), 2007;
    A. Goder, V. Filkov, "Consensus clustering algorithms: comparison and
    refinement", ALENEX 2008.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> est = BestOfK().fit(L)
    >>> est.labels_.tolist(), est.best_member_
    ([0, 0, 1, 1], 0)
    """

    capabilities = Capabilities(abstain=True)

    def _fit(self, ensemble):
        best, cost = medoid_member(ensemble, self.n_clusters)
        self.mirkin_costs_ = cost
        member = (lambda j: completed_member(ensemble, j)) if ensemble.abstains else (lambda j: ensemble.labels[:, j])
        if best is not None or self.n_clusters == "auto":
            self.best_member_ = best
            return member(best)
        # no member has K clusters: the medoid of those with more, merged down to K (else of all, split up to K)
        k = min(int(self.n_clusters), ensemble.n_objects)
        ks = np.asarray(ensemble.n_clusters)
        more = np.flatnonzero(ks > k)
        cand = more if len(more) else np.flatnonzero(ks > 0)
        self.best_member_ = int(cand[np.argmin(cost[cand])])
        return clusters_to_k(ensemble, member(self.best_member_), k)
