"""Precision-recall for objects and parts (Fop): the region measure of hierarchies such as MCG and COB.

Every region of the machine segmentation and of each annotation is classified
from the contingency table alone. For a machine region ``s`` and an annotated
region ``g`` with overlap ``n = |s ∩ g|``, write ``p = n / |s|`` (how much of
``s`` lies in ``g``) and ``r = n / |g|`` (how much of ``g`` lies in ``s``), with
the object threshold ``γo`` (0.9) and the part threshold ``γp`` (0.25):

* *candidates*: sorted by area, largest first, the regions whose larger
  predecessors cover less than 99% of the image (a partition's tiny debris is
  neither counted nor rewarded);
* between two candidates, ``p >= γo`` and ``r >= γo`` make both an **object**;
  ``p >= γo`` and ``γp <= r < γo`` make ``s`` a **part** (of ``g``);
  ``r >= γo`` and ``γp <= p < γo`` make ``g`` a part (of ``s``);
  a region that is an object for one annotation is an object;
* a candidate machine region that is neither scores its *degree of
  under-segmentation*: the sum of ``p`` over the annotated regions it nearly
  contains (``r >= γo``, ``p < γo``), averaged over annotations; an annotated
  candidate that is neither scores the sum of ``r`` over the machine regions
  nearly inside it (``p >= γo``, ``r < γo``). These sums count pairs of any
  size, candidates or not.

Then, with ``β = 0.1`` the weight of a part and the counts taken over the
machine regions (precision) or over the regions of every annotation (recall),

``P = (objects + under-segmentation / n_annotations + β parts) / candidates``,
``R = (objects + over-segmentation + β parts) / candidates``,
``F = 2PR / (P + R)`` (0 when both are 0).

Over a dataset, P and R are averaged over images at every threshold of a
hierarchy and F taken of the means (ODS: the best threshold; OIS: every
image's own best-F threshold, then the means), as the SEISM toolbox that
publishes per-image Fop for BSDS500 does.

References
----------
J. Pont-Tuset, F. Marques, "Measures and Meta-Measures for the Supervised
Evaluation of Image Segmentation", CVPR 2013, Sec. 3.3 (Fop). J. Pont-Tuset,
F. Marques, "Supervised Evaluation of Image Segmentation and Object Proposal
Techniques", IEEE TPAMI 38(7), 2016.
"""

from __future__ import annotations

import numpy as np

from segensemble.evaluation.contingency import _check_gts, _contingency
from segensemble.evaluation.curves import fmeasure

__all__ = ["objects_and_parts", "objects_and_parts_summary"]

GAMMA_OBJECT = 0.9
GAMMA_PART = 0.25
BETA = 0.1
AREA_PERCENTILE = 0.99


def _candidates(areas: np.ndarray, total: float) -> np.ndarray:
    """Regions whose larger predecessors cover < 99% of the image (ties: the later region first)."""
    frac = areas / total
    order = np.lexsort((-np.arange(len(frac)), -frac))
    before = np.concatenate([[0.0], np.cumsum(frac[order])[:-1]])
    cand = np.zeros(len(frac), dtype=bool)
    cand[order] = before < AREA_PERCENTILE
    return cand


def _pairs(n):
    """Row, column and count of every non-empty cell of a (dense or sparse) contingency table."""
    if hasattr(n, "tocoo"):
        c = n.tocoo()
        return c.row, c.col, np.asarray(c.data, dtype=np.float64)
    rows, cols = np.nonzero(n)
    return rows, cols, n[rows, cols]


def _precision_recall(tables: list) -> tuple[float, float]:
    """Fop precision and recall from the contingency tables (machine x annotation) of one image."""
    first = tables[0]
    seg_area = np.asarray(first.sum(axis=1), dtype=np.float64).ravel()
    total = float(seg_area.sum())
    seg_cand = _candidates(seg_area, total)
    k = len(seg_area)
    seg_object = np.zeros(k, dtype=bool)
    seg_part = np.zeros(k, dtype=bool)
    seg_under = np.zeros(k)
    gt_objects = gt_parts = gt_candidates = 0
    gt_over = 0.0
    for n in tables:
        gt_area = np.asarray(n.sum(axis=0), dtype=np.float64).ravel()
        gt_cand = _candidates(gt_area, total)
        i, j, v = _pairs(n)
        p, r = v / seg_area[i], v / gt_area[j]
        both = seg_cand[i] & gt_cand[j]
        p_obj, r_obj = p >= GAMMA_OBJECT, r >= GAMMA_OBJECT
        obj = both & p_obj & r_obj
        seg_object[i[obj]] = True
        seg_part[i[both & p_obj & ~r_obj & (r >= GAMMA_PART)]] = True
        g_object = np.zeros(len(gt_area), dtype=bool)
        g_part = np.zeros(len(gt_area), dtype=bool)
        g_object[j[obj]] = True
        g_part[j[both & r_obj & ~p_obj & (p >= GAMMA_PART)]] = True
        inside = p_obj & ~r_obj
        over = np.bincount(j[inside], weights=r[inside], minlength=len(gt_area))
        seg_under += np.bincount(i[r_obj & ~p_obj], weights=p[r_obj & ~p_obj], minlength=k)
        gt_objects += int(g_object.sum())
        gt_parts += int((g_part & ~g_object).sum())
        gt_candidates += int(gt_cand.sum())
        gt_over += float(over[gt_cand & ~g_object & ~g_part].sum())
    seg_part &= ~seg_object
    under = float(seg_under[seg_cand & ~seg_object & ~seg_part].sum()) / len(tables)
    precision = (seg_object.sum() + under + BETA * seg_part.sum()) / seg_cand.sum()
    recall = (gt_objects + gt_over + BETA * gt_parts) / gt_candidates
    return float(precision), float(recall)


def objects_and_parts(seg, gts) -> tuple[float, float, float]:
    """Objects-and-parts F, precision and recall of one segmentation against its annotations.

    Parameters
    ----------
    seg : (H, W) int array
    gts : list of (H, W) int arrays, or a :class:`~segensemble.io.GroundTruth`

    Returns
    -------
    (f, precision, recall) : tuple of float
        The definitions are in the module docstring (Pont-Tuset & Marques,
        CVPR 2013): objects count 1, parts 0.1, and an unmatched region its
        degree of fragmentation.

    Examples
    --------
    Two annotated halves: the same halves are two objects. One region over
    both halves has no object; each half is a part of it (0.1 each, recall
    0.2 / 2), and the region, fully covered by halves that lie in it, is
    wholly under-segmented (precision 0.5 + 0.5).

    >>> gt = np.array([[0] * 10 + [1] * 10] * 10)
    >>> objects_and_parts(gt, [gt])
    (1.0, 1.0, 1.0)
    >>> f, p, r = objects_and_parts(np.zeros((10, 20), int), [gt])
    >>> round(f, 4), p, r
    (0.1818, 1.0, 0.1)
    """
    s, gl = _check_gts(seg, gts)
    p, r = _precision_recall([_contingency(s, g) for g in gl])
    return float(fmeasure(r, p)), p, r


def objects_and_parts_summary(precision, recall) -> dict:
    """Dataset Fop at ODS and OIS from per-image precision and recall at every threshold.

    Parameters
    ----------
    precision, recall : (n_images, n_thresholds) array_like

    Returns
    -------
    dict
        ``{'ods', 'ods_threshold_index', 'ods_precision', 'ods_recall', 'ois',
        'ois_precision', 'ois_recall'}``: ODS is the F of the mean precision
        and recall at the best common threshold; OIS takes every image's first
        best-F threshold and the F of the means there.

    Examples
    --------
    Image 1 ties at both thresholds (F 2/3) and keeps the first; image 2's
    best is the second. ODS: means (0.7, 0.8) at the second threshold;
    OIS: means (0.95, 0.55).

    >>> s = objects_and_parts_summary([[1.0, 0.5], [0.4, 0.9]], [[0.5, 1.0], [0.4, 0.6]])
    >>> round(s['ods'], 4), s['ods_threshold_index'], round(s['ois'], 4)
    (0.7467, 1, 0.6967)
    """
    p = np.atleast_2d(np.asarray(precision, dtype=np.float64))
    r = np.atleast_2d(np.asarray(recall, dtype=np.float64))
    mp, mr = p.mean(axis=0), r.mean(axis=0)
    f = fmeasure(mr, mp)
    ods = int(np.argmax(f))
    best = np.argmax(fmeasure(r, p), axis=1)
    rows = np.arange(len(p))
    op, orr = float(p[rows, best].mean()), float(r[rows, best].mean())
    return {"ods": float(f[ods]), "ods_threshold_index": ods, "ods_precision": float(mp[ods]),
            "ods_recall": float(mr[ods]), "ois": float(fmeasure(orr, op)), "ois_precision": op, "ois_recall": orr}
