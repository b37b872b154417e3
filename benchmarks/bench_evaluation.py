"""Speed of the Berkeley benchmark per image, and of the matcher against a dense baseline.

Prints seconds per image (one core) for

(a) one segmentation: 1 threshold, all annotations, boundary + region
    (BSDS500 val images, a Felzenszwalb segmentation each);
(b) 99 thresholds, boundary + region:
    - the real gPb-owt-ucm ``ucm2`` files shipped with the official benchmark
      (shared/bsds-bench/ucm2, 5 images);
    - BSDS500 val images with a 99-level input (Felzenszwalb at 99 scales as a
      'segs' cell, so each threshold is a distinct map);

(c) the boundary benchmark of one image at 99 thresholds on three kinds of map:
    the official gPb-owt-ucm ucm2 files, the learned detector's thinned map
    (dense: about 13% of the pixels on at the lowest threshold) and its raw
    probability quantised to 8 bits and scored with --nms (the kind of map a
    deep edge detector writes); in the same process, counts asserted
    identical:
    - "scipy": threshold by threshold with SciPy's
      ``min_weight_full_bipartite_matching`` as the solver (the matcher as it
      was before the sparse solver; time rows x columns per solve) and
      scikit-image's thinning;
    - "per thr.": threshold by threshold with the sparse solver;
    - "sweep": what ``evaluate``/``score`` run
      (:func:`segensemble.evaluation.sweep.boundary_counts_sweep`);

(d) with ``--distribution SPLIT``: the sweep alone on every image of a split
    (the detector's thinned map and its 8-bit probability with --nms):
    median, mean, 90th percentile, maximum, how many images above 1 s;

and the speed-up of the exact sparse matcher over a plain dense
``scipy.optimize.linear_sum_assignment`` formulation (square augmented cost
matrix, pixels without any candidate pruned — a *stronger* baseline than the
unpruned one) solved on the same (machine map, annotation) pairs in the same
process; both must find the same number of matches.

Usage::

    python benchmarks/bench_evaluation.py [--bsds ROOT] [--images 10] [--baseline-pairs 4] [--sweep-images 5]
        [--distribution test [--distribution-images 200]]
"""

from __future__ import annotations

import os

# "One core": pin every thread pool (BLAS, OpenMP) before numpy is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import time
from contextlib import nullcontext
from pathlib import Path
from unittest.mock import patch

import numpy as np
from scipy.optimize import linear_sum_assignment

from segensemble import segment
from segensemble.datasets import BSDS500
from segensemble.evaluation.benchmark import MachineResult, evaluate_image, load_result
from segensemble.evaluation.boundaries import boundary_counts, seg2bdry, thin_boundaries
import segensemble.evaluation.correspond as correspond
from segensemble.evaluation.correspond import candidate_edges, correspond_pixels, match_radius, scipy_assign_rows
from segensemble.io import read_ground_truth

HERE = Path(__file__).resolve().parent


def _dense_baseline(b1, b2, max_dist=0.0075):
    """Matched-pair count of the dense square augmented assignment (pruned)."""
    radius = match_radius(b1.shape, max_dist)
    oc = round(100 * 100 * radius)
    i, j, c = candidate_edges(b1, b2, radius)
    ui, i = np.unique(i, return_inverse=True)
    uj, j = np.unique(j, return_inverse=True)
    n1, n2 = len(ui), len(uj)
    big = 1e9
    C = np.full((n1 + n2, n1 + n2), big)
    C[i, j] = c
    C[np.arange(n1), n2 + np.arange(n1)] = oc
    C[n1 + np.arange(n2), np.arange(n2)] = oc
    C[n1 + j, n2 + i] = 0
    r, cc = linear_sum_assignment(C)
    return int(np.sum((r < n1) & (cc < n2)))


def _per_threshold(result, gt, nthresh=99, *, scipy_solver=False):
    """The boundary benchmark threshold by threshold (identical maps counted once): with SciPy's solver and
    scikit-image's thinning as before, or with the sparse solver and the compiled thinning."""
    from skimage.morphology import thin

    counts, cache = [], {}
    with patch.object(correspond, "assign_integer_rows", scipy_assign_rows) if scipy_solver else nullcontext():
        for k, t in enumerate(result.thresholds(nthresh)):
            bmap = result.boundary_map(t, k)
            key = np.packbits(bmap).tobytes()
            if key not in cache:
                thinned = (thin(bmap) if scipy_solver else thin_boundaries(bmap)) if bmap.any() else bmap
                cache[key] = boundary_counts(thinned, gt.boundaries, thin=False)
            counts.append(cache[key])
    return counts


def _sweep_rows(ds, bench: Path, n_images: int):
    """Per-image seconds of the boundary benchmark at 99 thresholds, threshold by threshold vs the sweep."""
    from segensemble.edges import detect_boundaries
    from segensemble.evaluation.nms import edge_map_nms

    kinds = {"gPb-owt-ucm ucm2 (official)": [], "learned detector, thinned (boundary-v1)": [],
             "8-bit soft map with --nms (detector's raw probability)": []}
    for f in sorted((bench / "ucm2").glob("*.mat"))[:n_images]:
        kinds["gPb-owt-ucm ucm2 (official)"].append((load_result(f), read_ground_truth(bench / "groundTruth" / f.name)))
    for image_id in ds.ids("test")[:n_images]:
        img, gt = ds.image("test", image_id), ds.ground_truth("test", image_id)
        raw = detect_boundaries(img, nms=False)
        kinds["learned detector, thinned (boundary-v1)"].append((MachineResult("boundary", detect_boundaries(img)), gt))
        eight_bit = np.round(raw * 255) / 255
        kinds["8-bit soft map with --nms (detector's raw probability)"].append(
            (MachineResult("boundary", edge_map_nms(eight_bit)), gt))
    rows = []
    for name, pairs in kinds.items():
        times, density = {"scipy": [], "per thr.": [], "sweep": []}, []
        for result, gt in pairs:
            t = time.perf_counter()
            before = _per_threshold(result, gt, scipy_solver=True)
            times["scipy"].append(time.perf_counter() - t)
            t = time.perf_counter()
            per_threshold = _per_threshold(result, gt)
            times["per thr."].append(time.perf_counter() - t)
            t = time.perf_counter()
            ev = evaluate_image(result, gt, region=False)
            times["sweep"].append(time.perf_counter() - t)
            after = np.stack([ev.boundary.cntR, ev.boundary.sumR, ev.boundary.cntP, ev.boundary.sumP], axis=1)
            assert before == per_threshold, f"{name}: counts differ"
            assert np.array_equal(np.asarray(before, dtype=np.float64), after), f"{name}: counts differ"
            b = result.boundary_map(result.thresholds(99)[0], 0)
            density.append(float(thin_boundaries(b).mean()))
        rows.append((name, len(pairs), np.median(density), {k: np.median(v) for k, v in times.items()},
                     max(times["sweep"])))
    return rows


def _distribution(ds, split: str, n_images: int) -> dict:
    """Per-image seconds of the boundary benchmark at 99 thresholds (what ``evaluate``/``score`` run) on every
    image of a split: the learned detector's thinned map, and its raw probability in 8 bits with --nms."""
    from segensemble.edges import detect_boundaries
    from segensemble.evaluation.nms import edge_map_nms

    times = {"learned detector, thinned (boundary-v1)": {}, "8-bit soft map with --nms": {}}
    for image_id in ds.ids(split)[:n_images]:
        img, gt = ds.image(split, image_id), ds.ground_truth(split, image_id)
        raw = detect_boundaries(img, nms=False)
        maps = (MachineResult("boundary", detect_boundaries(img)),
                MachineResult("boundary", edge_map_nms(np.round(raw * 255) / 255)))
        for per_image, result in zip(times.values(), maps):
            t = time.perf_counter()
            evaluate_image(result, gt, region=False)
            per_image[image_id] = time.perf_counter() - t
    return times


def _time_image(result, gt):
    t = time.perf_counter()
    evaluate_image(result, gt, nthresh=99)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT", HERE.parent.parent / "shared/bsds500/BSDS500"))
    ap.add_argument("--bench-dir", default=HERE.parent.parent / "shared/bsds-bench")
    ap.add_argument("--images", type=int, default=10)
    ap.add_argument("--baseline-pairs", type=int, default=4)
    ap.add_argument("--sweep-images", type=int, default=5, help="images per kind of map in the sweep table")
    ap.add_argument("--distribution", metavar="SPLIT", help="also time the sweep alone on every image of a split")
    ap.add_argument("--distribution-images", type=int, default=200, help="images of that split")
    args = ap.parse_args()
    ds = BSDS500(args.bsds)
    ids = ds.ids("val")[: args.images]
    rows = []

    single, multi, pairs = [], [], []
    for image_id in ids:
        img = ds.image("val", image_id)
        gt = ds.ground_truth("val", image_id)
        seg = segment(img, "felzenszwalb").labels
        single.append(_time_image(MachineResult("segs", [seg]), gt))
        scales = np.geomspace(20, 5000, 99)
        segs = [segment(img, "felzenszwalb", scale=float(s)).labels for s in scales]
        multi.append(_time_image(MachineResult("segs", segs), gt))
        pairs.append((thin_boundaries(seg2bdry(seg)), gt.boundaries[0]))
    rows.append(("(a) 1 segmentation, all annotations", f"BSDS500 val x{len(ids)}", np.median(single), 0.5))
    rows.append(("(b) 99 Felzenszwalb scales (segs)", f"BSDS500 val x{len(ids)}", np.median(multi), 5.0))

    bench = Path(args.bench_dir)
    ucm_times = []
    for f in sorted((bench / "ucm2").glob("*.mat")):
        result = load_result(f)
        gt = read_ground_truth(bench / "groundTruth" / f.name)
        ucm_times.append(_time_image(result, gt))
    if ucm_times:
        rows.append(("(b) 99-threshold gPb-owt-ucm ucm2", f"bsds-bench x{len(ucm_times)}", np.median(ucm_times), 5.0))

    print("seconds per image, one core (median)")
    print(f"{'workload':<38} {'images':<18} {'s/image':>8} {'target':>7}")
    for name, where, sec, target in rows:
        print(f"{name:<38} {where:<18} {sec:>8.3f} {target:>6.1f}s {'ok' if sec <= target else 'MISSED'}")
    if ucm_times:
        print(f"200-image test set at 99 thresholds with --jobs 2 (from the ucm2 median): "
              f"~{200 * np.median(ucm_times) / 2 / 60:.1f} min")

    print("\nboundary benchmark at 99 thresholds, one core, median s/image (same process; counts asserted identical)")
    print(f"{'map':<56} {'images':>6} {'pixels on':>9} {'scipy':>7} {'per thr.':>8} {'sweep':>7} {'max':>6} "
          f"{'ratio':>7}")
    for name, n, density, t, worst in _sweep_rows(ds, bench, args.sweep_images):
        print(f"{name:<56} {n:>6} {density:>8.1%} {t['scipy']:>7.2f} {t['per thr.']:>8.2f} {t['sweep']:>7.2f} "
              f"{worst:>6.2f} {t['scipy'] / t['sweep']:>6.1f}x")

    print(f"\nmatcher vs dense linear_sum_assignment, {args.baseline_pairs} (machine, annotation) pairs")
    print(f"{'pair':<6} {'n machine':>9} {'n human':>8} {'ours [s]':>9} {'dense [s]':>10} {'speed-up':>9}")
    ratios = []
    for k, (b1, b2) in enumerate(pairs[: args.baseline_pairs]):
        t = time.perf_counter()
        m1, _ = correspond_pixels(b1, b2)
        ours = time.perf_counter() - t
        t = time.perf_counter()
        n_dense = _dense_baseline(b1, b2)
        dense = time.perf_counter() - t
        assert n_dense == int(m1.sum()), "baseline and exact matcher disagree on the number of matches"
        ratios.append(dense / ours)
        print(f"{k:<6} {int(b1.sum()):>9} {int(b2.sum()):>8} {ours:>9.4f} {dense:>10.2f} {dense / ours:>8.0f}x")
    print(f"median speed-up: {np.median(ratios):.0f}x")

    if args.distribution:
        print(f"\nboundary benchmark at 99 thresholds, one core, s/image over BSDS500 {args.distribution}")
        print(f"{'map':<42} {'images':>6} {'median':>7} {'mean':>6} {'p90':>6} {'max':>6} {'> 1 s':>6}  slowest")
        for name, per_image in _distribution(ds, args.distribution, args.distribution_images).items():
            t = np.array(list(per_image.values()))
            print(f"{name:<42} {len(t):>6} {np.median(t):>7.2f} {t.mean():>6.2f} {np.percentile(t, 90):>6.2f} "
                  f"{t.max():>6.2f} {int(np.sum(t > 1.0)):>6}  {max(per_image, key=per_image.get)}")


if __name__ == "__main__":
    main()
