"""End-to-end batch: segment, fuse and score every image of a dataset.

Per-image results are written as each image finishes (atomically), so an
interrupted run loses at most the images in flight and a re-run resumes.
"""

from __future__ import annotations

import json
import time
import zlib
from dataclasses import InitVar, dataclass, field, replace
from pathlib import Path

import numpy as np

from segensemble.atomic import atomic_write_text
from segensemble.batch.folders import batch_folder
from segensemble.batch.tasks import check_scheduler, input_digests, resume_tasks, settings_key
from segensemble.validation import check_distinct_paths, check_int, check_output_path, check_n_segments
from segensemble.errors import InputError, warn_deprecated
from segensemble.io import MAX_PIXELS, read_ground_truth, write_image, write_labels, write_segmentations
from segensemble.pipeline.runner import HIERARCHY_K, HIERARCHY_THRESHOLDS
from segensemble.batch.score import ScoreConfig, score_results
from segensemble.datasets import BSDS500, make_synthetic_dataset
from segensemble.evaluation.aggregate import collect_boundaries, collect_regions
from segensemble.evaluation.benchmark import ImageEvaluation, MachineResult, evaluate_image
from segensemble.pipeline.recipes import Recipe
from segensemble.pipeline.runner import run_recipe

__all__ = ["BenchConfig", "run_bench", "SCORE_KEYS", "HIERARCHY_THRESHOLDS", "HIERARCHY_K"]

SCORE_KEYS = ("covering", "pri", "voi", "f", "n_segments")


@dataclass
class BenchConfig:
    """What a bench run computes; its hash decides whether stored results are reused.

    Built from a recipe with :meth:`from_recipe`; ``hierarchy`` adds the
    hierarchy (a BSDS ``segs`` cell per image, scored for ODS / OIS / best).
    ``seed`` is the deprecated name of ``random_state``.
    """

    segmenters: list = field(default_factory=lambda: ["slic", "felzenszwalb"])
    method: str = "eac"
    n_segments: object = "auto"
    random_state: int = 0
    params: dict = field(default_factory=dict)
    postprocess: dict = field(default_factory=lambda: {"connected": False, "min_size": 0})
    hierarchy: bool = True
    recipe: str = ""
    max_pixels: int = MAX_PIXELS
    downscale: bool = False
    #: The recipe's image-aware settings, whether it runs in that frame, its boundary evidence, working scale and
    #: exposure (:class:`segensemble.pipeline.recipes.Recipe`); without them ``default@4``/``@5`` lose their
    #: fitted criterion.
    spatial: dict = field(default_factory=dict)
    image_aware: bool = True
    boundary: str | None = None
    working_pixels: int | None = None
    exposure: float | None = None
    seed: InitVar[int | None] = None

    def __post_init__(self, seed):
        if seed is not None:
            warn_deprecated("BenchConfig(seed=...)", "random_state")
            self.random_state = seed

    @classmethod
    def from_recipe(cls, recipe, *, random_state: int = 0, hierarchy: bool = True, max_pixels: int = MAX_PIXELS,
                    downscale: bool = False, seed: int | None = None) -> BenchConfig:
        if seed is not None:
            warn_deprecated("BenchConfig.from_recipe(seed=...)", "random_state")
            random_state = seed
        return cls(segmenters=list(recipe.segmenters), method=recipe.method, n_segments=recipe.n_segments,
                   random_state=random_state, params=dict(recipe.params), postprocess=dict(recipe.postprocess),
                   hierarchy=hierarchy, recipe=f"{recipe.name}@{recipe.version}", max_pixels=max_pixels,
                   downscale=downscale, spatial=dict(recipe.spatial), image_aware=recipe.image_aware,
                   boundary=recipe.boundary, working_pixels=recipe.working_pixels, exposure=recipe.exposure)

    def to_recipe(self):
        """The recipe this configuration applies."""
        name, _, version = self.recipe.partition("@")
        return Recipe(name=name or "bench", version=version, segmenters=tuple(self.segmenters), method=self.method,
                      n_segments=self.n_segments, params=dict(self.params), postprocess=dict(self.postprocess),
                      spatial=dict(self.spatial), image_aware=self.image_aware, boundary=self.boundary,
                      working_pixels=self.working_pixels, exposure=self.exposure)

    def key(self) -> str:
        return settings_key(self)


def _image_seed(seed: int, image_id: str) -> int:
    return int(np.random.SeedSequence([int(seed), zlib.crc32(image_id.encode())]).generate_state(1)[0])


def _evaluate(labels, gt) -> dict:
    return evaluate_image(MachineResult("segs", [labels]), gt).to_dict()


def _inputs(ds, split: str, image_id: str) -> dict:
    """The files an image's results are made from: the image and its ground truth."""
    return {"image": ds.image_path(split, image_id), "ground_truth": ds.ground_truth_path(split, image_id)}


def _bench_image(image_id: str, root: str, split: str, config: BenchConfig, out_dir: str) -> dict:
    """Segment, fuse and score one image (the recipe runner); write its fused PNG, hierarchy .mat and JSON."""
    start = time.perf_counter()
    ds = BSDS500(root)
    result = run_recipe(ds.image_path(split, image_id), config.to_recipe(), rng=config.random_state,
                        member_rng=_image_seed(config.random_state, image_id), hierarchy=config.hierarchy,
                        confidence="auto", max_pixels=config.max_pixels, downscale=config.downscale)
    original = result.downscaled_from
    gt_limit = config.max_pixels if original is None else original[0] * original[1]  # the image's own size
    gt = read_ground_truth(ds.ground_truth_path(split, image_id), max_pixels=gt_limit)
    if gt.shape != result.labels.shape:
        raise InputError(f"{ds.ground_truth_path(split, image_id)}: ground truth {gt.shape} "
                         f"does not match the image {result.labels.shape}")
    member_labels = [result.at_input_size(s.labels) for s in result.members]
    out = Path(out_dir)
    if result.levels:
        write_segmentations(out / "segs" / f"{image_id}.mat", result.levels)
    write_segmentations(out / "members" / f"{image_id}.mat", member_labels)
    if result.confidence is not None:
        write_image(out / "confidence" / f"{image_id}.png", result.confidence)
    record = {
        "id": image_id,
        "config": config.key(),
        "inputs": input_digests(_inputs(ds, split, image_id)),
        "members": {spec: _evaluate(lab, gt) for spec, lab in zip(config.segmenters, member_labels)},
        "fused": _evaluate(result.labels, gt),
        "n_segments": {"fused": int(result.labels.max()) + 1,
                       **{spec: int(len(np.unique(lab))) for spec, lab in zip(config.segmenters, member_labels)}},
        "n_atoms": result.ensemble.n_objects,
        "confidence": result.confidence_kind,
        "downscaled_from": None if original is None else list(original),
        "exposure_gain": round(result.exposure_gain, 4),
        "colourless": result.colourless,
        "seconds": time.perf_counter() - start,
    }
    write_labels(out / "fused" / f"{image_id}.png", result.labels)
    atomic_write_text(out / "per_image" / f"{image_id}.json", json.dumps(record, indent=1))
    return record


def _summarise(results: list[dict], config: BenchConfig) -> dict:
    """Dataset scores of every member and of the fused result, each as one segmentation per image."""
    table = {}
    for name in list(config.segmenters) + ["fused"]:
        evs = [ImageEvaluation.from_dict(r["fused"] if name == "fused" else r["members"][name]) for r in results]
        b = collect_boundaries([e.boundary for e in evs])
        g = collect_regions([e.region for e in evs])
        table[name] = {"covering": float(g.covering_ods), "pri": float(g.pri_ods), "voi": float(g.voi_ods),
                       "f": float(b.ods_F), "n_segments": float(np.mean([r["n_segments"][name] for r in results]))}
    return table


def _per_image_csv(results: list[dict], config: BenchConfig) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["image", "method", "covering", "pri", "voi", "recall", "precision", "n_segments", "seconds"])
    for r in results:
        for name in list(config.segmenters) + ["fused"]:
            sc = ImageEvaluation.from_dict(r["fused"] if name == "fused" else r["members"][name]).scores()
            w.writerow([r["id"], name] + [f"{sc[k]:.6f}" for k in ("covering", "pri", "voi", "recall", "precision")]
                       + [r["n_segments"][name], f"{r['seconds']:.3f}"])
    return buf.getvalue()


def run_bench(
    out_dir,
    *,
    bsds=None,
    split: str = "test",
    config: BenchConfig | None = None,
    n_jobs: int = 1,
    limit: int | None = None,
    synthetic_images: int = 10,
    progress=None,
    scheduler: str | None = None,
    jobs: int | None = None,
    worker_timeout: float = 60.0,
) -> dict:
    """Segment, fuse and score every image of a dataset.

    Parameters
    ----------
    out_dir : path
        Receives ``fused/<id>.png`` (one post-processed segmentation),
        ``members/<id>.mat`` (every member's segmentation, for the report),
        ``segs/<id>.mat`` (the hierarchy, with ``config.hierarchy``),
        ``per_image/<id>.json``, ``methods_per_image.csv`` (every member and the
        fused result per image), ``methods.txt`` (members
        vs fused), ``eval_hierarchy/`` (the official benchmark files of the
        hierarchy) and ``summary.json``. Images whose result is already there
        for the same configuration are skipped (resume).
    bsds : path, optional
        A BSDS500-layout dataset. None: the built-in synthetic dataset is
        generated (deterministically) into ``out_dir/dataset``.
    split : str, default 'test'
    config : BenchConfig, optional
        Segmenters, consensus method, number of regions, seed, post-processing
        (:meth:`BenchConfig.from_recipe`).
    n_jobs : int, default 1
        Parallel worker processes (``jobs``: its deprecated name).
    limit : int, optional
        Only the first ``limit`` images (sorted ids).
    synthetic_images : int, default 10
        Size of the synthetic dataset when ``bsds`` is None.
    progress : callable, optional
        Called as ``progress(done, total)`` after every image.
    scheduler : str, optional
        Address of a Dask distributed scheduler (``tcp://host:port``) to run
        the images on instead of local processes; workers need the same paths.
    worker_timeout : float, default 60
        With ``scheduler``: stop (RuntimeError) after this many seconds with no
        worker on the cluster; the finished images are kept for a re-run.

    Returns
    -------
    dict
        The summary written to ``summary.json``: configuration, per-method
        mean scores (``table``), number of images, failures.

    Examples
    --------
    >>> import tempfile
    >>> s = run_bench(tempfile.mkdtemp(), synthetic_images=2)
    >>> sorted(s["table"]), s["n_images"], "ods" in s["hierarchy"]["boundary"]
    (['felzenszwalb', 'fused', 'slic'], 2, True)
    """
    config = config or BenchConfig()
    if jobs is not None:
        warn_deprecated("run_bench(jobs=...)", "n_jobs")
        n_jobs = jobs
    config.to_recipe().validate()
    config = replace(config, random_state=check_int(config.random_state, "random_state", minimum=0,
                                                    maximum=2**32 - 1),
                     max_pixels=check_int(config.max_pixels, "max_pixels", minimum=1),
                     n_segments=check_n_segments(config.n_segments))  # the caller's config is never changed
    n_jobs = check_int(n_jobs, "n_jobs", minimum=1)
    out = Path(out_dir)
    check_output_path(out, "--out", folder=True)
    check_distinct_paths({"--out": out}, {"--bsds": bsds})
    check_scheduler(scheduler)
    with batch_folder(out, "--out"):
        if bsds is None:
            root = out / "dataset"
            marker = root / f".synthetic-{synthetic_images}"
            if not marker.is_file():
                make_synthetic_dataset(root, n_images=synthetic_images, split=split)
                atomic_write_text(marker, "complete\n")
        else:
            root = Path(bsds)
        ds = BSDS500(root)
        ids = ds.ids(split)
        if limit is not None:
            ids = ids[: check_int(limit, "limit", minimum=1)]
        if not ids:
            raise InputError(f"split: no images with ground truth in {ds.data} split {split!r}")
        required = ("fused/{id}.png", "members/{id}.mat") + (("segs/{id}.mat",) if config.hierarchy else ())
        done, failures, _ = resume_tasks(
            _bench_image, ids, (str(ds.data), split, config, str(out)), out, config.key(), required=required,
            inputs=lambda i: _inputs(ds, split, i), jobs=n_jobs, progress=progress, scheduler=scheduler,
            worker_timeout=worker_timeout)
        results = list(done.values())
        summary = {
            "dataset": str(ds.data),
            "split": split,
            "config": {**config.__dict__, "key": config.key()},
            "n_images": len(results),
            "table": _summarise(results, config) if results else {},
            "seconds_per_image": {"median": float(np.median([r["seconds"] for r in results])) if results else None},
            "failures": failures,
            "downscaled": sum(1 for r in results if r.get("downscaled_from")),
        }
        if results:
            atomic_write_text(out / "methods_per_image.csv", _per_image_csv(results, config))
            _write_method_table(out / "methods.txt", summary)
        if config.hierarchy and results and not failures:
            gt_dir = Path(ds.data) / "groundTruth" / split
            h = score_results(out / "segs", gt_dir, out / "eval_hierarchy", config=ScoreConfig(kind="segs"),
                              max_pixels=None,
                              n_jobs=n_jobs, subset=limit is not None, scheduler=scheduler)
            summary["hierarchy"] = {"region": h.get("region"), "boundary": h.get("boundary"),
                                    "official_files": str(out / "eval_hierarchy")}
        atomic_write_text(out / "summary.json", json.dumps(summary, indent=1))
        return summary


def _write_method_table(path, summary) -> None:
    lines = [f"{'method':<28} {'covering':>9} {'PRI':>7} {'VOI':>7} {'F':>7} {'regions':>8}"]
    for name, s in summary["table"].items():
        lines.append(f"{name:<28} {s['covering']:>9.4f} {s['pri']:>7.4f} {s['voi']:>7.4f} {s['f']:>7.4f} "
                     f"{s['n_segments']:>8.1f}")
    atomic_write_text(path, "\n".join(lines) + "\n")
