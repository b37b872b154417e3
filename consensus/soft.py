"""Soft consensus on aligned memberships: Borda, confidence voting (sum, product) and DWH.

Every member contributes an (n_objects, k_j) membership matrix — its soft
memberships when it has them (e.g. SLIC's), else one-hot of its labels. The
members' clusters are first put in correspondence with a reference partition
(ALGORITHMS.md section 4): the Hungarian method maximises the weighted overlap
``A_p^T W A_ref`` one-to-one; a member with fewer clusters leaves the other
columns empty, and the clusters of a member with more clusters that are left
over join the reference cluster they overlap most.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from segensemble.constraints import Interval, StrOptions

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, FitResult, fill_docstring
from segensemble.consensus._registry import REGISTRY
from segensemble.errors import InputError
from segensemble.consensus.bestofk import medoid_member
from segensemble.consensus.coassociation import Basic
from segensemble.consensus._aligned_members import (abstaining_borda, abstaining_dwh, abstaining_vote_product,
                                                    abstaining_vote_sum, align_memberships, borda_points,
                                                    member_memberships)
from segensemble.consensus._hard_labels import (aligned_blocks, average_in_one_hot, hard_and_whole,
                                                hard_borda_score, hard_column_counts, hard_member, hard_overlap,
                                                matched_columns, row_softmax)

__all__ = ["Borda", "VoteSum", "VoteProduct", "DWH", "member_memberships", "align_memberships",
           "resolve_reference", "borda_points", "confidence"]

REFERENCE = [StrOptions({"largest", "medoid"}), Interval(Integral, 0, None, closed="left")]
#: (n, K) arrays aligned voting holds at once: reference, one member's memberships, its alignment, the combination.
ALIGNED_AT_ONCE = 4


def resolve_reference(ensemble, reference, n_clusters):
    """The reference partition the members are aligned to.

    ``'largest'``: the first member with the most clusters (with an integer
    ``n_clusters``: the first member with exactly that many); ``'medoid'``:
    the member with the smallest summed Mirkin distance to the others (among
    those with ``n_clusters`` clusters); an int: that member. When no member
    has ``n_clusters`` clusters, the Basic consensus with that many is the
    reference.

    Returns
    -------
    memberships : (n_objects, K) array
        The reference's memberships.
    index : int or None
        The reference member, None for the Basic fallback.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> ens = Ensemble.from_labels([[0, 0], [0, 1], [1, 2]])
    >>> resolve_reference(ens, "largest", "auto")[1]
    1
    """
    ks = np.asarray(ensemble.n_clusters)
    if isinstance(reference, (int, np.integer)) and not isinstance(reference, bool):
        j = int(reference)
        if j >= ensemble.n_members:
            raise InputError(f"reference: expected a member index below {ensemble.n_members}, got {j}")
        if n_clusters != "auto" and ks[j] != int(n_clusters):
            raise InputError(f"reference: member {j} has {ks[j]} clusters but n_clusters={n_clusters}; "
                             "give n_clusters='auto' or another reference")
    elif reference == "medoid":
        j, _ = medoid_member(ensemble, n_clusters)
    else:
        cand = np.flatnonzero(ks == (ks.max() if n_clusters == "auto" else int(n_clusters)))
        j = int(cand[0]) if len(cand) else None
    if j is not None:
        return member_memberships(ensemble, j, at_once=ALIGNED_AT_ONCE), j
    labels = Basic(n_clusters=int(n_clusters)).fit(ensemble).labels_
    return np.eye(int(labels.max()) + 1)[labels], None


def confidence(memberships, kind: str = "max") -> np.ndarray:
    """Per-object confidence of a soft consensus, in [0, 1].

    ``'max'``: the largest membership; ``'entropy'``: one minus the entropy
    of the memberships divided by log K (1 = certain, 0 = uniform).

    Examples
    --------
    >>> M = np.array([[1.0, 0.0], [0.5, 0.5]])
    >>> confidence(M).tolist(), confidence(M, "entropy").tolist()
    ([1.0, 0.5], [1.0, 0.0])
    """
    M = np.asarray(memberships, dtype=np.float64)
    if M.ndim != 2 or M.shape[1] < 1:
        raise InputError(f"memberships: expected an (n_objects, K) array, got shape {M.shape}")
    if kind == "max":
        return M.max(axis=1)
    if kind == "entropy":
        if M.shape[1] == 1:
            return np.ones(len(M))
        P = M / np.maximum(M.sum(axis=1, keepdims=True), 1e-300)
        with np.errstate(divide="ignore", invalid="ignore"):
            H = -np.sum(np.where(P > 0, P * np.log(P), 0.0), axis=1)
        return np.clip(1.0 - H / np.log(M.shape[1]), 0.0, 1.0)
    raise InputError(f"kind: expected 'max' or 'entropy', got {kind!r}")


class _AlignedVoting(ConsensusClusterer):
    """Shared parameters and alignment of the soft voting methods."""

    _parameter_constraints: dict = {"n_clusters": N_CLUSTERS, "reference": REFERENCE, "refine": REFINE}
    #: Members that abstain: see :mod:`segensemble.consensus._aligned_members`.
    capabilities = Capabilities(soft=True, abstain=True)

    def __init__(self, n_clusters="auto", *, reference="medoid", refine=False):
        self.n_clusters = n_clusters
        self.reference = reference
        self.refine = refine

    def _reference(self, ensemble):
        R, self.reference_ = resolve_reference(ensemble, self.reference, self.n_clusters)
        return R

    def _aligned(self, ensemble):
        """The members' aligned memberships one at a time (never all m together: 800 MB at 10^6, K = m = 10)."""
        R, w = self._reference(ensemble), ensemble.weights
        for j in range(ensemble.n_members):
            yield align_memberships(member_memberships(ensemble, j, at_once=ALIGNED_AT_ONCE), R, w)

    def _fit(self, ensemble):
        memberships = self._combine(ensemble)
        return FitResult(np.argmax(memberships, axis=1), {"memberships_": memberships})


_SHARED = """\
    n_clusters : int or 'auto', default 'auto'
        K ('auto': the reference's number of clusters).
    reference : {'medoid', 'largest'} or int, default 'medoid'
        The partition every member is aligned to (:func:`resolve_reference`).
        The medoid scored higher macro-F1 than the largest member on soft
        k-means ensembles of digits (0.59 vs 0.55 for Borda) and equal on Iris
        and Wine (``benchmarks/soft_consensus_f1.py`` protocol).
    refine : bool or int, default False
        Passes of local refinement after the vote.
"""


_ATTRIBUTES = """\
    Attributes
    ----------
    labels_, memberships_ : (n_objects,), (n_objects, K)
    reference_ : int or None
        The reference member (None: the Basic consensus was the reference).
"""


_with_shared_parameters = fill_docstring(shared=_SHARED, attributes=_ATTRIBUTES)


@REGISTRY.register("borda")
@_with_shared_parameters
class Borda(_AlignedVoting):
    """BordaConsensus: positional (Borda) voting on aligned soft memberships.

    Every member ranks the objects in each aligned cluster by membership and
    awards Borda points (:func:`borda_points`, ties and weighted objects
    exact); the points are summed over members. Hard labels: the cluster with
    most points. Soft consensus: ``memberships_ = softmax(score / (m N) /
    temperature)`` per object, with ``score / (m N)`` in (0, 1]. A member
    that abstains ranks only the objects it labels (N its weight) and gives
    the others no points; ``m N`` is then each object's sum of N over the
    members that label it.

    Parameters
    ----------
{shared}    temperature : float, default 0.1
        Softness of ``memberships_``.

    Attributes
    ----------
    labels_, memberships_, scores_ : (n_objects,), (n_objects, K), (n_objects, K)
    reference_ : int or None

    References
    ----------
    X. Sevillano, F. Alías, J. C. Socoró, "BordaConsensus: a new consensus
    function for soft cluster ensembles", SIGIR 2007.

    Examples
    --------
    >>> L = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1], [1, 0, 0]])
    >>> Borda(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    _parameter_constraints: dict = {**_AlignedVoting._parameter_constraints,
                                    "temperature": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, n_clusters="auto", *, reference="medoid", temperature=0.1, refine=False):
        super().__init__(n_clusters, reference=reference, refine=refine)
        self.temperature = temperature

    def _fit(self, ensemble):
        w = ensemble.weights
        if ensemble.abstains:
            score, memberships = abstaining_borda(ensemble, self._reference(ensemble), ALIGNED_AT_ONCE,
                                                  self.temperature)
            return FitResult(np.argmax(score, axis=1), {"memberships_": memberships, "scores_": score})
        if hard_and_whole(ensemble):  # from the labels, exactly as below: n K numbers per member, not 20
            score = hard_borda_score(ensemble, self._reference(ensemble))
        else:
            score = sum(borda_points(A, w) for A in self._aligned(ensemble))
        memberships = row_softmax(score, ensemble.n_members * w.sum(), self.temperature)
        return FitResult(np.argmax(score, axis=1), {"memberships_": memberships, "scores_": score})


@REGISTRY.register("vote_sum")
@_with_shared_parameters
class VoteSum(_AlignedVoting):
    """Confidence voting, sum rule: the mean of the aligned memberships.

    With members that abstain, an object's mean is over the members that
    label it.

    Parameters
    ----------
{shared}
{attributes}
    References
    ----------
    X. Sevillano, F. Alías, J. C. Socoró, "Positional and confidence voting-
    based consensus functions for fuzzy cluster ensembles", Fuzzy Sets and
    Systems 193, 2012.

    Examples
    --------
    >>> L = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1], [1, 0, 0]])
    >>> VoteSum(n_clusters=2).fit(L).memberships_.round(2).tolist()
    [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.33, 0.67]]
    """

    def _combine(self, ensemble):
        if ensemble.abstains:
            return abstaining_vote_sum(ensemble, self._reference(ensemble), ALIGNED_AT_ONCE)
        if hard_and_whole(ensemble):  # the same sums of zeros and ones, from the labels
            return hard_column_counts(ensemble, self._reference(ensemble)) / np.float64(ensemble.n_members)
        return sum(self._aligned(ensemble)) / ensemble.n_members


@REGISTRY.register("vote_product")
@_with_shared_parameters
class VoteProduct(_AlignedVoting):
    """Confidence voting, product rule: the normalised product of the aligned memberships.

    Memberships are floored at ``eps`` before the product (in the log domain),
    so one member's zero does not veto a cluster outright. With members that
    abstain, an object's product is over the members that label it.

    Parameters
    ----------
{shared}    eps : float, default 1e-3
        Floor of every membership.

{attributes}
    References
    ----------
    X. Sevillano, F. Alías, J. C. Socoró, Fuzzy Sets and Systems 193, 2012.

    Examples
    --------
    >>> L = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1], [1, 0, 0]])
    >>> est = VoteProduct(n_clusters=2, eps=0.1).fit(L)
    >>> est.labels_.tolist(), est.memberships_[3].round(3).tolist()
    ([0, 0, 1, 1], [0.091, 0.909])
    """

    _parameter_constraints: dict = {**_AlignedVoting._parameter_constraints,
                                    "eps": [Interval(Real, 0, 1, closed="neither")]}

    def __init__(self, n_clusters="auto", *, reference="medoid", eps=1e-3, refine=False):
        super().__init__(n_clusters, reference=reference, refine=refine)
        self.eps = eps

    def _combine(self, ensemble):
        if ensemble.abstains:
            return abstaining_vote_product(ensemble, self._reference(ensemble), ALIGNED_AT_ONCE, self.eps)
        if hard_and_whole(ensemble):
            # an aligned hard member adds log(1) = 0 or log(eps): a sum of r copies of log(eps) added in turn
            # (the zeros change nothing), with r the members whose aligned label is not that column
            m = ensemble.n_members
            partial = np.zeros(m + 1)
            for r in range(1, m + 1):
                partial[r] = partial[r - 1] + np.log(self.eps)
            counts = hard_column_counts(ensemble, self._reference(ensemble))  # 0..m, small integers
            return row_softmax(counts, table=partial[::-1])  # partial[m - counts], looked up block by block
        return row_softmax(sum(np.log(np.maximum(A, self.eps)) for A in self._aligned(ensemble)))


@REGISTRY.register("dwh")
@_with_shared_parameters
class DWH(_AlignedVoting):
    """Dimitriadou–Weingessel–Hornik voting: a running consensus, each member aligned to it in turn.

    The running consensus starts as the reference; the other members follow in
    their order, each aligned to the current consensus (Hungarian method on
    the weighted overlap) and averaged in: ``C_t = (t - 1)/t C_{t-1} + A_t / t``.
    With members that abstain, each object's average runs over the members
    that label it.

    Parameters
    ----------
{shared}
{attributes}
    References
    ----------
    E. Dimitriadou, A. Weingessel, K. Hornik, "A combination scheme for fuzzy
    clustering", IJPRAI 16(7), 2002.

    Examples
    --------
    >>> L = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1], [1, 0, 0]])
    >>> DWH(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    def _combine(self, ensemble):
        C, self.reference_ = resolve_reference(ensemble, self.reference, self.n_clusters)
        if ensemble.abstains:
            return abstaining_dwh(ensemble, C, self.reference_, ALIGNED_AT_ONCE)
        w = ensemble.weights
        others = [j for j in range(ensemble.n_members) if j != self.reference_]
        hard = [hard_member(ensemble, j) for j in others]  # (labels, k) of a hard member, else None
        t, C, overlap = 1, C.copy(), None  # C = (t - 1) / t * C + aligned / t in place, on a copy
        for j, member, following in zip(others, hard, hard[1:] + [None]):
            t += 1
            if member is not None:  # one-hot once aligned; the next one's overlap in the same pass
                labels, k = member
                overlap = hard_overlap(labels, k, C, w) if overlap is None else overlap
                overlap = average_in_one_hot(C, matched_columns(overlap)[labels], t, following=following, weights=w)
                continue
            for s, block in aligned_blocks(member_memberships(ensemble, j, at_once=ALIGNED_AT_ONCE), C, w):
                rows = C[s:s + len(block)]  # the overlap with the whole of C is taken before the first block
                np.multiply(rows, (t - 1) / t, out=rows)
                rows += np.divide(block, t, out=block)
        return C
