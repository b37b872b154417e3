"""Aligning members to a reference, and the label path of the aligned voting methods for hard members.

A member's clusters go to a reference's columns by the Hungarian method on
their weighted overlap (:func:`matched_columns`, shared by every aligned
method). When every member is hard and the object weights are whole, an
aligned member is one-hot in column ``target[label]``: its votes, vote-product
terms and Borda points follow from the labels alone, with sums that are exact
(integers and halves below 2^53) — the same numbers as the one-hot memberships
of :mod:`segensemble.consensus.soft` give, without forming them. The (n, K)
passes work on blocks of :data:`ROW_BLOCK` rows, the same operations row by
row: whole columns of 10^6 rows missed the cache.
"""

from __future__ import annotations

import numpy as np

from segensemble.consensus._linkage import member_contingency

__all__ = ["add_aligned_members", "add_in_columns", "add_overlap", "aligned_blocks", "average_in_one_hot",
           "hard_aligned_targets", "hard_and_whole", "hard_borda_score", "hard_column_counts",
           "hard_member", "hard_overlap", "matched_columns", "row_softmax", "ROW_BLOCK"]

#: Rows the (n, K) helpers of the aligned voting methods process at a time: the same operations on every row,
#: on blocks that stay in cache (whole columns of 10^6 rows missed it: 20-37x the time of 10^5 rows, not 10x).
ROW_BLOCK = 4096


def matched_columns(overlap) -> np.ndarray:
    """The reference column each of a member's clusters goes to, from their (k, K) weighted overlap: the
    Hungarian matching, and the largest overlap for the clusters it leaves over."""
    from scipy.optimize import linear_sum_assignment  # SciPy's optimizers: 0.15 s to import

    # Equal matchings must tie exactly: weights and their duplicates sum the overlaps in different orders, and
    # rounding noise would otherwise pick between them (quantised to 2^-30 of the total overlap).
    total = float(overlap.sum())
    if total > 0:
        overlap = np.round(overlap * (2.0**30 / total))
    rows, cols = linear_sum_assignment(-overlap)
    target = np.argmax(overlap, axis=1)
    target[rows] = cols
    return target


def hard_member(ensemble, j):
    """``(labels, number of clusters)`` of member ``j`` when it is hard (no memberships given), else None (also
    for ``j=None``)."""
    if j is None or (ensemble.memberships is not None and ensemble.memberships[j] is not None):
        return None
    return ensemble.member_labels[j], int(ensemble.n_clusters[j])


def add_overlap(out, labels, weights, rows) -> None:
    """``out += A^T rows`` for the one-hot ``A`` of ``labels`` holding the ``weights``: a hard member's weighted
    overlap with some rows of a reference (the products ``w_i R_ic`` of ``A^T W R``)."""
    A = np.zeros((len(rows), out.shape[0]))
    add_in_columns(A, labels, weights)
    out += A.T @ rows


def hard_overlap(labels, k: int, reference, weights) -> np.ndarray:
    """The (k, K) overlap ``A^T W reference`` of a hard member from its labels, :data:`ROW_BLOCK` rows at a time:
    the whole product's sums grouped by blocks, equal up to rounding, far below the 2^-30 of the total that
    :func:`matched_columns` quantises to."""
    out = np.zeros((k, reference.shape[1]))
    for s in range(0, len(reference), ROW_BLOCK):
        add_overlap(out, labels[s:s + ROW_BLOCK], weights[s:s + ROW_BLOCK], reference[s:s + ROW_BLOCK])
    return out


def aligned_blocks(A, reference, weights):
    """A member's memberships ``A`` aligned to the reference's columns (:func:`matched_columns` on the overlap
    ``A^T W reference``, taken whole before the first block), as ``(first row, (rows, K) block)`` pairs of
    :data:`ROW_BLOCK` rows: each column the sum of the member's clusters that go to it, added in cluster order."""
    unit = bool(np.all(weights == 1.0))  # then reference * weights is the reference, bit for bit: no (n, K) product
    target = matched_columns(A.T @ (reference if unit else reference * weights[:, None]))
    for s in range(0, A.shape[0], ROW_BLOCK):
        a = A[s:s + ROW_BLOCK]
        block = np.zeros((len(a), reference.shape[1]))
        for c in range(A.shape[1]):
            block[:, target[c]] += a[:, c]
        yield s, block


def hard_and_whole(ensemble) -> bool:
    """Hard members and integer object weights whose sums, times the members, stay below 2^53: then every
    overlap and Borda score is an integer or half-integer computed exactly, whatever the order of the sums."""
    w = ensemble.weights
    hard = ensemble.memberships is None or all(M is None for M in ensemble.memberships)
    return (hard and bool(np.all(w == np.round(w)))
            and 2.0 * float(w.sum()) * max(ensemble.n_members, 1) < 2.0**53)


def hard_aligned_targets(ensemble, reference) -> list:
    """For every member, the reference column each of its clusters is aligned to, when every member and the
    reference are hard (:func:`hard_and_whole`): the aligned membership is one-hot in ``target[label]``. The
    overlaps are counted from the labels (integers: the same numbers as ``A^T W R``)."""
    overlaps, off = member_contingency(ensemble, np.argmax(reference, axis=1), reference.shape[1]), ensemble.offsets
    return [matched_columns(overlaps[off[j]:off[j + 1]]) for j in range(ensemble.n_members)]


def add_aligned_members(table, ensemble, targets, points=None) -> None:
    """``table[i, c] += points[j][c]`` (1 without ``points``) at ``c = targets[j][label]`` for every member j in
    turn and every row i, :data:`ROW_BLOCK` rows at a time: a block stays in cache through all the members
    (a pass per member over 10^6 rows did not), every element gaining the same terms in the same order."""
    for s in range(0, len(table), ROW_BLOCK):
        block = table[s:s + ROW_BLOCK]
        for target, labels, extra in zip(targets, ensemble.member_labels, points or [None] * len(targets)):
            column = target[labels[s:s + ROW_BLOCK]]
            add_in_columns(block, column, 1 if extra is None else extra[column])


def add_in_columns(table, columns, values) -> None:
    """``table[i, columns[i]] += values[i]`` (or a scalar) for every row i, in place, by one index array into the
    flat view of the C-ordered ``table`` (each position once, so the same as the two-array fancy index).

    Examples
    --------
    >>> t = np.zeros((2, 3)); add_in_columns(t, np.array([2, 0]), np.array([1.0, 5.0])); t.tolist()
    [[0.0, 0.0, 1.0], [5.0, 0.0, 0.0]]
    """
    n, k = table.shape
    starts, scalar = np.arange(0, min(n, ROW_BLOCK) * k, k), np.ndim(values) == 0
    for s in range(0, n, ROW_BLOCK):  # in row blocks that stay in cache: each position once, the same additions
        block = table[s:s + ROW_BLOCK].reshape(-1)
        block[starts[:len(block) // k] + columns[s:s + ROW_BLOCK]] += values if scalar else values[s:s + ROW_BLOCK]


def average_in_one_hot(C, columns, t: int, *, following=None, weights=None):
    """``C = (t - 1) / t * C + A / t`` in place, for ``A`` one-hot in ``columns`` (an aligned hard member; the
    running average of DWH), in row blocks: only each row's column gains ``1 / t``, the same bits as adding the
    whole of ``A / t`` (its zeros add nothing). ``following``: ``(labels, k)`` of the next hard member, whose
    overlap with the updated ``C`` (:func:`hard_overlap`, object ``weights``) is taken in the same pass and
    returned (else None).

    Examples
    --------
    >>> C = np.array([[1.0, 0.0], [0.0, 1.0]]); average_in_one_hot(C, np.array([1, 1]), 2); C.tolist()
    [[0.5, 0.5], [0.0, 1.0]]
    """
    out = None if following is None else np.zeros((following[1], C.shape[1]))
    for s in range(0, len(C), ROW_BLOCK):
        rows = C[s:s + ROW_BLOCK]
        np.multiply(rows, (t - 1) / t, out=rows)
        add_in_columns(rows, columns[s:s + ROW_BLOCK], 1.0 / t)
        if out is not None:
            add_overlap(out, following[0][s:s + ROW_BLOCK], weights[s:s + ROW_BLOCK], rows)
    return out


def hard_column_counts(ensemble, reference) -> np.ndarray:
    """(n, K) number of members whose aligned label of each object is each column: the sum of the aligned
    one-hot memberships, as counted, in the smallest unsigned integer type holding the number of members."""
    counts = np.zeros((ensemble.n_objects, reference.shape[1]), dtype=np.min_scalar_type(ensemble.n_members))
    add_aligned_members(counts, ensemble, hard_aligned_targets(ensemble, reference))
    return counts


def hard_borda_score(ensemble, reference) -> np.ndarray:
    """Borda's summed points when every member is hard and the weights whole (:func:`hard_and_whole`), from the
    labels: the same numbers as aligning one-hot memberships and ranking their columns, exactly.

    A hard member aligned to the reference is one-hot in column ``target[label]``; ranking a 0/1 column puts
    its ones (weight W1) first, so an object earns ``N - (W1 - 1) / 2`` in its own column and
    ``N - W1 - (W0 - 1) / 2`` in each other (all of them ``N - (N - 1) / 2`` in a column of one value)."""
    w, n, K = ensemble.weights, ensemble.n_objects, reference.shape[1]
    total = float(w.sum())
    score, others, extras = np.zeros((n, K)), np.zeros(K), []
    targets = hard_aligned_targets(ensemble, reference)
    for target, labels in zip(targets, ensemble.member_labels):
        ones = np.bincount(target, weights=np.bincount(labels, weights=w, minlength=len(target)), minlength=K)
        both = (ones > 0) & (ones < total)
        own = np.where(both, total - (ones - 1) / 2, total - (total - 1) / 2)
        other = np.where(both, total - ones - (total - ones - 1) / 2, own)
        others += other
        extras.append(own - other)
    # every term is a multiple of 1/2 below 2^52 (hard_and_whole), so the sums are exact in any order: each
    # member's extra in its own column, the points every object earns in every column added once
    add_aligned_members(score, ensemble, targets, extras)
    score += others[None, :]
    return score


def row_softmax(score, *divisors, table=None) -> np.ndarray:
    """``softmax(score / divisors[0] / divisors[1] ...)`` of every row, :data:`ROW_BLOCK` rows at a time.
    ``table``: the scores are ``table[score]`` (``score`` small integers), looked up block by block.

    Examples
    --------
    >>> row_softmax(np.array([[0.0, 0.0], [2.0, 0.0]]), 2.0).round(3).tolist()
    [[0.5, 0.5], [0.731, 0.269]]
    """
    out = np.empty(score.shape)
    for s in range(0, len(score), ROW_BLOCK):
        S = score[s:s + ROW_BLOCK] if table is None else table[score[s:s + ROW_BLOCK]]
        for d in divisors:
            S = S / d
        E = np.exp(S - S.max(axis=1, keepdims=True))
        out[s:s + ROW_BLOCK] = E / E.sum(axis=1, keepdims=True)
    return out
