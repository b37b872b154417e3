"""Members that abstain: objects a member leaves unlabelled (``-1``, or NaN in a float array).

A member may speak about part of the objects only (a segmentation of one
region of an image, a classifier that rejects uncertain objects). Its label
array marks the others with ``-1`` (or NaN); :class:`~segensemble.Ensemble`
keeps them as ``-1`` through the atom reduction (abstaining is one more value
of the member, so atoms stay exact), leaves them out of the incidence matrix
H, and counts a pair of objects in the co-association only over the members
that label both. What each consensus method makes of it is stated in its
class (``Capabilities.abstain``); a method that cannot use such members
refuses them.
"""

from __future__ import annotations

import numpy as np

from segensemble.errors import InputError
from segensemble.segmentation import canonical_codes
from segensemble.validation import check_label_map

__all__ = ["ABSTAIN", "check_member_labels", "member_codes", "coassociation_with_abstentions"]

#: The label of an object a member does not label.
ABSTAIN = -1


def check_member_labels(labels, name: str = "labels") -> np.ndarray:
    """An (n_objects, n_members) label array as int64, with abstentions (``-1`` or NaN) as ``-1``.

    Every other value must be a non-negative whole number (as
    :func:`~segensemble.validation.check_label_map`), and every object needs a
    label from at least one member.

    Examples
    --------
    >>> check_member_labels(np.array([[0.0, np.nan], [1.0, 2.0]])).tolist()
    [[0, -1], [1, 2]]
    >>> check_member_labels(np.array([[0, -1], [-1, -1]]))
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: labels: object 1 has no label in any member (every member abstains there); ...
    """
    arr = np.asarray(labels)
    if arr.ndim == 2 and arr.size and (np.issubdtype(arr.dtype, np.number) and arr.dtype.kind in "iuf"):
        missing = np.isnan(arr) if arr.dtype.kind == "f" else np.zeros(arr.shape, dtype=bool)
        missing |= arr == ABSTAIN
        if missing.any():
            out = check_label_map(np.where(missing, 0, arr), name, ndim=2)
            out[missing] = ABSTAIN
            nobody = np.flatnonzero(missing.all(axis=1))
            if len(nobody):
                raise InputError(f"{name}: object {nobody[0]} has no label in any member (every member abstains "
                                 f"there); label it in some member or leave it out")
            return out
    return check_label_map(arr, name, ndim=2)


def member_codes(column: np.ndarray, n_labels: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~segensemble.segmentation.canonical_codes` of one member, abstentions kept as ``-1``.

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


def coassociation_with_abstentions(incidence, labels: np.ndarray, n_clusters, member_weights) -> np.ndarray:
    """Dense co-association over the members that label both objects of each pair.

    ``X_uv = sum_j a_j [u, v together in j] / sum_j a_j [j labels u and v]``
    (0 when no member labels both); ``a_j`` the member weights.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> L = np.array([[0, 0], [0, -1], [1, 0]])
    >>> H = sp.csr_matrix(np.array([[1, 0, 1], [1, 0, 0], [0, 1, 1]], dtype=float))
    >>> coassociation_with_abstentions(H, L, (2, 1), np.ones(2)).tolist()
    [[1.0, 1.0, 0.5], [1.0, 1.0, 0.0], [0.5, 0.0, 1.0]]
    """
    a = np.asarray(member_weights, dtype=np.float64)
    Hd = incidence.toarray() * np.sqrt(np.repeat(a, n_clusters))[None, :]
    Sd = (labels != ABSTAIN) * np.sqrt(a)[None, :]
    both = Sd @ Sd.T
    return np.divide(Hd @ Hd.T, both, out=np.zeros_like(both), where=both > 0)
