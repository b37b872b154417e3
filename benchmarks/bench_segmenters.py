"""Speed and quality of every registered segmenter on BSDS500 val images.

For each segmenter with its default settings (or the overrides given with
``--set``), on the first N images of the BSDS500 val split (default 50):
median seconds per image (one core) and PRI / VOI / covering / boundary F at a
single threshold (counts summed over images, as the benchmark's ODS with one
threshold), next to the issue's time targets.

Usage::

    python benchmarks/bench_segmenters.py [--bsds ROOT] [--images 50] [--only ncut,slic]
        [--set ncut:n_segments=6] [--json out.json]
"""

from __future__ import annotations

import os

# "One core": pin every thread pool (BLAS, OpenMP) before numpy is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from segensemble import segment, segmenters
from segensemble.datasets import BSDS500
from segensemble.evaluation.aggregate import collect_boundaries
from segensemble.evaluation.benchmark import MachineResult, evaluate_image
from segensemble.evaluation.regions import region_scores
from segensemble.pipeline import parse_segmenter_spec

HERE = Path(__file__).resolve().parent
TARGETS = {"slic": 0.3, "felzenszwalb": 0.3, "kmeans": 0.3, "ncut": 1.5, "chanvese": 1.5, "graphcut": 1.5,
           "meanshift": 1.5}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT", HERE.parent.parent / "shared/bsds500/BSDS500"))
    ap.add_argument("--images", type=int, default=50)
    ap.add_argument("--only", default="")
    ap.add_argument("--set", action="append", default=[], help="name:key=value,... overrides")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    overrides = dict(parse_segmenter_spec(s) for s in args.set)
    names = [n for n in segmenters.available() if not args.only or n in args.only.split(",")]
    ds = BSDS500(args.bsds)
    ids = ds.ids("val")[: args.images]
    data = [(ds.image("val", i), ds.ground_truth("val", i)) for i in ids]
    table = {}
    for name in names:
        secs, scores, bdry = [], [], []
        for k, (img, gt) in enumerate(data):
            t = time.perf_counter()
            seg = segment(img, name, rng=k, **overrides.get(name, {}))
            secs.append(time.perf_counter() - t)
            scores.append(region_scores(seg.labels, gt))
            bdry.append(evaluate_image(MachineResult("segs", [seg.labels]), gt, region=False).boundary)
        b = collect_boundaries(bdry)
        table[name] = {
            "seconds": float(np.median(secs)),
            "pri": float(np.mean([s["pri"] for s in scores])),
            "voi": float(np.mean([s["voi"] for s in scores])),
            "covering": float(np.mean([s["covering"] for s in scores])),
            "boundary_f": b.ods_F,
            "regions": float(np.mean([s["n_segments"] for s in scores])),
            "params": overrides.get(name, {}),
        }
        r = table[name]
        target = TARGETS.get(name)
        flag = "" if target is None else ("ok" if r["seconds"] <= target else "SLOW")
        print(f"{name:<13} {r['seconds']:6.3f}s {'(<= %.1fs %s)' % (target, flag) if target else '':<14} "
              f"PRI {r['pri']:.3f}{'' if r['pri'] >= 0.70 else ' (<0.70)'}  VOI {r['voi']:.3f}  "
              f"cov {r['covering']:.3f}  F {r['boundary_f']:.3f}  regions {r['regions']:.1f}", flush=True)
    print(f"\n{len(ids)} BSDS500 val images; seconds = median per image on one core; PRI/VOI/covering = mean over "
          "images; F = boundary F-measure at the single threshold, counts summed over images.")
    if args.json:
        Path(args.json).write_text(json.dumps({"images": len(ids), "table": table}, indent=1))


if __name__ == "__main__":
    main()
