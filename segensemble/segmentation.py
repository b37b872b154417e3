"""The :class:`Segmentation` type: one labelling of an image."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from segensemble._first_occurrence import first_occurrence_codes
from segensemble.validation import check_label_map, describe_value
from segensemble.errors import InputError

__all__ = ["ABSTAIN", "Segmentation", "canonical_codes", "check_abstaining_labels", "member_codes", "signature_codes"]


def canonical_codes(labels: np.ndarray, n_labels: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Relabel a 1-D non-negative integer array to 0..k-1 by first occurrence.

    Parameters
    ----------
    labels : (n,) int array
        Non-negative labels.
    n_labels : int, optional
        Declared number of labels (e.g. columns of a membership matrix). Labels
        that never occur are numbered after the occurring ones, in increasing
        order of their old value.

    Returns
    -------
    codes : (n,) int32
        New labels: the first object gets 0, the first object with another label
        gets 1, and so on. The result is the same for any relabelling of the input.
    old_of_new : (k,) int64
        ``old_of_new[c]`` is the original label of new label ``c``.

    Examples
    --------
    >>> codes, old = canonical_codes(np.array([7, 7, 2, 9, 2]))
    >>> codes.tolist(), old.tolist()
    ([0, 0, 1, 2, 1], [7, 2, 9])
    """
    labels = np.asarray(labels)
    n = len(labels)
    if n and labels.dtype.kind in "iu" and labels.min() >= 0 and labels.max() < 4 * n + 1024:
        # labels of a bounded range: each one's first position by one pass over a table, no sort of n values
        top = int(labels.max()) + 1
        first = np.full(top, n, dtype=np.int64)
        np.minimum.at(first, labels, np.arange(n))
        uniq = np.flatnonzero(first < n)  # the labels that occur, ascending (as np.unique)
        order = np.argsort(first[uniq], kind="stable")
        rank = np.zeros(top, dtype=np.int64)
        rank[uniq[order]] = np.arange(len(uniq))
        codes = rank[labels].astype(np.int32)
        old_of_new = uniq[order].astype(np.int64)
    elif n and labels.dtype.kind in "iu" and labels.min() >= 0 and int(labels.max()) < 2**63:
        # a wide range (several members' signatures): a hash table of the distinct labels, no sort of n values
        codes, old_of_new = first_occurrence_codes(np.ascontiguousarray(labels, dtype=np.int64))
        uniq = old_of_new
    else:
        uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(uniq), dtype=np.int64)
        rank[order] = np.arange(len(uniq))
        codes = rank[inverse.ravel()].astype(np.int32)
        old_of_new = uniq[order].astype(np.int64)
    if n_labels is not None and n_labels > len(uniq):
        unused = np.setdiff1d(np.arange(n_labels), uniq)
        old_of_new = np.concatenate([old_of_new, unused])
    return codes, old_of_new


#: The label of a pixel (or object) a member leaves unlabelled (:mod:`segensemble.abstentions`).
ABSTAIN = -1


def check_abstaining_labels(labels, name: str = "labels", *, nan: bool = False) -> np.ndarray:
    """:func:`~segensemble.validation.check_label_map` of a 2-D array where ``-1`` means unlabelled (kept as ``-1``).

    With ``nan``, NaN in a float array means unlabelled too.

    Examples
    --------
    >>> check_abstaining_labels(np.array([[3, -1]])).tolist()
    [[3, -1]]
    >>> check_abstaining_labels(np.array([[3.0, np.nan]]), nan=True).tolist()
    [[3, -1]]
    """
    arr = np.asarray(labels)
    missing = None
    if arr.ndim == 2 and arr.size and arr.dtype.kind in ("iuf" if nan else "iu"):
        if arr.dtype.kind != "u" and (arr < ABSTAIN).any():  # NaN compares False
            raise InputError(f"{name}: expected non-negative labels, or -1 where a member gives none, got "
                             f"minimum {np.nanmin(arr):g}")
        missing = arr == ABSTAIN
        if arr.dtype.kind == "f":
            missing |= np.isnan(arr)
    if missing is None or not missing.any():
        return check_label_map(arr, name)
    out = check_label_map(np.where(missing, 0, arr), name)
    out[missing] = ABSTAIN
    return out


def member_codes(column: np.ndarray, n_labels: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`canonical_codes` of one member, abstentions kept as ``-1``.

    Examples
    --------
    >>> codes, old = member_codes(np.array([7, -1, 2, 7]))
    >>> codes.tolist(), old.tolist()
    ([0, -1, 1, 0], [7, 2])
    """
    speaks = column != ABSTAIN
    if speaks.all():
        return canonical_codes(column, n_labels)
    codes = np.full(len(column), ABSTAIN, dtype=np.int32)
    if not speaks.any():
        return codes, np.zeros(0, dtype=np.int64)
    codes[speaks], old = canonical_codes(column[speaks], n_labels)
    return codes, old


@dataclass
class Segmentation:
    """A labelling of an image, optionally with soft memberships.

    Parameters
    ----------
    labels : (H, W) array of non-negative integers
        Region label of every pixel; ``-1`` where the member leaves the pixel
        unlabelled (no memberships then; :mod:`segensemble.abstentions`). Stored as int32 numbered 0..k-1 in order of
        first occurrence (raster order) unless ``memberships`` is given, in which
        case the labels must already lie in ``0..k-1`` with ``k =
        memberships.shape[2]`` and are kept as they are.
    memberships : (H, W, k) array, optional
        Soft memberships; every pixel's row is non-negative and sums to 1.
        Stored as float32.
    name : str
        Name of the method that produced it (e.g. ``"slic"``).
    params : dict
        Parameters used to produce it.

    Examples
    --------
    >>> seg = Segmentation(np.array([[5, 5], [9, 9]]), name="toy")
    >>> seg.labels.tolist(), seg.n_segments
    ([[0, 0], [1, 1]], 2)
    """

    labels: np.ndarray
    memberships: np.ndarray | None = None
    name: str = ""
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.memberships is None:
            lab = check_abstaining_labels(self.labels, "labels")
            self.labels = member_codes(lab.ravel())[0].reshape(lab.shape)
            return
        lab = check_label_map(self.labels, "labels")
        mem = np.asarray(self.memberships)
        if mem.ndim != 3 or mem.shape[:2] != lab.shape:
            raise InputError(
                f"memberships: expected shape {lab.shape + ('k',)}, got {describe_value(self.memberships)}"
            )
        if not np.issubdtype(mem.dtype, np.number) or not np.all(np.isfinite(mem)):
            raise InputError("memberships: expected finite numeric values")
        if mem.min() < 0 or not np.allclose(mem.sum(axis=2), 1.0, atol=1e-4):
            raise InputError("memberships: every pixel's memberships must be non-negative and sum to 1")
        if lab.max() >= mem.shape[2]:
            raise InputError(
                f"labels: expected labels below the {mem.shape[2]} membership columns, got maximum {lab.max()}"
            )
        self.labels = lab.astype(np.int32)
        self.memberships = mem.astype(np.float32)

    @property
    def shape(self) -> tuple[int, int]:
        """Image shape (H, W)."""
        return self.labels.shape

    @property
    def n_segments(self) -> int:
        """Number of labels k (membership columns when memberships are given)."""
        if self.memberships is not None:
            return int(self.memberships.shape[2])
        return int(self.labels.max()) + 1


def signature_codes(columns: list[np.ndarray]) -> np.ndarray:
    """Combine several label columns into one key per row (same key <=> same labels).

    Keys are packed into int64 while they fit and renumbered by first occurrence
    otherwise (0..distinct-1), so any number of members works without overflow.

    Examples
    --------
    >>> signature_codes([np.array([0, 0, 1]), np.array([2, 2, 0])]).tolist()
    [2, 2, 3]
    """
    key = columns[0].astype(np.int64)
    span = int(key.max()) + 1
    for col in columns[1:]:
        k = int(col.max()) + 1
        if span * k >= 2**62:  # only which rows are equal matters: any numbering of the distinct keys will do
            key = first_occurrence_codes(key)[0].astype(np.int64)
            span = int(key.max()) + 1
        key *= k  # in place: key is this function's own array (a copy, or fresh codes)
        np.add(key, col, out=key, casting="unsafe")  # labels of any integer dtype (values below 2^62 here)
        span *= k
    return key
