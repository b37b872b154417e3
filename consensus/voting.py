"""Majority voting after aligning every member to a reference (Hungarian method)."""

from __future__ import annotations

import numpy as np

from segensemble.consensus._aligned_members import abstaining_vote
from segensemble.consensus._base import Capabilities, ConsensusClusterer, FitResult
from segensemble.consensus._hard_labels import add_in_columns
from segensemble.consensus._registry import REGISTRY
from segensemble.consensus._memory import check_dense
from segensemble.consensus.soft import resolve_reference

__all__ = ["Vote", "align_to_reference"]


def align_to_reference(labels, reference, weights, k_ref: int) -> np.ndarray:
    """Map a member's labels onto the reference's by maximum weighted overlap.

    The Hungarian method pairs clusters one-to-one to maximise the overlap
    (weighted object counts); clusters left over (a member with more clusters
    than the reference) go to the reference cluster they overlap most.

    Examples
    --------
    >>> align_to_reference(np.array([1, 1, 0, 2]), np.array([0, 0, 1, 1]), np.ones(4), 2).tolist()
    [0, 0, 1, 1]
    """
    from scipy.optimize import linear_sum_assignment  # SciPy's optimizers: 0.15 s to import

    k = int(labels.max()) + 1
    check_dense(k, k_ref, "overlap of a member's clusters with the reference's (Hungarian alignment)", copies=2)
    # the overlap table, each object's weight added in object order (as np.add.at would, far faster)
    C = np.bincount(np.asarray(labels, dtype=np.int64) * k_ref + reference, weights=weights,
                    minlength=k * k_ref).reshape(k, k_ref)
    rows, cols = linear_sum_assignment(-C)
    mapping = np.argmax(C, axis=1)
    mapping[rows] = cols
    return mapping[labels]


@REGISTRY.register("vote")
class Vote(ConsensusClusterer):
    """Majority voting: align every member to a reference, then take the most voted label.

    The reference is the member with K clusters that has the smallest summed
    Mirkin distance to the others (the medoid); when no member has K clusters,
    the Basic consensus with K clusters is the reference. Each member is
    aligned to it with the Hungarian method (:func:`align_to_reference`); every
    object takes the label with most votes (ties: the reference's label).

    A member that abstains on an object does not vote on it: its alignment
    counts the objects it and the reference both label, an object's
    ``memberships_`` are the shares of the votes of the members that label it,
    and where the reference abstains a tie goes to the first label. The
    medoid is then the member with the smallest summed share of disagreeing
    object pairs among the pairs both members label
    (:func:`~segensemble.consensus.bestofk.medoid_member`).

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
        K ('auto': the number of clusters of the medoid member).
    refine : bool or int, default False

    Attributes
    ----------
    memberships_ : (n_objects, K)
        Vote fractions.

    References
    ----------
    S. Dudoit, J. Fridlyand, "Bagging to improve the accuracy of a clustering
    procedure", Bioinformatics 19(9), 2003; H. W. Kuhn, "The Hungarian method
    for the assignment problem", 1955.

    Examples
    --------
    >>> L = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1], [1, 0, 0]])
    >>> Vote(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    capabilities = Capabilities(soft=True, abstain=True)

    def _fit(self, ensemble):
        R, self.reference_ = resolve_reference(ensemble, "medoid", self.n_clusters)
        ref = ensemble.labels[:, self.reference_] if self.reference_ is not None else np.argmax(R, axis=1)
        k = R.shape[1]
        if ensemble.abstains:
            labels, memberships = abstaining_vote(ensemble, ref, k)
            return FitResult(labels, {"memberships_": memberships})
        votes = np.zeros((ensemble.n_objects, k), dtype=np.min_scalar_type(ensemble.n_members))  # whole counts
        for lab in ensemble.member_labels:
            add_in_columns(votes, align_to_reference(lab, ref, ensemble.weights, k), 1)
        memberships = votes / np.float64(ensemble.n_members)
        best = votes.max(axis=1, keepdims=True)
        keep_ref = votes[np.arange(ensemble.n_objects), ref] == best[:, 0]
        return FitResult(np.where(keep_ref, ref, np.argmax(votes, axis=1)), {"memberships_": memberships})
