"""Batch Berkeley benchmark: score a folder of results against ground truth.

Per-image counts are written as each image finishes (``per_image/<id>.json``);
a re-run with the same settings skips finished images. At the end the official
output files, ``summary.json`` and ``per_image.csv`` are written.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, replace
from pathlib import Path

from segensemble.atomic import atomic_write_text
from segensemble.batch.folders import batch_folder
from segensemble.batch.tasks import check_scheduler, input_digests, resume_tasks, settings_key
from segensemble.validation import check_distinct_paths, check_int, check_output_path
from segensemble.errors import InputError, warn_deprecated
from segensemble.evaluation.benchmark import MAX_NTHRESH
from segensemble.io import MAX_PIXELS
from segensemble.io.groundtruth import edge_map_files, ground_truth_file, ground_truth_ids, read_truth
from segensemble.evaluation.aggregate import collect_boundaries, collect_regions
from segensemble.evaluation.benchmark import ImageEvaluation, KINDS, evaluate_image, load_result
from segensemble.evaluation.correspond import check_max_dist
from segensemble.evaluation.official import write_official_files

__all__ = ["ScoreConfig", "score_results", "RESULT_SUFFIXES", "protocol"]

RESULT_SUFFIXES = (".mat", ".png", ".npy", ".tif", ".tiff", ".pgm")
WHAT = ("all", "boundary", "region")


@dataclass
class ScoreConfig:
    """Benchmark settings; their hash decides whether stored per-image results are reused."""

    nthresh: int = 99
    what: str = "all"
    kind: str = "auto"
    max_dist: float = 0.0075
    thin: bool = True
    nms: bool = False

    def key(self) -> str:
        return settings_key(self)


def protocol(config: ScoreConfig) -> dict:
    """The protocol a score was made with, in words (``score`` writes it into summary.json beside the numbers).

    Examples
    --------
    >>> protocol(ScoreConfig())["name"]
    'BSDS500 official benchmark (Arbelaez et al., TPAMI 2011)'
    >>> protocol(ScoreConfig(nms=True, max_dist=0.011))["name"]
    'edge-detector evaluation with NMS first (Structured Edges / HED), NYUDv2 matching radius'
    """
    nms = "edge-detector evaluation with NMS first (Structured Edges / HED)" if config.nms else None
    if config.max_dist == 0.0075:
        name = nms or "BSDS500 official benchmark (Arbelaez et al., TPAMI 2011)"
    else:
        radius = "NYUDv2 matching radius" if config.max_dist == 0.011 else f"matching radius {config.max_dist:g}"
        name = f"{nms or 'BSDS500 benchmark'}, {radius}"
    return {
        "name": name,
        "thresholds": f"{config.nthresh} at k / {config.nthresh + 1} for soft maps and ucm2; one per segmentation "
                      "of a 'segs' cell",
        "thinning": "every thresholded map thinned (bwmorph thin)" if config.thin else "maps used as given",
        "nms": "edge_map_nms: [1 2 1]/4 smoothing, non-maximum suppression along the normal" if config.nms
               else "none",
        "max_dist": config.max_dist,
        "matching": "exact optimal assignment (the official correspondPixels approximates it: per-image counts "
                    "within 0.3%, dataset F within 0.0005)",
        "aggregation": "official: per-image counts at 6 significant digits; ODS F interpolated between thresholds; "
                       "AP on recalls 0:0.01:1; R50 at 50% precision as edgesEvalDir",
    }


def _result_path(results_dir: Path, image_id: str) -> Path | None:
    for suffix in RESULT_SUFFIXES:
        p = results_dir / f"{image_id}{suffix}"
        if p.is_file():
            return p
    return None


def _find_result(results_dir: Path, image_id: str) -> Path:
    path = _result_path(results_dir, image_id)
    if path is None:
        raise InputError(f"{results_dir / image_id}.*: no result file for image {image_id!r}")
    return path


def _input_files(result: Path, truth: Path) -> dict:
    """The files an image's scores are made from: its result and its ground truth (every edge map of a folder)."""
    if truth.is_dir():  # one edge map per annotator: the files read_edge_ground_truth reads
        return {"result": result, **{f"ground_truth/{p.name}": p for p in edge_map_files(truth)}}
    return {"result": result, "ground_truth": truth}


def _inputs(results_dir: Path, gt_dir: Path, image_id: str) -> dict | None:
    """:func:`_input_files` of an image (None when its result or ground truth is missing)."""
    path, truth = _result_path(results_dir, image_id), ground_truth_file(gt_dir, image_id)
    return None if path is None or truth is None else _input_files(path, truth)


def _score_image(image_id: str, results_dir: str, gt_dir: str, config: ScoreConfig, out_dir: str,
                 max_pixels: int | None) -> dict:
    path = _find_result(Path(results_dir), image_id)
    gt_path = ground_truth_file(gt_dir, image_id)
    if gt_path is None:
        raise InputError(f"{Path(gt_dir) / image_id}.*: no ground truth for image {image_id!r}")
    result = load_result(path, config.kind, max_pixels=max_pixels)
    gt = read_truth(gt_path, max_pixels=max_pixels)
    if gt.shape != result.shape:
        raise InputError(f"{path}: shape {result.shape} does not match the ground truth {gt_path} {gt.shape}")
    ev = evaluate_image(
        result, gt, nthresh=config.nthresh, boundary=config.what in ("all", "boundary"),
        region=config.what in ("all", "region"), max_dist=config.max_dist, thin=config.thin, nms=config.nms,
    )
    record = {"id": image_id, "config": config.key(), "result": str(path),
              "inputs": input_digests(_input_files(path, gt_path)), "evaluation": ev.to_dict()}
    atomic_write_text(Path(out_dir) / "per_image" / f"{image_id}.json", json.dumps(record))
    return record


def _per_image_csv(ids, evaluations, bsum, rsum) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head, extra = ["index", "id"], []
    if bsum:
        head += ["bdry_threshold", "bdry_recall", "bdry_precision", "bdry_f"]
    if rsum:
        head += ["cover_threshold", "covering", "pri_best", "voi_best"]
        extra = [m for m in ("gce", "lce", "bde") if getattr(evaluations[0].region, m) is not None]
        head += [f"{m}_at_cover" for m in extra]
    w.writerow(head)
    for k, image_id in enumerate(ids):
        row = [k + 1, image_id]
        if bsum:
            row += [f"{x:.6g}" for x in bsum.per_image[k]]
        if rsum:
            reg = evaluations[k].region
            row += [f"{rsum.per_image[k][0]:.6g}", f"{rsum.per_image[k][1]:.6g}",
                    f"{reg.pri.max():.6g}", f"{reg.voi.min():.6g}"]
            row += [f"{getattr(reg, m)[rsum.best_index[k]]:.6g}" for m in extra]  # at cover_threshold
        w.writerow(row)
    return buf.getvalue()


def score_results(
    results_dir, gt_dir, out_dir, *, config: ScoreConfig | None = None, n_jobs: int = 1,
    subset: bool = False, progress=None, scheduler: str | None = None, max_pixels: int | None = MAX_PIXELS,
    jobs: int | None = None,
) -> dict:
    """Score every result file against its ground truth; write the official files.

    Parameters
    ----------
    results_dir : path
        ``<id>.mat`` (``segs`` or ``ucm2``), ``<id>.png`` / ``.npy`` label maps,
        or soft boundary PNGs with ``config.kind='boundary'``.
    gt_dir : path
        Ground truth, its ids define the images to score: ``<id>.mat`` (BSDS),
        or edge maps ``<id>.png`` / a folder ``<id>/`` of one per annotator
        (boundary benchmark only; :mod:`segensemble.io.groundtruth`).
    out_dir : path
        Receives ``per_image/<id>.json``, the official ``eval_*.txt`` files,
        ``summary.json`` and ``per_image.csv``.
    config : ScoreConfig, optional
        ``nthresh`` (99), ``what`` ('all' | 'boundary' | 'region'), ``kind``
        ('auto' | 'segs' | 'ucm2' | 'boundary'), ``max_dist`` (matching
        radius as a fraction of the diagonal: 0.0075 as BSDS, 0.011 as the
        NYUDv2 papers), ``thin`` (True: thin machine boundaries first; False for
        maps already one pixel wide), ``nms`` (False: apply
        :func:`segensemble.evaluation.nms.edge_map_nms` to soft maps first).
    n_jobs : int, default 1
        Worker processes (``jobs``: its deprecated name).
    subset : bool, default False
        Score only the ids that have a result file (otherwise a missing result
        is a failure).
    progress : callable, optional
        ``progress(done, total)`` after every image.
    scheduler : str, optional
        Dask distributed scheduler address to score on (workers need the same paths).
    max_pixels : int or None, default :data:`segensemble.io.MAX_PIXELS`
        Result and ground-truth files declaring larger images are refused
        (as failures of their image) before they are decoded.

    Returns
    -------
    dict
        The summary (also written to ``summary.json``), with ``failures``
        mapping image ids to one-line messages.

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.datasets import make_synthetic_dataset
    >>> from segensemble.io import read_ground_truth, write_labels
    >>> root = make_synthetic_dataset(tempfile.mkdtemp(), n_images=2, shape=(30, 40))
    >>> gt_dir = root / "data" / "groundTruth" / "test"
    >>> res = tempfile.mkdtemp()
    >>> for p in sorted(gt_dir.glob("*.mat")):
    ...     _ = write_labels(os.path.join(res, p.stem + ".png"), read_ground_truth(p).segmentations[0])
    >>> s = score_results(res, gt_dir, tempfile.mkdtemp())
    >>> s["n_images"], s["boundary"]["ods"]["f"] > 0.6, s["failures"]
    (2, True, {})
    """
    config = config or ScoreConfig()
    if config.what not in WHAT:
        raise InputError(f"what: expected one of {WHAT}, got {config.what!r}")
    if config.kind not in KINDS:
        raise InputError(f"kind: expected one of {KINDS}, got {config.kind!r}")
    if config.kind == "boundary" and config.what != "boundary":
        raise InputError("what: soft boundary maps have no regions; use what='boundary'")
    config = replace(config, nthresh=check_int(config.nthresh, "nthresh", minimum=1, maximum=MAX_NTHRESH))
    if config.nms and config.kind != "boundary":
        raise InputError(f"nms: non-maximum suppression applies to soft boundary maps (kind='boundary'), "
                         f"got kind={config.kind!r}")
    check_max_dist(config.max_dist)
    if jobs is not None:
        warn_deprecated("score_results(jobs=...)", "n_jobs")
        n_jobs = jobs
    n_jobs = check_int(n_jobs, "n_jobs", minimum=1)
    results_dir, gt_dir, out = Path(results_dir), Path(gt_dir), Path(out_dir)
    check_output_path(out, "--out", folder=True)
    check_distinct_paths({"--out": out}, {"RESULTS": results_dir, "--gt": gt_dir})
    check_scheduler(scheduler)
    with batch_folder(out, "--out"):
        for name, d in (("results_dir", results_dir), ("gt_dir", gt_dir)):
            if not d.is_dir():
                raise InputError(f"{name}: {d} is not a folder")
        ids = ground_truth_ids(gt_dir)
        if config.what != "boundary" and ids and not any((gt_dir / f"{i}.mat").is_file() for i in ids):
            if config.what == "region":
                raise InputError(f"what: {gt_dir} holds edge maps only, which have no regions; use what='boundary'")
            config = replace(config, what="boundary")  # edge-map ground truth: 'all' is the boundary benchmark
        if subset:
            have = {p.stem for p in results_dir.iterdir() if p.suffix.lower() in RESULT_SUFFIXES}
            ids = [i for i in ids if i in have]
        if not ids:
            raise InputError(f"gt_dir: no ground truth (.mat, edge maps){' with a result' if subset else ''} in "
                             f"{gt_dir}")
        done, failures, _ = resume_tasks(
            _score_image, ids, (str(results_dir), str(gt_dir), config, str(out), max_pixels), out, config.key(),
            inputs=lambda i: _inputs(results_dir, gt_dir, i), jobs=n_jobs, progress=progress, scheduler=scheduler)
        scored = list(done)
        summary = {
            "results": str(results_dir), "ground_truth": str(gt_dir),
            "config": {**config.__dict__, "key": config.key()}, "protocol": protocol(config),
            "n_images": len(scored), "failures": failures,
        }
        if scored:
            evs = [ImageEvaluation.from_dict(done[i]["evaluation"]) for i in scored]
            counts = {len(e.boundary.thresholds if e.boundary else e.region.thresholds) for e in evs}
            if len(counts) > 1:
                raise InputError(
                    f"results: images have different numbers of thresholds {sorted(counts)}; "
                    "the benchmark needs the same number for every image"
                )
            bsum = collect_boundaries([e.boundary for e in evs]) if evs[0].boundary is not None else None
            rsum = collect_regions([e.region for e in evs]) if evs[0].region is not None else None
            write_official_files(out, bsum, rsum)
            atomic_write_text(out / "per_image.csv", _per_image_csv(scored, evs, bsum, rsum))
            if bsum:
                summary["boundary"] = bsum.to_dict()
                summary["pr_curve"] = {"threshold": bsum.thresholds.tolist(), "recall": bsum.R_thr.tolist(),
                                       "precision": bsum.P_thr.tolist()}
            if rsum:
                summary["region"] = rsum.to_dict()
            summary["ids"] = scored
        atomic_write_text(out / "summary.json", json.dumps(summary, indent=1))
        return summary
