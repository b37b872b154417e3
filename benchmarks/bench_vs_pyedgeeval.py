"""Our boundary benchmark side by side with pyEdgeEval on the same soft boundary maps and the same workers.

Both tools run the same per-image work — thresholds ``linspace(1/(n+1), 1-1/(n+1), n)``, thinning at every
threshold, pixel correspondence within 0.0075 of the diagonal against every annotator — on

- the five official gPb soft boundary maps of the benchmark (``shared/bsds-bench/png``, already thin: no NMS);
- generated detector-like maps on BSDS500 val images (every annotator's boundaries blurred into ridges a few
  pixels wide, plus smooth clutter), with each tool's non-maximum suppression first.

Each tool runs ``--runs`` times over the same maps with a pool of ``--workers`` processes; the table gives the
wall time, seconds per image, ODS / OIS / AP (both tools' per-image counts aggregated by the same collector,
so only the per-image engines differ) and the run-to-run variation (largest per-image F difference between
runs). pyEdgeEval is an optional dependency of this script only (``pip install pyEdgeEval``).

Usage::

    python benchmarks/bench_vs_pyedgeeval.py [--workers 2] [--generated 10] [--nthresh 99] [--runs 2]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import multiprocessing
import time
from pathlib import Path

import numpy as np
from scipy import ndimage

from segensemble.datasets import BSDS500
from segensemble.evaluation.aggregate import collect_boundaries, fmeasure
from segensemble.evaluation.benchmark import ImageBoundaryResult, MachineResult, evaluate_image
from segensemble.io import read_boundary_map, read_ground_truth

HERE = Path(__file__).resolve().parent


def _generated_map(gt, seed: int) -> np.ndarray:
    """A detector-like soft map: the annotators' boundaries as blurred ridges of uneven strength, plus false
    ridges (the edges of a random smooth field, like texture)."""
    rng = np.random.default_rng(seed)
    votes = np.mean([b.astype(np.float64) for b in gt.boundaries], axis=0)
    strength = ndimage.gaussian_filter(rng.random(votes.shape), 8)
    strength = (strength - strength.min()) / (np.ptp(strength) + 1e-12)
    ridge = ndimage.gaussian_filter(votes, 1.5) * 6 * (0.3 + 0.7 * strength)
    field = ndimage.gaussian_filter(rng.random(votes.shape), 3)
    clutter = ndimage.gaussian_gradient_magnitude(field, 1.5)
    clutter = clutter / (clutter.max() + 1e-12) * 0.8
    return np.clip(ridge + clutter, 0, 1)


def _ours(task):
    pb, boundaries, nthresh, nms = task
    from segensemble.io import GroundTruth

    ev = evaluate_image(MachineResult("boundary", pb), GroundTruth([], boundaries), nthresh=nthresh, region=False,
                        nms=nms)
    b = ev.boundary
    return np.stack([b.cntR, b.sumR, b.cntP, b.sumP])


def _theirs(task):
    pb, boundaries, nthresh, nms = task
    from pyEdgeEval.common.binary_label import evaluate_boundaries_threshold_multiple_gts

    thresholds = np.linspace(1.0 / (nthresh + 1), 1.0 - 1.0 / (nthresh + 1), nthresh)
    cr, sr, cp, sp = evaluate_boundaries_threshold_multiple_gts(
        thresholds, pb, [b.astype(np.uint8) for b in boundaries], max_dist=0.0075, apply_thinning=True,
        apply_nms=nms)
    return np.stack([cr, sr, cp, sp]).astype(np.float64)


def _run(fn, tasks, workers):
    t = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        counts = pool.map(fn, tasks, chunksize=1)
    return time.perf_counter() - t, counts


def _scores(counts, nthresh):
    thresholds = np.linspace(1.0 / (nthresh + 1), 1.0 - 1.0 / (nthresh + 1), nthresh)
    s = collect_boundaries([ImageBoundaryResult(thresholds, *c) for c in counts], official=False)
    return s.ods_F, s.ois_F, s.ap


def _best_f(c):
    return fmeasure(c[0] / np.maximum(c[1], 1), c[2] / np.maximum(c[3], 1)).max()


def _compare(name, tasks, nthresh, workers, runs):
    print(f"\n{name}: {len(tasks)} maps, {nthresh} thresholds, {workers} workers, {runs} runs each")
    print(f"{'tool':<12} {'wall [s]':>9} {'s/image':>8} {'ODS F':>7} {'OIS F':>7} {'AP':>7} {'run-to-run max dF':>18}")
    walls = {}
    for tool, fn in (("segensemble", _ours), ("pyEdgeEval", _theirs)):
        results = [_run(fn, tasks, workers) for _ in range(runs)]
        walls[tool] = np.median([w for w, _ in results])
        ods, ois, ap = _scores(results[0][1], nthresh)
        drift = max((abs(_best_f(a) - _best_f(b)) for _, cs in results[1:] for a, b in zip(results[0][1], cs)),
                    default=0.0)
        print(f"{tool:<12} {walls[tool]:>9.1f} {walls[tool] * workers / len(tasks):>8.2f} {ods:>7.4f} {ois:>7.4f} "
              f"{ap:>7.4f} {drift:>18.2e}")
    print(f"speed-up (pyEdgeEval wall / ours): {walls['pyEdgeEval'] / walls['segensemble']:.1f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT",
                                                     HERE.parent.parent / "shared/bsds500/BSDS500"))
    ap.add_argument("--bench-dir", default=HERE.parent.parent / "shared/bsds-bench")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--generated", type=int, default=10, help="generated maps (BSDS500 val images)")
    ap.add_argument("--nthresh", type=int, default=99)
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    try:
        import pyEdgeEval  # noqa: F401
    except ImportError:
        raise SystemExit("this benchmark needs pyEdgeEval: pip install pyEdgeEval")
    bench = Path(args.bench_dir)
    official = [(read_boundary_map(p), read_ground_truth(bench / "groundTruth" / f"{p.stem}.mat").boundaries,
                 args.nthresh, False) for p in sorted((bench / "png").glob("*.png"))]
    _compare("official gPb soft maps (no NMS)", official, args.nthresh, args.workers, args.runs)
    if args.generated:
        ds = BSDS500(args.bsds)
        tasks = []
        for k, image_id in enumerate(ds.ids("val")[: args.generated]):
            gt = ds.ground_truth("val", image_id)
            tasks.append((_generated_map(gt, k), gt.boundaries, args.nthresh, True))
        _compare("generated detector-like maps (NMS first)", tasks, args.nthresh, args.workers, args.runs)


if __name__ == "__main__":
    main()
