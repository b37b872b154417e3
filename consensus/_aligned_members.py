"""A member's memberships, their alignment to a reference, Borda points, and the aligned voting methods'
combinations when members abstain.

A member that leaves an object unlabelled (``-1``) does not vote on it: its
memberships are a row of zeros there, so its overlap with the reference (and
with it the alignment) counts only the objects both label, and each
combination runs, object by object, over the members that label the object —
the share of their votes (:class:`~segensemble.consensus.voting.Vote`), the
mean (:class:`~segensemble.consensus.soft.VoteSum`) or the product
(:class:`~segensemble.consensus.soft.VoteProduct`) of their aligned
memberships, the Borda points each gives the objects it labels, ranked among
them (:class:`~segensemble.consensus.soft.Borda`), the running mean of
:class:`~segensemble.consensus.soft.DWH`. A member that abstains everywhere
changes nothing.
"""

from __future__ import annotations

import numpy as np

from segensemble.consensus._hard_labels import add_in_columns, aligned_blocks, matched_columns, row_softmax
from segensemble.consensus._memory import check_dense

__all__ = ["member_memberships", "align_memberships", "borda_points", "speaking_counts", "abstaining_vote",
           "abstaining_vote_sum", "abstaining_vote_product", "abstaining_borda", "abstaining_dwh"]


def member_memberships(ensemble, j: int, *, at_once: int | None = None) -> np.ndarray:
    """Member j's (n_objects, k_j) memberships: its soft ones, or one-hot of its labels, a row of zeros where it
    abstains (``at_once``: how many such arrays the caller holds together, for the memory bound; default one per
    member, as a method keeping all).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> member_memberships(Ensemble.from_labels([[0], [1], [1]]), 0).tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    >>> member_memberships(Ensemble.from_labels([[0, 0], [1, 0], [-1, 0]]), 0).tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    """
    if ensemble.memberships is not None and ensemble.memberships[j] is not None:
        return ensemble.memberships[j]
    held = ensemble.n_members if at_once is None else at_once
    check_dense(ensemble.n_objects, ensemble.n_clusters[j] * held, f"memberships of member {j} "
                f"({ensemble.n_clusters[j]:,} clusters, {held} such matrices at once)")
    A = np.zeros((ensemble.n_objects, ensemble.n_clusters[j]))
    labels = ensemble.member_labels[j]
    if ensemble.abstains:
        said = np.flatnonzero(labels >= 0)
        A[said, labels[said]] = 1.0
    else:
        add_in_columns(A, labels, 1.0)
    return A


def align_memberships(A, reference, weights) -> np.ndarray:
    """Put a member's clusters in correspondence with a reference's columns.

    Parameters
    ----------
    A : (n, k) array
        The member's memberships.
    reference : (n, K) array
        The reference memberships (one-hot for a hard reference).
    weights : (n,) array
        Object weights.

    Returns
    -------
    (n, K) array
        Column c holds the member's cluster matched to reference cluster c by the Hungarian method on the
        overlap ``A^T W reference`` (zero if none), plus any unmatched clusters whose largest overlap is with c.

    Examples
    --------
    >>> A = np.eye(3)[[2, 2, 0, 1]]          # three clusters, labelled differently
    >>> R = np.eye(2)[[0, 0, 1, 1]]          # reference with two
    >>> align_memberships(A, R, np.ones(4)).tolist()
    [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    """
    out = np.empty((A.shape[0], reference.shape[1]))
    for s, block in aligned_blocks(A, reference, weights):
        out[s:s + len(block)] = block
    return out


def borda_points(A, weights) -> np.ndarray:
    """Borda points of every object in every column (cluster) of one member.

    In each column the objects are ranked by membership, descending; with
    ``N = sum(weights)`` positions the top one earns N points, the next N - 1,
    and so on. An object of weight w occupies w consecutive positions and tied
    objects share their positions, each earning the average of the points of
    the tied positions: ``N - G - (T - 1) / 2`` with G the weight of the
    objects ranked strictly above and T the weight of the tied group.

    Examples
    --------
    >>> borda_points(np.array([[0.9], [0.5], [0.5], [0.1]]), np.ones(4)).ravel().tolist()
    [4.0, 2.5, 2.5, 1.0]
    """
    n, k = A.shape
    total = float(weights.sum())
    out = np.empty((n, k))
    for c in range(k):
        a = A[:, c]
        ones = a == 1.0
        if np.all(ones | (a == 0.0)):  # a hard member's column: np.unique's ranks below, without its sort
            both = bool(ones.any()) and not bool(ones.all())
            inverse = (~ones).astype(np.intp) if both else np.zeros(n, dtype=np.intp)  # the ones rank first
            n_values = 2 if both else int(n > 0)
        else:
            values, inverse = np.unique(-a, return_inverse=True)  # ascending -a = descending a
            inverse, n_values = inverse.ravel(), len(values)
        group = np.bincount(inverse, weights=weights, minlength=n_values)
        above = np.concatenate([[0.0], np.cumsum(group)[:-1]])
        out[:, c] = (total - above - (group - 1) / 2)[inverse]
    return out


def speaking_counts(ensemble) -> np.ndarray:
    """(n_objects,) number of members that label each object (a soft member labels every object).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> speaking_counts(Ensemble.from_labels([[0, 0], [1, -1], [-1, 0]])).tolist()
    [2.0, 1.0, 1.0]
    """
    said = np.zeros(ensemble.n_objects)
    for labels in ensemble.member_labels:
        said += labels >= 0
    return said


def _aligned(ensemble, reference, at_once):
    """(objects it labels, its aligned memberships on them) for every member that labels something."""
    for j, labels in enumerate(ensemble.member_labels):
        said = np.flatnonzero(labels >= 0)
        if len(said):
            A = align_memberships(member_memberships(ensemble, j, at_once=at_once), reference, ensemble.weights)
            yield said, A[said]


def abstaining_vote(ensemble, reference_labels, k: int):
    """Vote's labels and memberships when members abstain: each member's clusters go to the reference's by the
    Hungarian method on their overlap over the objects both label (:func:`matched_columns`); an object takes the
    label most of the members that label it give (ties: the reference's, where it speaks), its memberships the
    share of those members' votes."""
    w, n = ensemble.weights, ensemble.n_objects
    ref = np.asarray(reference_labels, dtype=np.int64)
    votes = np.zeros((n, k))
    for labels, kj in zip(ensemble.member_labels, ensemble.n_clusters):
        said = np.flatnonzero(labels >= 0)
        if not len(said):
            continue
        labels = labels.astype(np.int64)  # cluster * k + reference label below
        check_dense(kj, k, "overlap of a member's clusters with the reference's (Hungarian alignment)", copies=2)
        both = said[ref[said] >= 0]
        overlap = np.bincount(labels[both] * k + ref[both], weights=w[both], minlength=kj * k).reshape(kj, k)
        votes[said, matched_columns(overlap)[labels[said]]] += 1.0
    best = votes.max(axis=1)
    speaks = ref >= 0
    keep_ref = speaks & (votes[np.arange(n), np.where(speaks, ref, 0)] == best)
    return np.where(keep_ref, ref, np.argmax(votes, axis=1)), votes / speaking_counts(ensemble)[:, None]


def abstaining_vote_sum(ensemble, reference, at_once) -> np.ndarray:
    """VoteSum's memberships when members abstain: the mean of the aligned memberships of the members that label
    each object."""
    total = np.zeros((ensemble.n_objects, reference.shape[1]))
    for said, A in _aligned(ensemble, reference, at_once):
        total[said] += A
    return total / speaking_counts(ensemble)[:, None]


def abstaining_vote_product(ensemble, reference, at_once, eps: float) -> np.ndarray:
    """VoteProduct's memberships when members abstain: the normalised product, over the members that label each
    object, of their aligned memberships floored at ``eps``."""
    score = np.zeros((ensemble.n_objects, reference.shape[1]))
    for said, A in _aligned(ensemble, reference, at_once):
        score[said] += np.log(np.maximum(A, eps))
    return row_softmax(score)


def abstaining_borda(ensemble, reference, at_once, temperature: float):
    """Borda's scores and memberships when members abstain: each member ranks only the objects it labels (its
    points over their weight N_j); an object's memberships are ``softmax(score / sum of N_j over the members that
    label it / temperature)``."""
    w = ensemble.weights
    score, scale = np.zeros((ensemble.n_objects, reference.shape[1])), np.zeros(ensemble.n_objects)
    for said, A in _aligned(ensemble, reference, at_once):
        score[said] += borda_points(A, w[said])
        scale[said] += w[said].sum()
    return score, row_softmax(score / scale[:, None], temperature)


def abstaining_dwh(ensemble, reference, reference_index, at_once) -> np.ndarray:
    """DWH's running consensus when members abstain: each member in turn is aligned to the consensus so far (over
    the objects both label: the consensus is a row of zeros where nobody has spoken yet) and enters each object's
    running mean over the members that label it, ``C += (A - C) / t`` with t those members so far (the reference
    first; the Basic consensus, when it is the reference, labels every object)."""
    C = np.array(reference, dtype=np.float64)
    count = (C.sum(axis=1) > 0).astype(np.float64)
    for j, labels in enumerate(ensemble.member_labels):
        said = np.flatnonzero(labels >= 0)
        if j == reference_index or not len(said):
            continue
        A = align_memberships(member_memberships(ensemble, j, at_once=at_once), C, ensemble.weights)[said]
        count[said] += 1.0
        C[said] += (A - C[said]) / count[said][:, None]
    return C
