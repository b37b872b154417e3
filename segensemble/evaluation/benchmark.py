"""Per-image Berkeley benchmark on any kind of machine result.

Machine results come in the four kinds of the BSDS500 benchmark:

- ``segs``: a list of segmentations (threshold i = segmentation i); a single
  label map is a list of one;
- ``ucm2``: a double-size ultrametric contour map; thresholds
  ``linspace(1/(n+1), 1-1/(n+1), n)``; boundaries ``ucm2[2::2, 2::2] >= t``,
  regions the 4-connected components of ``ucm2 <= t`` sampled at ``[1::2, 1::2]``;
- ``boundary``: a soft boundary map in [0, 1] (PNG / 255); boundaries ``pb >= t``
  (no regions).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from skimage.measure import label as cc_label

from segensemble.io import (MAX_PIXELS, mat_variable_names, read_boundary_map, read_labels, read_segmentations,
                            read_ucm2)

from segensemble.validation import check_int
from segensemble.errors import FileFormatError, InputError
from segensemble.memo import ImageMemo, image_key
from segensemble.evaluation.aggregate import ImageRegionResult, fmeasure, image_region_result
from segensemble.evaluation.boundaries import seg2bdry
from segensemble.evaluation.sweep import boundary_counts_sweep
from segensemble.evaluation.correspond import check_max_dist
from segensemble.evaluation.regions import region_counts

from segensemble.evaluation.consistency import boundary_maps
from segensemble.evaluation.nms import edge_map_nms
__all__ = [
    "KINDS",
    "MachineResult",
    "ImageBoundaryResult",
    "ImageEvaluation",
    "load_result",
    "soft_map_signs",
    "evaluate_image",
    "MAX_NTHRESH",
]

KINDS = ("auto", "segs", "ucm2", "boundary")
#: Most thresholds of one evaluation (the official benchmark uses 99); time and memory grow with it.
MAX_NTHRESH = 1000
#: Pixels of the thresholded maps swept together (the boundary benchmark holds them at once): all 99 maps of a
#: BSDS500 image, a chunk of them for a large image.
SWEEP_PIXELS = 64_000_000
#: The last ground truth's boundary maps and distance transforms (by content): a bench scores an image's members
#: and fused result, nine segmentations, against one ground truth.
_GT_MAPS = ImageMemo()


@dataclass
class MachineResult:
    """A machine result of one image: ``kind`` in ('segs', 'ucm2', 'boundary') and its data."""

    kind: str
    data: object

    @property
    def shape(self) -> tuple[int, int]:
        if self.kind == "segs":
            return self.data[0].shape
        if self.kind == "ucm2":
            return ((self.data.shape[0] - 1) // 2, (self.data.shape[1] - 1) // 2)
        return self.data.shape

    def thresholds(self, nthresh: int) -> np.ndarray:
        """Thresholds as the benchmark uses them (1..n for segs)."""
        if self.kind == "segs":
            return np.arange(1, len(self.data) + 1, dtype=np.float64)
        return np.linspace(1.0 / (nthresh + 1), 1.0 - 1.0 / (nthresh + 1), nthresh)

    def boundary_map(self, t: float, index: int) -> np.ndarray:
        if self.kind == "segs":
            return seg2bdry(self.data[index])
        pb = self.data[2::2, 2::2] if self.kind == "ucm2" else self.data
        return pb >= t

    def regions(self, t: float, index: int) -> np.ndarray:
        if self.kind == "segs":
            return self.data[index]
        if self.kind == "ucm2":
            return cc_label(self.data <= t, connectivity=1, background=0)[1::2, 1::2]
        raise InputError("what: the region benchmark needs segmentations or a ucm2, not a soft boundary map")


def load_result(path, kind: str = "auto", *, max_pixels=MAX_PIXELS) -> MachineResult:
    """Read a machine result file.

    Parameters
    ----------
    path : path
        ``.mat`` with ``segs`` or ``ucm2``; ``.png``/``.npy``/``.tif`` label
        map; or, with ``kind='boundary'``, a soft boundary map (8- or 16-bit image, or float ``.npy``;
        :func:`segensemble.io.read_boundary_map`).
    kind : {'auto', 'segs', 'ucm2', 'boundary'}
        ``'auto'``: ``.mat`` files by their variable, other files as label
        maps — refused when they look like an 8-bit edge map
        (:func:`soft_map_signs`; give the kind explicitly then).
    max_pixels : int or None, default :data:`segensemble.io.MAX_PIXELS`
        Refuse a file that declares a larger image, before decoding it.

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.io import write_labels
    >>> p = write_labels(os.path.join(tempfile.mkdtemp(), "s.png"), np.eye(3, dtype=int))
    >>> load_result(p).kind
    'segs'
    """
    if kind not in KINDS:
        raise InputError(f"kind: expected one of {KINDS}, got {kind!r}")
    path = Path(path)
    if kind == "boundary":
        return MachineResult("boundary", read_boundary_map(path, max_pixels=max_pixels))
    if path.suffix.lower() == ".mat":
        if kind == "auto":
            names = mat_variable_names(path, max_pixels)
            if "ucm2" in names:
                kind = "ucm2"
            elif "segs" in names:
                kind = "segs"
            else:
                raise FileFormatError(f"{path}: expected a variable 'segs' or 'ucm2', found {sorted(names)}")
        if kind == "ucm2":
            return MachineResult("ucm2", read_ucm2(path, max_pixels=max_pixels))
        return MachineResult("segs", read_segmentations(path, max_pixels=max_pixels))
    if kind == "ucm2":
        raise FileFormatError(f"{path}: a ucm2 result must be a .mat file with a 'ucm2' variable")
    labels = read_labels(path, max_pixels=max_pixels)
    signs = soft_map_signs(labels) if kind == "auto" else None
    if signs:
        raise InputError(f"{path}: looks like a soft boundary map ({signs}), not a label map; score it with "
                         "--kind boundary (kind='boundary'), or --kind segs (kind='segs') if it is a label map")
    return MachineResult("segs", [labels])


def soft_map_signs(labels) -> str | None:
    """Why a label map read with ``kind='auto'`` looks like an 8-bit edge map instead (None: it does not).

    An edge detector's map saved as an 8-bit image has tens to 256 grey
    levels that change along every contour: among neighbouring pixels that
    are both off the most common value, most pairs differ (57-78% on 8-bit
    maps of the learned detector, thinned or raw). In a label map such pairs
    lie inside one region (SLIC with 3 000 regions: 19%; masks: 2%).

    Examples
    --------
    >>> soft_map_signs(np.repeat(np.arange(40), 5)[None].repeat(10, axis=0)) is None  # 40 bands of 5 pixels
    True
    >>> soft_map_signs(np.arange(100).reshape(10, 10) % 60)
    '60 grey levels, neighbouring non-background pixels differ in 100% of pairs'
    """
    a = np.asarray(labels)
    vals, counts = np.unique(a, return_counts=True)
    if not 32 <= len(vals) <= 256:
        return None
    off = a != vals[np.argmax(counts)]
    both = np.concatenate([(off[:, :-1] & off[:, 1:]).ravel(), (off[:-1] & off[1:]).ravel()])
    differ = np.concatenate([(a[:, :-1] != a[:, 1:]).ravel(), (a[:-1] != a[1:]).ravel()])
    share = differ[both].mean() if both.any() else 0.0
    return f"{len(vals)} grey levels, neighbouring non-background pixels differ in {share:.0%} of pairs" \
        if share >= 0.4 else None


@dataclass
class ImageBoundaryResult:
    """Boundary counts of one image at every threshold (``*_ev1.txt``)."""

    thresholds: np.ndarray
    cntR: np.ndarray
    sumR: np.ndarray
    cntP: np.ndarray
    sumP: np.ndarray

    def to_dict(self) -> dict:
        return {k: v.tolist() for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, d: dict) -> ImageBoundaryResult:
        return cls(**{k: np.asarray(v, dtype=np.float64) for k, v in d.items()})


@dataclass
class ImageEvaluation:
    """Boundary and/or region results of one image."""

    boundary: ImageBoundaryResult | None = None
    region: ImageRegionResult | None = None

    def to_dict(self) -> dict:
        return {
            "boundary": None if self.boundary is None else self.boundary.to_dict(),
            "region": None if self.region is None else self.region.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict) -> ImageEvaluation:
        return cls(
            boundary=None if d.get("boundary") is None else ImageBoundaryResult.from_dict(d["boundary"]),
            region=None if d.get("region") is None else ImageRegionResult.from_dict(d["region"]),
        )

    def scores(self, k: int = 0) -> dict:
        """Scores at threshold ``k``: covering, PRI, VOI, GCE, LCE, BDE, Fop, boundary recall, precision and F.

        Examples
        --------
        >>> from segensemble.io import GroundTruth
        >>> gt = GroundTruth([np.array([[0, 0, 1, 1]] * 4)], [np.zeros((4, 4), bool)])
        >>> ev = evaluate_image(MachineResult("segs", [np.array([[0, 0, 1, 1]] * 4)]), gt)
        >>> ev.scores()["covering"], ev.scores()["pri"]
        (1.0, 1.0)
        """
        out = {}
        if self.boundary is not None:
            b = self.boundary
            R = b.cntR[k] / b.sumR[k] if b.sumR[k] else 0.0
            P = b.cntP[k] / b.sumP[k] if b.sumP[k] else 0.0
            out.update(recall=float(R), precision=float(P), f=float(fmeasure(R, P)))
        if self.region is not None:
            r = self.region
            out.update(covering=float(r.cntR[k] / r.sumR[k]), pri=float(r.pri[k]), voi=float(r.voi[k]))
            out.update({m: float(getattr(r, m)[k]) for m in ("gce", "lce", "bde") if getattr(r, m) is not None})
            if r.fop_precision is not None:
                p, rc = float(r.fop_precision[k]), float(r.fop_recall[k])
                out.update(fop=float(fmeasure(rc, p)), fop_precision=p, fop_recall=rc)
        return out


def evaluate_image(
    result: MachineResult,
    gt,
    *,
    nthresh: int = 99,
    boundary: bool = True,
    region: bool = True,
    max_dist: float = 0.0075,
    thin: bool = True,
    nms: bool = False,
) -> ImageEvaluation:
    """Berkeley benchmark of one image at every threshold.

    Parameters
    ----------
    result : MachineResult
        See :func:`load_result`.
    gt : GroundTruth
        Human segmentations and boundaries.
    nthresh : int, default 99
        Number of thresholds for ucm2 and soft boundary maps (ignored for
        segs: one threshold per segmentation), 1 to :data:`MAX_NTHRESH`.
    boundary, region : bool
        Which benchmarks to run.
    max_dist : float, default 0.0075
        Matching radius as a fraction of the image diagonal (0.011: the NYUDv2 protocol).
    thin : bool, default True
        Thin the machine boundaries at every threshold first (False: maps already one pixel wide).
    nms : bool, default False
        Apply :func:`segensemble.evaluation.nms.edge_map_nms` to a soft boundary map first (edge detectors' outputs).

    Returns
    -------
    ImageEvaluation

    Examples
    --------
    >>> from segensemble.io import GroundTruth
    >>> seg = np.zeros((20, 20), int); seg[:, 10:] = 1
    >>> gt = GroundTruth([seg + 1], [seg2bdry(seg)])
    >>> ev = evaluate_image(MachineResult("segs", [seg]), gt)
    >>> ev.boundary.cntR.tolist(), ev.region.cntR.tolist()
    ([20.0], [400.0])
    """
    shape = result.shape
    if region and not gt.segmentations:
        raise InputError("gt: edge-map ground truth has no regions; run the boundary benchmark only "
                         "(region=False; --what boundary)")
    if gt.shape != shape:
        raise InputError(f"result: shape {shape} does not match the ground truth {gt.shape}")
    if nms:
        if result.kind != "boundary":
            raise InputError(f"nms: non-maximum suppression applies to soft boundary maps (kind 'boundary'), "
                             f"got a {result.kind!r} result")
        result = MachineResult("boundary", edge_map_nms(result.data))
    check_int(nthresh, "nthresh", minimum=1, maximum=MAX_NTHRESH)
    check_max_dist(max_dist)
    thresholds = result.thresholds(nthresh)
    out = ImageEvaluation()
    if boundary:  # the whole sweep at once (boundary_counts at every threshold, sharing the work), in chunks
        counts, step = [], max(1, SWEEP_PIXELS // (shape[0] * shape[1]))
        for start in range(0, len(thresholds), step):
            maps = [result.boundary_map(thresholds[k], k) for k in range(start, min(start + step, len(thresholds)))]
            counts += boundary_counts_sweep(maps, gt.boundaries, max_dist=max_dist, thin=thin)
        c = np.asarray(counts, dtype=np.float64).reshape(-1, 4)
        out.boundary = ImageBoundaryResult(thresholds, c[:, 0], c[:, 1], c[:, 2], c[:, 3])
    if region:
        counts, cache, gt_maps = [], {}, _gt_boundary_maps(gt.segmentations)
        for k, t in enumerate(thresholds):
            seg = result.regions(t, k)
            key = seg.tobytes()
            if key not in cache:
                cache[key] = region_counts(seg, gt.segmentations, gt_maps=gt_maps)
            counts.append(cache[key])
        out.region = image_region_result(thresholds, counts)
    return out


def _gt_boundary_maps(segmentations) -> list:
    """:func:`~segensemble.evaluation.consistency.boundary_maps` of the human segmentations, remembered."""
    segs = [np.ascontiguousarray(s) for s in segmentations]
    return _GT_MAPS.get(tuple(image_key(s) for s in segs), "boundary_maps", lambda: boundary_maps(segs),
                        pixels=segs[0].size)
