"""Agreement between clusterings with weighted objects: Jaccard index, ensemble stability, NMI.

An object of weight w stands for w identical objects (pixels of an atom), so
pair counts are those of the underlying pixels: a cell of the contingency
table holding N pixels contains N (N - 1) / 2 pairs.
"""

from __future__ import annotations

import numpy as np

from segensemble.errors import InputError

__all__ = ["jaccard_index", "ensemble_stability", "normalized_mutual_information"]


def _table(a, b, weights):
    a = np.asarray(a).ravel()
    b = np.asarray(b).ravel()
    if a.shape != b.shape:
        raise InputError(f"b: expected {a.size} labels like a, got {b.size}")
    w = np.ones(a.size) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != a.shape:
        raise InputError(f"weights: expected {a.size} weights, got {w.size}")
    _, ca = np.unique(a, return_inverse=True)
    _, cb = np.unique(b, return_inverse=True)
    ka, kb = int(ca.max()) + 1, int(cb.max()) + 1
    return np.bincount(ca.ravel() * kb + cb.ravel(), weights=w, minlength=ka * kb).reshape(ka, kb)


def _pairs(counts):
    return float(np.sum(counts * (counts - 1)) / 2)


def jaccard_index(a, b, weights=None) -> float:
    """Jaccard index of two clusterings: pairs together in both / pairs together in either.

    Examples
    --------
    >>> jaccard_index([0, 0, 1, 1], [0, 0, 0, 1])
    0.25
    >>> jaccard_index([0, 1], [0, 1], weights=[2, 3])  # atoms of 2 and 3 pixels
    1.0
    """
    n = _table(a, b, weights)
    both = _pairs(n)
    either = _pairs(n.sum(axis=1)) + _pairs(n.sum(axis=0)) - both
    return 1.0 if either <= 0 else both / either


def ensemble_stability(ensemble) -> float:
    """Stability of an ensemble: the Jaccard index averaged over all pairs of members.

    Bekkerman et al.'s measure (1 when all members agree). With one member, 1.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> ensemble_stability(Ensemble.from_labels([[0, 0, 0], [0, 0, 1], [1, 1, 1]]))  # J = 1, 0, 0
    0.3333333333333333
    """
    m = ensemble.n_members
    if m < 2:
        return 1.0
    vals = [jaccard_index(ensemble.labels[:, i], ensemble.labels[:, j], ensemble.weights)
            for i in range(m) for j in range(i + 1, m)]
    return float(np.mean(vals))


def normalized_mutual_information(a, b, weights=None) -> float:
    """NMI with geometric normalisation, ``I(A; B) / sqrt(H(A) H(B))`` (Strehl & Ghosh), weighted.

    Two single-cluster labellings have NMI 1; one single-cluster labelling
    against another labelling has NMI 0.

    Examples
    --------
    >>> round(normalized_mutual_information([0, 0, 1, 1], [1, 1, 0, 0]), 6)
    1.0
    """
    n = _table(a, b, weights)
    p = n / n.sum()
    pa, pb = p.sum(axis=1), p.sum(axis=0)
    nz = p > 0
    mi = float(np.sum(p[nz] * np.log(p[nz] / np.outer(pa, pb)[nz])))
    ha = -float(np.sum(pa[pa > 0] * np.log(pa[pa > 0])))
    hb = -float(np.sum(pb[pb > 0] * np.log(pb[pb > 0])))
    if ha <= 0 and hb <= 0:
        return 1.0
    if ha <= 0 or hb <= 0:
        return 0.0
    return max(0.0, min(1.0, mi / np.sqrt(ha * hb)))
