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
from segensemble.segmentation import ABSTAIN, check_abstaining_labels, member_codes

__all__ = ["ABSTAIN", "check_member_labels", "check_someone_labels", "member_codes", "coassociation_with_abstentions",
           "separation_matrix", "separation_share", "speaking_members"]


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
    out = check_abstaining_labels(labels, name, nan=True)
    nobody = np.flatnonzero((out == ABSTAIN).all(axis=1))
    if len(nobody):
        raise InputError(f"{name}: object {nobody[0]} has no label in any member (every member abstains there); "
                         "label it in some member or leave it out")
    return out


def check_someone_labels(columns, shape) -> None:
    """Refuse pixels that every member leaves unlabelled (``columns``: the members' raveled label maps).

    Examples
    --------
    >>> check_someone_labels([np.array([0, -1, 1, -1]), np.array([0, 1, -1, -1])], (2, 2))
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: segmentations: pixel (1, 1) is unlabelled in every member; some member must ...
    """
    nobody = np.logical_and.reduce([np.asarray(c) == ABSTAIN for c in columns])
    if nobody.any():
        r, c = divmod(int(np.argmax(nobody)), shape[1])
        more = f" (and {int(nobody.sum()) - 1:,} more)" if nobody.sum() > 1 else ""
        raise InputError(f"segmentations: pixel ({r}, {c}) is unlabelled in every member{more}; some member must "
                         "label every pixel")


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
    together, both = _pair_weights(incidence, labels, n_clusters, member_weights)
    return np.divide(together, both, out=np.zeros_like(both), where=both > 0)


def _pair_weights(incidence, labels, n_clusters, member_weights, *, both: bool = True):
    """Dense weight of the members that put u and v together (and, with ``both``, of those that label both)."""
    a = np.asarray(member_weights, dtype=np.float64)
    Hd = incidence.toarray() * np.sqrt(np.repeat(a, n_clusters))[None, :]
    if not both:
        return Hd @ Hd.T
    Sd = (labels != ABSTAIN) * np.sqrt(a)[None, :]
    return Hd @ Hd.T, Sd @ Sd.T


def separation_matrix(incidence, labels: np.ndarray, n_clusters, member_weights) -> np.ndarray:
    """Dense :func:`separation_share` of every pair of objects: ``1 - X`` over the members that label both.

    0.5 for a pair no member labels on both sides, as in :func:`separation_share`; ``member_weights``
    normalised to sum 1.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> L = np.array([[0, 0], [1, -1], [-1, 0]])
    >>> H = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 0], [0, 0, 1]], dtype=float))
    >>> separation_matrix(H, L, (2, 1), np.array([0.5, 0.5])).tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 0.5], [0.0, 0.5, 0.0]]
    """
    if labels.min(initial=0) >= 0:
        together = _pair_weights(incidence, labels, n_clusters, member_weights, both=False)
        return np.subtract(1.0, together, out=together)
    together, both = _pair_weights(incidence, labels, n_clusters, member_weights)
    separated = np.subtract(both, together, out=together)
    np.divide(separated, both, out=separated, where=both > 0)
    separated[both <= 0] = 0.5
    return separated


def separation_share(first: np.ndarray, second: np.ndarray, member_weights) -> np.ndarray:
    """Weighted share of members that separate each pair of objects, over the members that label both.

    ``first`` and ``second`` are the label rows (pairs, m) of the two objects
    of every pair; without abstentions this is ``(first != second) @ w``. A
    pair no member labels on both sides gets 0.5 (no evidence either way).

    Examples
    --------
    >>> separation_share(np.array([[0, 0], [0, -1]]), np.array([[0, 1], [1, 1]]), np.array([0.5, 0.5])).tolist()
    [0.5, 1.0]
    """
    w = np.asarray(member_weights, dtype=np.float64)
    differ = first != second
    if first.min(initial=0) >= 0 and second.min(initial=0) >= 0:
        return differ @ w
    both = (first != ABSTAIN) & (second != ABSTAIN)
    said = both @ w
    return np.divide((differ & both) @ w, said, out=np.full(len(said), 0.5), where=said > 0)


def speaking_members(n_clusters) -> int:
    """Members that label at least one object (a member that abstains everywhere has no clusters).

    Methods that divide by the number of members use this count, so that such a member changes nothing.

    Examples
    --------
    >>> speaking_members((3, 0, 2))
    2
    """
    return int(np.count_nonzero(n_clusters))
