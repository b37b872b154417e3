"""F1 measures of projective clusterings (Gullo, Domeniconi & Tagarelli, Sec. 5.1.3).

A projective clustering is a pair (Gamma, Delta): Gamma (n_objects, K) object
memberships, Delta (K, n_features) feature weights. ``overlap`` and ``size``
of clusters are object-based (``o``), feature-based (``f``) or their product
(``of``); ``P(C) = max_R overlap(R, C) / size(C)`` and
``R(C) = max_R overlap(R, C) / size(argmax_R overlap(R, C))`` over the
reference clusters R, and F1 averages ``2PR / (P + R)`` over the clusters C.

These are the paper's definitions, kept as stated: for 0/1 representations
they are the classical F1, but the product overlap of *graded* weights is
below the sizes even for identical clusters (two identical feature-weight
vectors uniform over 3 features overlap by 1/3, so F1_f = 1/3), so soft or
weighted representations score well below 1 and the measures compare methods
rather than grade them absolutely.
"""

from __future__ import annotations

import numpy as np

from segensemble.errors import InputError

__all__ = ["projective_f1", "ensemble_f1"]

KINDS = ("o", "f", "of")


def _overlap_size(gamma_a, delta_a, gamma_b, delta_b, kind, weights):
    go = (gamma_a * weights[:, None]).T @ gamma_b  # (Ka, Kb)
    fo = delta_a @ delta_b.T
    gs_a, gs_b = weights @ gamma_a, weights @ gamma_b
    fs_a, fs_b = delta_a.sum(axis=1), delta_b.sum(axis=1)
    if kind == "o":
        return go, gs_a, gs_b
    if kind == "f":
        return fo, fs_a, fs_b
    return go * fo, gs_a * fs_a, gs_b * fs_b


def projective_f1(reference, clustering, kind: str = "of", weights=None) -> float:
    """F1 of a projective clustering against a reference one.

    Parameters
    ----------
    reference, clustering : (Gamma, Delta) pairs
        Gamma (n_objects, K) memberships, Delta (K, n_features) weights.
    kind : {'o', 'f', 'of'}
        Object-based, feature-based, or object & feature-based measure.
    weights : (n_objects,) array, optional

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> g, d = np.eye(2)[[0, 0, 1]], np.eye(2)
    >>> projective_f1((g, d), (g, d)), projective_f1((g, d), (np.ones((3, 1)), np.ones((1, 2))), "o")
    (1.0, 0.8)
    """
    if kind not in KINDS:
        raise InputError(f"kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    (gr, dr), (gc, dc) = [(np.asarray(g, dtype=np.float64), np.asarray(d, dtype=np.float64))
                          for g, d in (reference, clustering)]
    if gr.shape[0] != gc.shape[0] or dr.shape[1] != dc.shape[1]:
        raise InputError(f"clustering: shapes {gc.shape}/{dc.shape} do not match the reference {gr.shape}/{dr.shape}")
    w = np.ones(gr.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    overlap, size_r, size_c = _overlap_size(gr, dr, gc, dc, kind, w)  # overlap: (K_ref, K)
    best = np.argmax(overlap, axis=0)
    top = overlap[best, np.arange(overlap.shape[1])]
    P = top / np.maximum(size_c, 1e-300)
    R = top / np.maximum(size_r[best], 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(P + R > 0, 2 * P * R / (P + R), 0.0)
    return float(f1.mean())


def ensemble_f1(clustering, solutions, kind: str = "of", weights=None) -> float:
    """Internal F1: mean over the ensemble's solutions S of ``max(F1(C, S), F1(S, C))``.

    Examples
    --------
    >>> g, d = np.eye(2)[[0, 0, 1]], np.eye(2)
    >>> ensemble_f1((g, d), [(g, d), (g, d)])
    1.0
    """
    return float(np.mean([max(projective_f1(clustering, s, kind, weights), projective_f1(s, clustering, kind, weights))
                          for s in solutions]))
