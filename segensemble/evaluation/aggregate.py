"""Dataset-level aggregation exactly as the BSDS500 collect scripts.

Region scores follow ``collect_eval_reg.m``: ODS sums the counts of every image
per threshold and takes the best threshold; OIS takes every image's best
threshold; "best" takes, for every ground-truth region, its best overlap over
all thresholds. PRI/VOI ODS are the best (max / min) of the per-threshold means
over images, OIS the means of the per-image best values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from segensemble.evaluation.curves import average_precision, fmeasure, interpolated_max_f, recall_at_precision
from segensemble.evaluation.objects_parts import objects_and_parts_summary
from segensemble.evaluation.regions import RegionCounts

__all__ = [
    "BoundarySummary",
    "ImageRegionResult",
    "RegionSummary",
    "average_precision",
    "collect_boundaries",
    "collect_regions",
    "fmeasure",
    "image_region_result",
    "interpolated_max_f",
    "official_rounding",
    "recall_at_precision",
]


@dataclass
class ImageRegionResult:
    """Region counts of one image at every threshold (``*_ev2/3/4.txt``)."""

    thresholds: np.ndarray
    cntR: np.ndarray
    sumR: np.ndarray
    cntP: np.ndarray
    sumP: np.ndarray
    pri: np.ndarray
    voi: np.ndarray
    cntR_best: float
    gce: np.ndarray | None = None  # the fusion literature's measures (None in results stored before them)
    lce: np.ndarray | None = None
    bde: np.ndarray | None = None
    fop_precision: np.ndarray | None = None  # objects-and-parts precision / recall (None in older results)
    fop_recall: np.ndarray | None = None

    def to_dict(self) -> dict:
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, d: dict) -> ImageRegionResult:
        return cls(**{k: (np.asarray(v, dtype=np.float64) if isinstance(v, list) else v) for k, v in d.items()})


def image_region_result(thresholds, counts: list[RegionCounts]) -> ImageRegionResult:
    """Combine the per-threshold :class:`RegionCounts` of one image.

    Examples
    --------
    >>> from segensemble.evaluation import region_counts
    >>> gt = [np.array([[0, 0, 1, 1]])]
    >>> r = image_region_result([1, 2], [region_counts(np.array([[0, 0, 0, 0]]), gt),
    ...                                  region_counts(np.array([[0, 0, 1, 1]]), gt)])
    >>> r.cntR.tolist(), r.cntR_best
    ([2.0, 4.0], 4.0)
    """
    best = np.max(np.stack([c.best_gt_overlap for c in counts]), axis=0)
    return ImageRegionResult(
        thresholds=np.asarray(thresholds, dtype=np.float64),
        cntR=np.array([c.cntR for c in counts]),
        sumR=np.array([c.sumR for c in counts]),
        cntP=np.array([c.cntP for c in counts]),
        sumP=np.array([c.sumP for c in counts]),
        pri=np.array([c.pri for c in counts]),
        voi=np.array([c.voi for c in counts]),
        cntR_best=float(np.sum(counts[0].gt_areas * best)),
        **{k: np.array([getattr(c, k) for c in counts]) for k in EXTRA_MEASURES + FOP},
    )


def _ratio(a, b):
    b = np.asarray(b, dtype=np.float64)
    return np.asarray(a, dtype=np.float64) / (b + (b == 0))


@dataclass
class RegionSummary:
    """Dataset-level region scores (the ``eval_cover*`` and ``eval_RI_VOI*`` files)."""

    thresholds: np.ndarray
    covering_thr: np.ndarray  # per threshold, counts summed over images
    covering_ods_t: float
    covering_ods: float
    covering_ois: float
    covering_best: float
    pri_thr: np.ndarray
    voi_thr: np.ndarray
    pri_ods_t: float
    pri_ods: float
    pri_ois: float
    voi_ods_t: float
    voi_ods: float
    voi_ois: float
    per_image: list = field(default_factory=list)  # (best_t, best_covering, precision_at_best_t)
    best_index: list = field(default_factory=list)  # per image, the index of best_t among the thresholds
    extra: dict = field(default_factory=dict)  # 'gce' / 'lce' / 'bde' / 'fop' -> {'ods', 'ods_threshold', 'ois'}

    def to_dict(self) -> dict:
        return {
            "covering": {"ods": self.covering_ods, "ods_threshold": self.covering_ods_t,
                         "ois": self.covering_ois, "best": self.covering_best},
            "pri": {"ods": self.pri_ods, "ods_threshold": self.pri_ods_t, "ois": self.pri_ois},
            "voi": {"ods": self.voi_ods, "ods_threshold": self.voi_ods_t, "ois": self.voi_ois},
            **self.extra,
        }


#: Region measures beside the official ones, lower is better (:mod:`segensemble.evaluation.consistency`).
EXTRA_MEASURES = ("gce", "lce", "bde")
#: Objects-and-parts precision and recall per threshold (:mod:`segensemble.evaluation.objects_parts`).
FOP = ("fop_precision", "fop_recall")


def _extra_summary(results: list[ImageRegionResult], ods: int, ois: list[int]) -> dict:
    """GCE, LCE and BDE at covering's ODS threshold (dataset mean) and at every image's covering-best one (OIS).

    Objects-and-parts F has its own ODS and OIS
    (:func:`~segensemble.evaluation.objects_parts.objects_and_parts_summary`).

    Their own minimum would pick a degenerate cut: GCE and LCE are 0 whenever
    one map refines the other, so one region (or one region per pixel) scores
    a perfect 0 (Martin et al. 2001, Sec. 3).
    """
    out = {}
    for k in EXTRA_MEASURES:
        per = [getattr(r, k) for r in results]
        if any(v is None for v in per):
            continue
        out[k] = {"ods": float(np.mean([v[ods] for v in per])), "ods_threshold": float(results[0].thresholds[ods]),
                  "ois": float(np.mean([v[i] for v, i in zip(per, ois)]))}
    if all(r.fop_precision is not None for r in results):
        f = objects_and_parts_summary([r.fop_precision for r in results], [r.fop_recall for r in results])
        f["ods_threshold"] = float(results[0].thresholds[f.pop("ods_threshold_index")])
        out["fop"] = f
    return out


def _g(x):
    """Round like MATLAB's ``%10g`` (6 significant digits)."""
    return np.vectorize(lambda v: float(f"{v:g}"), otypes=[np.float64])(x)


def official_rounding(r: ImageRegionResult) -> ImageRegionResult:
    """The per-image values as the official scripts read them back from text.

    ``evaluation_reg_image.m`` writes every per-image count with ``%10g`` (six
    significant digits) and ``collect_eval_reg.m`` reads those files, so the
    official dataset numbers carry that rounding; applying it reproduces them
    digit for digit.

    Examples
    --------
    >>> r = ImageRegionResult(np.array([1.0]), np.array([1234567.0]), np.array([2e6]), np.array([1.0]),
    ...     np.array([1.0]), np.array([0.123456789]), np.array([1.0]), 1234567.0)
    >>> official_rounding(r).cntR.tolist(), official_rounding(r).pri.tolist()
    ([1234570.0], [0.123457])
    """
    return ImageRegionResult(
        thresholds=_g(r.thresholds), cntR=_g(r.cntR), sumR=_g(r.sumR), cntP=_g(r.cntP),
        sumP=_g(r.sumP), pri=_g(r.pri), voi=_g(r.voi), cntR_best=float(_g(r.cntR_best)),
        gce=r.gce, lce=r.lce, bde=r.bde, fop_precision=r.fop_precision, fop_recall=r.fop_recall,
    )


def collect_regions(results: list[ImageRegionResult], *, official: bool = True) -> RegionSummary:
    """Aggregate per-image region results as ``collect_eval_reg.m``.

    Ties: the per-image threshold reported is the first among tied maxima;
    the counts summed for OIS are taken at the last one, as the official script.
    Per image, the reported values are that first threshold, the covering R
    there, and the reverse covering P = cntP / sumP there.

    Parameters
    ----------
    results : list of ImageRegionResult
    official : bool, default True
        Round the per-image values to six significant digits first, as the
        official pipeline does through its intermediate text files
        (:func:`official_rounding`); False keeps full precision.

    Examples
    --------
    >>> r = ImageRegionResult(np.array([1., 2.]), np.array([3., 4.]), np.array([8., 8.]),
    ...     np.array([1., 1.]), np.array([2., 2.]), np.array([.7, .8]), np.array([2., 1.]), 5.0)
    >>> s = collect_regions([r])
    >>> s.covering_ods, s.covering_best, s.pri_ods, s.voi_ods
    (0.5, 0.625, 0.8, 1.0)
    """
    if not results:
        raise ValueError("results: expected at least one image")
    thresholds = results[0].thresholds
    cntR_total = np.zeros(len(thresholds))
    sumR_total = np.zeros(len(thresholds))
    cntR_ois = sumR_ois = cntR_best_total = sumR_best_total = 0.0
    pri_sum = np.zeros(len(thresholds))
    voi_sum = np.zeros(len(thresholds))
    best_pri, best_voi, per_image, firsts = [], [], [], []
    for r in results:
        if official:
            r = official_rounding(r)
        R = _ratio(r.cntR, r.sumR)
        first = int(np.argmax(R))
        firsts.append(first)
        last = int(np.flatnonzero(R == R.max())[-1])
        cntR_ois += r.cntR[last]
        sumR_ois += r.sumR[last]
        cntR_total += r.cntR
        sumR_total += r.sumR
        cntR_best_total += r.cntR_best
        sumR_best_total += r.sumR[0]
        P = _ratio(r.cntP[first], r.sumP[first])
        per_image.append((float(r.thresholds[first]), float(R[first]), float(P)))
        pri_sum += r.pri
        voi_sum += r.voi
        best_pri.append(r.pri.max())
        best_voi.append(r.voi.min())
    R = _ratio(cntR_total, sumR_total)
    i = int(np.argmax(R))
    n = len(results)
    pri_thr, voi_thr = pri_sum / n, voi_sum / n
    ip, iv = int(np.argmax(pri_thr)), int(np.argmin(voi_thr))
    return RegionSummary(
        thresholds=thresholds,
        covering_thr=R,
        covering_ods_t=float(thresholds[i]),
        covering_ods=float(R[i]),
        covering_ois=float(_ratio(cntR_ois, sumR_ois)),
        covering_best=float(_ratio(cntR_best_total, sumR_best_total)),
        pri_thr=pri_thr,
        voi_thr=voi_thr,
        pri_ods_t=float(thresholds[ip]),
        pri_ods=float(pri_thr[ip]),
        pri_ois=float(np.mean(best_pri)),
        voi_ods_t=float(thresholds[iv]),
        voi_ods=float(voi_thr[iv]),
        voi_ois=float(np.mean(best_voi)),
        per_image=per_image,
        best_index=firsts,
        extra=_extra_summary(results, i, firsts),
    )


@dataclass
class BoundarySummary:
    """Dataset-level boundary scores (the ``eval_bdry*`` files)."""

    thresholds: np.ndarray
    R_thr: np.ndarray
    P_thr: np.ndarray
    F_thr: np.ndarray
    ods_t: float
    ods_R: float
    ods_P: float
    ods_F: float
    ois_R: float
    ois_P: float
    ois_F: float
    ap: float
    per_image: list = field(default_factory=list)  # (bestT, bestR, bestP, bestF)
    #: Recall at 50% precision (:func:`recall_at_precision`; NaN when the curve never reaches it).
    r50: float = float("nan")

    def to_dict(self) -> dict:
        return {
            "ods": {"threshold": self.ods_t, "recall": self.ods_R, "precision": self.ods_P, "f": self.ods_F},
            "ois": {"recall": self.ois_R, "precision": self.ois_P, "f": self.ois_F},
            "ap": self.ap,
            "r50": None if np.isnan(self.r50) else self.r50,
        }


def _boundary_rounding(r):
    return type(r)(thresholds=_g(r.thresholds), cntR=_g(r.cntR), sumR=_g(r.sumR), cntP=_g(r.cntP), sumP=_g(r.sumP))


def collect_boundaries(results: list, *, official: bool = True) -> BoundarySummary:
    """Aggregate per-image boundary counts as ``collect_eval_bdry.m``.

    ODS: counts summed over images per threshold, best F with interpolation.
    OIS: every image's best discrete threshold (the first maximum of F), counts
    summed. AP: :func:`average_precision` of the dataset curve. Per image, the
    interpolated best (bestT, R, P, F).

    Parameters
    ----------
    results : list of ImageBoundaryResult
    official : bool, default True
        Round per-image values to six significant digits first, as the official
        pipeline's intermediate text files do.

    Examples
    --------
    >>> from segensemble.evaluation.benchmark import ImageBoundaryResult
    >>> r = ImageBoundaryResult(np.array([1.0, 2.0]), np.array([8., 5.]), np.array([10., 10.]),
    ...                         np.array([6., 5.]), np.array([10., 5.]))
    >>> s = collect_boundaries([r])
    >>> round(s.ois_F, 4), round(s.per_image[0][0], 4), round(s.per_image[0][3], 4)
    (0.6857, 1.4343, 0.718)
    """
    if not results:
        raise ValueError("results: expected at least one image")
    n = len(results[0].thresholds)
    tot = np.zeros((4, n))
    best = np.zeros(4)
    per_image = []
    thresholds = None
    for r in results:
        if official:
            r = _boundary_rounding(r)
        thresholds = r.thresholds
        R = _ratio(r.cntR, r.sumR)
        P = _ratio(r.cntP, r.sumP)
        F = fmeasure(R, P)
        per_image.append(interpolated_max_f(r.thresholds, R, P))
        tot += np.stack([r.cntR, r.sumR, r.cntP, r.sumP])
        k = int(np.argmax(F))
        best += [r.cntR[k], r.sumR[k], r.cntP[k], r.sumP[k]]
    R = _ratio(tot[0], tot[1])
    P = _ratio(tot[2], tot[3])
    F = fmeasure(R, P)
    bt, br, bp, bf = interpolated_max_f(thresholds, R, P)
    ois_R = float(_ratio(best[0], best[1]))
    ois_P = float(_ratio(best[2], best[3]))
    return BoundarySummary(
        thresholds=thresholds, R_thr=R, P_thr=P, F_thr=F,
        ods_t=bt, ods_R=br, ods_P=bp, ods_F=bf,
        ois_R=ois_R, ois_P=ois_P, ois_F=float(fmeasure(ois_R, ois_P)),
        ap=average_precision(R, P), per_image=per_image, r50=recall_at_precision(R, P),
    )
