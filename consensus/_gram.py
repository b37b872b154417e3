"""The Gram matrices of the members' clusters, ``H^T W H`` and ``A^T A`` for a scaled incidence A, in exact sums.

Each block of two members is counted from their labels with one ``bincount`` over the objects, added in object
order: the same bits as the sparse-sparse product, a few times faster at 10^6 objects.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from segensemble.consensus._incidence import _transposed
from segensemble.consensus._memory import check_dense

__all__ = ["_gram", "_gram_of_rows", "_block_pair_sums"]


def _whole_weights(w) -> bool:
    """Non-negative integer object weights summing below 2^53: every weighted count is then exact."""
    return bool(np.all(w >= 0) and np.all(w == np.floor(w)) and w.sum() < 2.0**53)


def _block_pair_sums(codes, starts, sizes, d, pair_weights) -> np.ndarray:
    """The (d, d) symmetric array whose block (a, b), at rows ``starts[a]`` and columns ``starts[b]``, sums
    ``pair_weights(a, b)`` (one weight per object) over the objects that have a code in both blocks (codes < 0:
    none), at (``codes[a]``, ``codes[b]``): one ``bincount`` per pair of blocks, the objects added in their order."""
    G = np.zeros((d, d))
    # a block's uncoded objects (codes < 0) counted in one bin past its last code, then dropped: each kept bin
    # still adds exactly the objects coded in both blocks, in object order (no mask per pair of blocks)
    extra = [int(c.min(initial=0) < 0) for c in codes]
    codes = [np.where(c >= 0, c, k) if x else c for c, k, x in zip(codes, sizes, extra)]
    codes = [c.astype(np.int64, copy=False) for c in codes]  # once, not once per pair
    for a in range(len(codes)):
        for b in range(a, len(codes)):
            ka, kb = int(sizes[a]), int(sizes[b])
            wide = kb + extra[b]
            block = np.bincount(codes[a] * wide + codes[b], weights=pair_weights(a, b),
                                minlength=(ka + extra[a]) * wide).reshape(ka + extra[a], wide)[:ka, :kb]
            G[starts[a]:starts[a] + ka, starts[b]:starts[b] + kb] = block
            G[starts[b]:starts[b] + kb, starts[a]:starts[a] + ka] = block.T
    return G


def _gram(ensemble) -> np.ndarray:
    """G = H^T W H (sum k_j x sum k_j): weighted co-occurrence of all clusters.

    With integer weights (label arrays, pixel counts) every entry and every partial sum is an integer below 2^53,
    so any order of summation gives the same bits: each block of two members is then counted from their labels
    with one ``bincount`` over the objects both label (1.22 s for the sparse-sparse product, 0.27 s so, at 10^6
    objects). Other weights take the sparse product.
    """
    H, w = ensemble.incidence, ensemble.weights
    check_dense(H.shape[1], H.shape[1], "the Gram matrix of the member clusters (H^T W H)", copies=3)
    if not _whole_weights(w):
        return (H.T @ H.multiply(w[:, None]).tocsr()).toarray()
    off = ensemble.offsets
    return _block_pair_sums(list(ensemble.member_labels), off[:-1], np.diff(off), H.shape[1],
                            lambda a, b: w)


def _gram_of_rows(A, blocks=None) -> np.ndarray:
    """``A^T A`` as a dense array, for a sparse A with small d.

    When every row holds one entry in each of r column blocks that follow each other (a row of scaled one-hot
    member labels, no member abstaining), entry (p, q) sums ``A[u, p] A[u, q]`` over the rows u that have both,
    in row order: one ``bincount`` per pair of blocks, the same products added in the same order as the
    sparse-sparse product — the same bits where SciPy does not fuse multiply-adds (the x86-64 wheels) —
    two to three times faster at 10^6 rows. ``blocks`` (an Ensemble's ``offsets``) names the blocks when rows
    may have no entry in some (members that abstain): the same sums over the rows that have both. Other
    matrices take the sparse product.
    """
    A = sp.csr_matrix(A)
    n, d = A.shape
    if blocks is not None and n and A.has_sorted_indices:
        return _gram_of_blocks(A, np.asarray(blocks, dtype=np.int64))
    per_row = np.diff(A.indptr)
    r = int(per_row[0]) if n else 0
    if n == 0 or r == 0 or not np.all(per_row == r) or not A.has_sorted_indices:
        return (A.T @ A).toarray()
    cols, vals = A.indices.reshape(n, r), A.data.reshape(n, r)
    lo, hi = cols.min(axis=0), cols.max(axis=0) + 1
    if np.any(lo[1:] < hi[:-1]):  # the positions' columns overlap: not one block per position
        return (A.T @ A).toarray()
    vals = _transposed(vals)  # each position's values contiguous: 55 products at m = 10
    return _block_pair_sums([cols[:, a] - lo[a] for a in range(r)], lo, hi - lo, d,
                            lambda a, b: vals[a] * vals[b])


def _gram_of_blocks(A, off) -> np.ndarray:
    """:func:`_gram_of_rows` of rows with at most one entry in each block ``off[a]:off[a + 1]``."""
    n, d = A.shape
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    block = np.searchsorted(off, A.indices, side="right") - 1
    if np.any((block[1:] == block[:-1]) & (rows[1:] == rows[:-1])):  # two entries of a row in one block
        return (A.T @ A).toarray()
    codes = np.full((len(off) - 1, n), -1, dtype=np.int64)
    codes[block, rows] = A.indices - off[block]
    vals = np.zeros((len(off) - 1, n))
    vals[block, rows] = A.data
    return _block_pair_sums(list(codes), off[:-1], np.diff(off), d, lambda a, b: vals[a] * vals[b])
