"""Speed of the foundation's hot paths on BSDS500 images, against plain baselines.

Prints, per stage, the median seconds per image of our implementation and of a
straightforward baseline run on the same inputs in the same process, and the
ratio baseline / ours:

- atoms: ``Ensemble.from_segmentations`` vs ``np.unique`` over the rows of the
  (pixels x members) label matrix;
- contingency: our bincount table vs ``sklearn.metrics.cluster.contingency_matrix``;
- region scores: PRI + VOI + covering of one segmentation against all
  annotations vs the same measures through the scikit-learn contingency matrix.

Usage::

    python benchmarks/bench_foundation.py [--bsds ROOT] [--split val] [--images 20]
"""

from __future__ import annotations

import os

# "One core": pin every thread pool (BLAS, OpenMP) before numpy is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import time

import numpy as np
from sklearn.metrics.cluster import contingency_matrix

from segensemble import Ensemble, run_segmenters
from segensemble.datasets import BSDS500
from segensemble.evaluation.regions import _ri_voi, contingency_table, region_scores


def _time(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _baseline_atoms(segs):
    rows = np.stack([s.labels.ravel() for s in segs], axis=1)
    _, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    return inverse, counts


def _baseline_scores(seg, gts):
    pri = voi = cnt = tot = 0.0
    for g in gts:
        n = contingency_matrix(g.ravel(), seg.ravel()).astype(np.float64)  # rows: gt
        ri, vi = _ri_voi(n.T)
        pri += ri
        voi += vi
        union = n.sum(1)[:, None] + n.sum(0)[None, :] - n
        cnt += np.sum(n.sum(1) * (n / union).max(1))
        tot += n.sum()
    return pri / len(gts), voi / len(gts), cnt / tot


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT", "../shared/bsds500/BSDS500"))
    ap.add_argument("--split", default="val")
    ap.add_argument("--images", type=int, default=20)
    args = ap.parse_args()
    ds = BSDS500(args.bsds)
    ids = ds.ids(args.split)[: args.images]
    rows = {"atoms": [], "contingency": [], "region scores": []}
    for image_id in ids:
        img = ds.image(args.split, image_id)
        gt = ds.ground_truth(args.split, image_id)
        segs = run_segmenters(img, ["slic", "felzenszwalb", "felzenszwalb:scale=100", "slic:n_segments=50"], rng=0)
        ens = Ensemble.from_segmentations(segs)
        inv, counts = _baseline_atoms(segs)
        assert len(counts) == ens.n_objects and sorted(counts) == sorted(ens.weights)
        rows["atoms"].append((_time(lambda: Ensemble.from_segmentations(segs)), _time(lambda: _baseline_atoms(segs))))
        seg, g0 = segs[1].labels, gt.segmentations[0]
        rows["contingency"].append(
            (_time(lambda: contingency_table(seg, g0)), _time(lambda: contingency_matrix(seg.ravel(), g0.ravel())))
        )
        ours = region_scores(seg, gt)
        base = _baseline_scores(seg, gt.segmentations)
        assert np.allclose([ours["pri"], ours["voi"], ours["covering"]], base)
        rows["region scores"].append(
            (_time(lambda: region_scores(seg, gt)), _time(lambda: _baseline_scores(seg, gt.segmentations)))
        )
    print(f"{len(ids)} BSDS500 {args.split} images, median seconds per image (best of 3 runs each)")
    print(f"{'stage':<15} {'ours [s]':>10} {'baseline [s]':>13} {'ratio':>7}")
    for name, vals in rows.items():
        ours, base = np.median([v[0] for v in vals]), np.median([v[1] for v in vals])
        print(f"{name:<15} {ours:>10.4f} {base:>13.4f} {base / ours:>6.1f}x")


if __name__ == "__main__":
    main()
