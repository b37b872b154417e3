"""Region benchmarks: probabilistic Rand index, variation of information, covering.

The formulas are those of the BSDS500 benchmark (``match_segmentations.m``,
``match_segmentations2.m``, ``evaluation_reg_image.m``): every label, including
0, is an ordinary region, and a contingency table computed in O(pixels) drives
every measure.

References
----------
P. Arbelaez, M. Maire, C. Fowlkes, J. Malik, "Contour Detection and
Hierarchical Image Segmentation", IEEE TPAMI 33(5), 2011, Sec. 3.
R. Unnikrishnan, C. Pantofaru, M. Hebert, "Toward objective evaluation of image
segmentation algorithms", TPAMI 2007 (PRI). M. Meila, "Comparing clusterings: an
information based distance", J. Multivariate Anal. 2007 (VOI).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segensemble.evaluation.consistency import boundary_maps, consistency_errors, displacement
from segensemble.evaluation.contingency import _check_gts, _code_table, _codes, _contingency, contingency_table
from segensemble.evaluation.objects_parts import _precision_recall

__all__ = [
    "contingency_table",
    "rand_index",
    "variation_of_information",
    "probabilistic_rand_index",
    "segmentation_covering",
    "region_scores",
    "RegionCounts",
    "region_counts",
]

def _ri_voi(n) -> tuple[float, float]:
    """Rand index and VOI (log2) from a contingency table (``compare_segmentations``)."""
    if hasattr(n, "toarray"):
        nu = np.asarray(n.sum(axis=1)).ravel()
        nv = np.asarray(n.sum(axis=0)).ravel()
        nij = n.data
    else:
        nu = n.sum(axis=1)
        nv = n.sum(axis=0)
        nij = n[n > 0]
    N = nu.sum()
    sum_nij2 = np.sum(nij**2)
    if N > 1:
        ri = 1.0 - (np.sum(nu**2) / 2 + np.sum(nv**2) / 2 - sum_nij2) / (N * (N - 1) / 2)
    else:
        ri = 1.0
    pu, pv, pij = nu / N, nv / N, nij / N
    h1 = -np.sum(pu[pu > 0] * np.log2(pu[pu > 0]))
    h2 = -np.sum(pv[pv > 0] * np.log2(pv[pv > 0]))
    hj = -np.sum(pij[pij > 0] * np.log2(pij[pij > 0]))
    mi = h1 + h2 - hj
    return float(ri), float(max(h1 + h2 - 2 * mi, 0.0))


def rand_index(seg, gt) -> float:
    """Rand index between two label maps (fraction of agreeing pixel pairs).

    ``RI = 1 - (sum_u n_u^2/2 + sum_v n_v^2/2 - sum_uv n_uv^2) / (N(N-1)/2)``.

    Examples
    --------
    >>> rand_index(np.array([[0, 0, 1, 1]]), np.array([[3, 3, 4, 4]]))
    1.0
    """
    return _ri_voi(contingency_table(seg, gt))[0]


def variation_of_information(seg, gt) -> float:
    """Variation of information ``H(seg) + H(gt) - 2 I(seg; gt)`` in bits.

    Examples
    --------
    >>> variation_of_information(np.array([[0, 0, 1, 1]]), np.array([[0, 0, 0, 0]]))
    1.0
    """
    return _ri_voi(contingency_table(seg, gt))[1]


def probabilistic_rand_index(seg, gts) -> float:
    """Probabilistic Rand index: the Rand index averaged over annotations.

    Examples
    --------
    >>> s = np.array([[0, 0, 1, 1]])
    >>> probabilistic_rand_index(s, [s, np.zeros_like(s)])
    0.6666666666666667
    """
    s, gl = _check_gts(seg, gts)
    return float(np.mean([_ri_voi(_contingency(s, g))[0] for g in gl]))


def segmentation_covering(seg, gts) -> float:
    """Covering of the ground truth by ``seg`` (BSDS definition, over all annotations).

    ``sum_{R in GT} |R| max_{R' in seg} |R ∩ R'| / |R ∪ R'|``, divided by the
    total size of all annotations.

    Examples
    --------
    >>> segmentation_covering(np.array([[0, 0, 1, 1]]), [np.array([[0, 0, 0, 1]])])
    0.625
    """
    s, gl = _check_gts(seg, gts)
    c = _region_counts(s, gl, consistency=False)
    return c.cntR / c.sumR


@dataclass
class RegionCounts:
    """Per-image region counts of one segmentation (``evaluation_reg_image.m``).

    Attributes
    ----------
    cntR, sumR : float
        Covering of the ground truth: sum of area x best overlap over every GT
        region of every annotation, and the total GT area.
    cntP, sumP : float
        Covering of ``seg`` by the ground truth: area x best overlap over every
        region of ``seg``, and the area of ``seg``.
    pri, voi : float
        Rand index and VOI averaged over annotations.
    best_gt_overlap : (n_gt_regions,) float array
        Best overlap of every GT region (all annotations, in order); the maximum
        over thresholds gives the benchmark's "best" covering.
    gt_areas : (n_gt_regions,) float array
    gce, lce, bde : float
        Global and local consistency error and boundary displacement error
        (pixels), averaged over annotations
        (:mod:`segensemble.evaluation.consistency`).
    fop_precision, fop_recall : float
        Objects-and-parts precision and recall (:mod:`segensemble.evaluation.objects_parts`).
    """

    cntR: float
    sumR: float
    cntP: float
    sumP: float
    pri: float
    voi: float
    best_gt_overlap: np.ndarray
    gt_areas: np.ndarray
    gce: float = float("nan")
    lce: float = float("nan")
    bde: float = float("nan")
    fop_precision: float = float("nan")
    fop_recall: float = float("nan")


def _region_counts(s: np.ndarray, gts: list, gt_maps=None, *, consistency: bool = True) -> RegionCounts:
    """Every count of ``s`` against ``gts``; ``consistency=False`` leaves GCE, LCE and BDE at NaN (not computed)."""
    cntP_per_seg = None
    gt_best, gt_area = [], []
    ri_sum = voi_sum = gce_sum = lce_sum = 0.0
    seg_area = None
    tables, codes = [], _codes(s)  # the segmentation's region codes, once for every annotation
    for g in gts:
        n = _code_table(codes, _codes(g))
        if hasattr(n, "toarray"):
            n = n.toarray()
        tables.append(n)
        ri, voi = _ri_voi(n)
        gce, lce = consistency_errors(n) if consistency else (np.nan, np.nan)
        ri_sum += ri
        voi_sum += voi
        gce_sum += gce
        lce_sum += lce
        nu = n.sum(axis=1)
        nv = n.sum(axis=0)
        union = nu[:, None] + nv[None, :] - n
        iou = np.divide(n, union, out=np.zeros_like(n), where=union > 0)
        gt_best.append(iou.max(axis=0))
        gt_area.append(nv)
        best_seg = iou.max(axis=1)
        cntP_per_seg = best_seg if cntP_per_seg is None else np.maximum(cntP_per_seg, best_seg)
        seg_area = nu
    best = np.concatenate(gt_best)
    area = np.concatenate(gt_area)
    bde = np.nan
    if consistency:
        mine = boundary_maps([s])[0]
        bde = np.mean([displacement(mine, g) for g in (gt_maps or boundary_maps(gts))])
    fop_p, fop_r = _precision_recall(tables)
    return RegionCounts(
        cntR=float(np.sum(area * best)),
        sumR=float(area.sum()),
        cntP=float(np.sum(seg_area * cntP_per_seg)),
        sumP=float(seg_area.sum()),
        pri=ri_sum / len(gts),
        voi=voi_sum / len(gts),
        best_gt_overlap=best,
        gt_areas=area,
        gce=gce_sum / len(gts),
        lce=lce_sum / len(gts),
        bde=float(bde),
        fop_precision=fop_p,
        fop_recall=fop_r,
    )


def region_counts(seg, gts, *, gt_maps=None) -> RegionCounts:
    """All region counts of one segmentation against its annotations.

    Parameters
    ----------
    seg : (H, W) int array
    gts : list of (H, W) int arrays, or a :class:`~segensemble.io.GroundTruth`
    gt_maps : list, optional
        :func:`segensemble.evaluation.consistency.boundary_maps` of ``gts``
        (computed here when not given; pass them when scoring many
        segmentations against the same annotations).

    Returns
    -------
    RegionCounts

    Examples
    --------
    >>> c = region_counts(np.array([[0, 0, 1, 1]]), [np.array([[0, 0, 1, 1]])])
    >>> c.cntR / c.sumR, c.pri, c.voi
    (1.0, 1.0, 0.0)
    """
    s, gl = _check_gts(seg, gts)
    return _region_counts(s, gl, gt_maps)


def region_scores(seg, gts) -> dict:
    """PRI, VOI and covering of one segmentation against its annotations.

    Returns
    -------
    dict with keys ``'pri'``, ``'voi'``, ``'covering'``, ``'gce'``, ``'lce'``,
    ``'bde'`` (floats) and ``'n_segments'`` (int).

    Examples
    --------
    >>> region_scores(np.array([[0, 0, 1, 1]]), [np.array([[0, 0, 1, 1]])])
    {'pri': 1.0, 'voi': 0.0, 'covering': 1.0, 'gce': 0.0, 'lce': 0.0, 'bde': 0.0, 'n_segments': 2}
    """
    s, gl = _check_gts(seg, gts)
    c = _region_counts(s, gl)
    return {"pri": c.pri, "voi": c.voi, "covering": c.cntR / c.sumR, "gce": c.gce, "lce": c.lce, "bde": c.bde,
            "n_segments": int(len(np.unique(s)))}
