"""Precision-recall curve measures of the boundary benchmark: F, interpolated best F, AP and R50.

The rules of the official ``collect_eval_bdry.m`` (``fmeasure``, ``maxF``, the
AP sum) and of the Structured Edge toolbox's ``edgesEvalDir`` (R50), for a
curve given as recall and precision per threshold; :mod:`segensemble.evaluation.aggregate`
applies them to a dataset.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fmeasure", "interpolated_max_f", "average_precision", "recall_at_precision"]


def fmeasure(R, P):
    """Harmonic mean ``2PR / (P + R)``, 0 where both are 0 (benchmark ``fmeasure``).

    Examples
    --------
    >>> float(fmeasure(0.5, 1.0)), float(fmeasure(0.0, 0.0))
    (0.6666666666666666, 0.0)
    """
    R = np.asarray(R, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    s = P + R
    return 2 * P * R / (s + (s == 0))


def interpolated_max_f(thresholds, R, P) -> tuple[float, float, float, float]:
    """Best F with linear interpolation between neighbouring thresholds (``maxF``).

    100 points per interval (``linspace(0, 1)``), a strictly better F replaces
    the current best, starting from the first threshold.

    Returns
    -------
    bestT, bestR, bestP, bestF

    Examples
    --------
    >>> [round(x, 4) for x in interpolated_max_f([1, 2], [1.0, 0.0], [0.0, 1.0])]
    [1.5051, 0.4949, 0.5051, 0.4999]
    """
    t = np.asarray(thresholds, dtype=np.float64)
    R = np.asarray(R, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    best = (float(t[0]), float(R[0]), float(P[0]), float(fmeasure(R[0], P[0])))
    d = np.linspace(0.0, 1.0, 100)
    for i in range(1, len(t)):
        tt = t[i] * d + t[i - 1] * (1 - d)
        rr = R[i] * d + R[i - 1] * (1 - d)
        pp = P[i] * d + P[i - 1] * (1 - d)
        ff = fmeasure(rr, pp)
        k = int(np.argmax(ff))
        if ff[k] > best[3]:
            best = (float(tt[k]), float(rr[k]), float(pp[k]), float(ff[k]))
    return best


def _one_point_per_recall(R, P):
    """The curve sorted by recall, one point per recall value (the last threshold of each tie, as MATLAB's legacy
    ``unique``)."""
    R = np.asarray(R, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    order = np.argsort(R, kind="stable")
    Rs, Ps = R[order], P[order]
    last = np.r_[Rs[1:] != Rs[:-1], True]
    return Rs[last], Ps[last]


def average_precision(R, P) -> float:
    """Area under the PR curve as ``collect_eval_bdry.m``.

    P is interpolated linearly on the unique recall values (the last threshold
    of each tie group, as MATLAB's legacy ``unique``) at recalls 0:0.01:1;
    points outside the recall range count 0; the sum is multiplied by 0.01.

    Examples
    --------
    >>> round(average_precision([0.2, 0.5, 0.8], [0.9, 0.8, 0.6]), 4)
    0.4725
    """
    Ru, Pu = _one_point_per_recall(R, P)
    if len(Ru) < 2:
        return 0.0
    Ri = np.round(np.arange(101) * 0.01, 10)
    Pi = np.interp(Ri, Ru, Pu, left=np.nan, right=np.nan)
    Pi[np.isnan(Pi)] = 0.0
    return float(Pi.sum() * 0.01)


def recall_at_precision(R, P, precision: float = 0.5) -> float:
    """R50: recall where the dataset curve reaches 50% precision (``precision``), linearly interpolated.

    The ninth output of the Structured Edge toolbox's ``edgesEvalDir`` (Dollár & Zitnick, TPAMI 2015), which
    edge-detection papers report beside ODS, OIS and AP: the curve reduced to one point per recall value (as for
    :func:`average_precision`) and then per precision value, recall interpolated at ``precision`` — or at the
    curve's lowest precision when that is higher (the curve's highest recall). NaN when the curve never reaches
    ``precision``.

    Examples
    --------
    >>> recall_at_precision([0.9, 0.6, 0.3], [0.3, 0.6, 0.9])  # halfway between (0.9, 0.3) and (0.6, 0.6)
    0.7
    >>> recall_at_precision([0.8, 0.4], [0.55, 0.9])  # never below 50% precision: its highest recall
    0.8
    """
    Ru, Pu = (a[::-1] for a in _one_point_per_recall(R, P))  # highest recall first
    Pv, first = np.unique(Pu, return_index=True)  # one point per precision (its first, highest-recall one)
    if len(Pv) == 0:
        return float("nan")
    target = max(float(Pv[0]), float(precision))
    if target > Pv[-1]:
        return float("nan")
    return float(np.round(np.interp(target, Pv, Ru[first]), 12))
