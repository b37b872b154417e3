"""Seconds per image of the learned boundary detector + UCM and of the full default recipe.

Every configuration runs in a child process started on the chosen CPUs
(``os.sched_setaffinity`` before the interpreter starts, so every thread
pool — BLAS, OpenMP, OpenCV — sees only them), on the same BSDS500 images,
after one warm-up image (model loading is not counted). Rows:

- ``ucm`` segmenter (detector + watershed + UCM), one core;
- the full recipe (members + fusion, ``run_recipe``), one core, members in turn
  (``n_jobs=1``, the baseline of the ratio column);
- the full recipe on every core, members in threads (``n_jobs=-1``, what
  ``segensemble fuse`` does by default).

Every run's fused labels are hashed: the threaded run must give the serial
run's segmentations byte for byte.

Usage::

    python benchmarks/bench_recipe_time.py [--bsds ROOT] [--split val] [--images 20] [--recipe default]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np


def _worker(args) -> None:
    from segensemble.datasets import BSDS500
    from segensemble.pipeline import segment
    from segensemble.pipeline.runner import run_recipe

    ds = BSDS500(args.bsds)
    ids = ds.ids(args.split)[: args.images]
    warm = np.random.default_rng(0).random((321, 481, 3))
    run = {"ucm": lambda img: segment(img, "ucm").labels,
           "recipe": lambda img: run_recipe(img, args.recipe, n_jobs=args.n_jobs).labels}[args.worker]
    run(warm)
    times, digest = [], hashlib.sha256()
    for i in ids:
        img = ds.image(args.split, i)
        t = time.perf_counter()
        labels = run(img)
        times.append(time.perf_counter() - t)
        digest.update(np.ascontiguousarray(labels).tobytes())
    print(json.dumps({"times": times, "digest": digest.hexdigest()}))


def _child(args, worker: str, cpus, n_jobs: int) -> dict:
    cmd = [sys.executable, __file__, "--worker", worker, "--bsds", str(args.bsds), "--split", args.split,
           "--images", str(args.images), "--recipe", args.recipe, "--n-jobs", str(n_jobs)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True,
                          preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT"),
                        help="BSDS500 root (default: $SEGENSEMBLE_BSDS_ROOT)")
    parser.add_argument("--split", default="val")
    parser.add_argument("--images", type=int, default=20)
    parser.add_argument("--recipe", default="default")
    parser.add_argument("--worker", choices=("ucm", "recipe"), help=argparse.SUPPRESS)
    parser.add_argument("--n-jobs", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.bsds:
        parser.error("--bsds: give the BSDS500 root (or set SEGENSEMBLE_BSDS_ROOT)")
    if args.worker:
        return _worker(args)
    cpus = sorted(os.sched_getaffinity(0))
    rows = [("detector + UCM (`ucm` segmenter)", "ucm", {cpus[0]}, 1),
            (f"recipe {args.recipe}, members in turn", "recipe", {cpus[0]}, 1),
            (f"recipe {args.recipe}, members in threads", "recipe", set(cpus), -1)]
    results = [_child(args, worker, use, n_jobs) for _, worker, use, n_jobs in rows]
    base = float(np.mean(results[1]["times"]))
    print(f"{args.images} BSDS500 {args.split} images, seconds per image (after one warm-up image)\n")
    print("| run | cores | median | mean | max | mean vs members in turn |")
    print("|---|---|---|---|---|---|")
    for (name, _, use, _), res in zip(rows, results):
        t = np.array(res["times"])
        print(f"| {name} | {len(use)} | {np.median(t):.2f} | {t.mean():.2f} | {t.max():.2f} | {t.mean() / base:.2f}x |")
    same = results[1]["digest"] == results[2]["digest"]
    print(f"\nthreaded fused labels identical to serial: {'yes' if same else 'NO'}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
