"""End-to-end batch: segment, fuse and score every image of a dataset.

Per-image results are written as each image finishes (atomically), so an
interrupted run loses at most the images in flight and a re-run resumes.
"""

from __future__ import annotations

import json
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from segensemble._atomic import atomic_write_text
from segensemble._batch import load_finished, run_tasks, settings_key
from segensemble._validation import check_int, check_n_segments
from segensemble.errors import InputError

__all__ = ["BenchConfig", "run_bench", "DEFAULT_SEGMENTERS", "SCORE_KEYS"]

#: Starter ensemble of the batch bench.
DEFAULT_SEGMENTERS = ("slic", "felzenszwalb")
SCORE_KEYS = ("pri", "voi", "covering", "n_segments")


@dataclass
class BenchConfig:
    """What a bench run computes; its hash decides whether stored results are reused."""

    segmenters: list = field(default_factory=lambda: list(DEFAULT_SEGMENTERS))
    method: str = "eac"
    n_segments: object = "auto"
    seed: int = 0
    params: dict = field(default_factory=dict)

    def key(self) -> str:
        return settings_key(self)


def _image_seed(seed: int, image_id: str) -> int:
    return int(np.random.SeedSequence([int(seed), zlib.crc32(image_id.encode())]).generate_state(1)[0])


def _bench_image(image_id: str, root: str, split: str, config: BenchConfig, out_dir: str) -> dict:
    """Segment, fuse and score one image; write its fused PNG and JSON."""
    from segensemble.datasets import BSDS500
    from segensemble.evaluation.regions import region_scores
    from segensemble.io import write_labels
    from segensemble.pipeline import fuse, run_segmenters

    start = time.perf_counter()
    ds = BSDS500(root)
    image = ds.image(split, image_id)
    gt = ds.ground_truth(split, image_id)
    if gt.segmentations[0].shape != image.shape[:2]:
        raise InputError(
            f"{ds.ground_truth_path(split, image_id)}: ground truth {gt.segmentations[0].shape} "
            f"does not match the image {image.shape[:2]}"
        )
    segs = run_segmenters(image, config.segmenters, rng=_image_seed(config.seed, image_id))
    fused, est, ens = fuse(
        segs, config.method, config.n_segments, image=image, random_state=config.seed,
        return_estimator=True, **config.params,
    )
    members = {spec: region_scores(s.labels, gt) for spec, s in zip(config.segmenters, segs)}
    result = {
        "id": image_id,
        "config": config.key(),
        "members": members,
        "fused": region_scores(fused, gt),
        "n_atoms": ens.n_objects,
        "seconds": time.perf_counter() - start,
    }
    out = Path(out_dir)
    write_labels(out / "fused" / f"{image_id}.png", fused)
    atomic_write_text(out / "per_image" / f"{image_id}.json", json.dumps(result, indent=1))
    return result


def _summarise(results: list[dict], config: BenchConfig) -> dict:
    names = list(config.segmenters) + ["fused"]
    table = {}
    for name in names:
        rows = [r["fused"] if name == "fused" else r["members"][name] for r in results]
        table[name] = {k: float(np.mean([row[k] for row in rows])) for k in SCORE_KEYS}
    return table


def run_bench(
    out_dir,
    *,
    bsds=None,
    split: str = "test",
    config: BenchConfig | None = None,
    jobs: int = 1,
    limit: int | None = None,
    synthetic_images: int = 10,
    progress=None,
) -> dict:
    """Segment, fuse and score every image of a dataset.

    Parameters
    ----------
    out_dir : path
        Receives ``fused/<id>.png``, ``per_image/<id>.json`` and
        ``summary.json``. Images whose result is already there for the same
        configuration are skipped (resume).
    bsds : path, optional
        A BSDS500-layout dataset. None: the built-in synthetic dataset is
        generated (deterministically) into ``out_dir/dataset``.
    split : str, default 'test'
    config : BenchConfig, optional
        Segmenters, consensus method, number of regions, seed.
    jobs : int, default 1
        Parallel worker processes.
    limit : int, optional
        Only the first ``limit`` images (sorted ids).
    synthetic_images : int, default 10
        Size of the synthetic dataset when ``bsds`` is None.
    progress : callable, optional
        Called as ``progress(done, total)`` after every image.

    Returns
    -------
    dict
        The summary written to ``summary.json``: configuration, per-method
        mean scores (``table``), number of images, failures.

    Examples
    --------
    >>> import tempfile
    >>> s = run_bench(tempfile.mkdtemp(), synthetic_images=2)
    >>> sorted(s["table"]), s["n_images"]
    (['felzenszwalb', 'fused', 'slic'], 2)
    """
    from segensemble import consensus, segmenters
    from segensemble.datasets import BSDS500, make_synthetic_dataset
    from segensemble.pipeline import parse_segmenter_spec

    config = config or BenchConfig()
    config.n_segments = check_n_segments(config.n_segments)
    consensus.get(config.method)
    for spec in config.segmenters:
        segmenters.get(parse_segmenter_spec(spec)[0])
    jobs = check_int(jobs, "jobs", minimum=1)
    out = Path(out_dir)
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
    done = load_finished(out, ids, config.key(), required=("fused/{id}.png",))
    todo = [i for i in ids if i not in done]
    if progress:
        progress(len(done), len(ids))
    new, failures = run_tasks(
        _bench_image, todo, (str(ds.data), split, config, str(out)), jobs=jobs, progress=progress,
        done_before=len(done),
    )
    done.update(new)
    results = [done[i] for i in ids if i in done]
    summary = {
        "dataset": str(ds.data),
        "split": split,
        "config": {**config.__dict__, "key": config.key()},
        "n_images": len(results),
        "table": _summarise(results, config) if results else {},
        "failures": failures,
    }
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=1))
    return summary
