"""Seconds per image of the learned boundary detector + UCM and of the full default recipe.

Every configuration runs in a child process started on the chosen CPUs
(``os.sched_setaffinity`` before the interpreter starts, so every thread
pool — BLAS, OpenMP, OpenCV — sees only them), on the same BSDS500 images,
after one warm-up image (model loading is not counted). Rows:

- the recipe's ``ucm`` member (detector + watershed + UCM), one core;
- the full recipe (members + fusion, ``run_recipe``), one core, members in turn
  (``n_jobs=1``, the baseline of the ratio column);
- the full recipe on every core, members in threads (``n_jobs=-1``, what
  ``segensemble fuse`` does by default);
- the same two rows for ``--baseline`` (default ``default@5``), in the same
  run, with the ratio of the recipe to it;
- the recipe's detector alone (raw probability, one core, every image new to it);
- with ``--cli``: whole ``segensemble`` processes, wall seconds over
  ``--repeat`` runs (``--version``, ``fuse --help``, ``fuse`` on a 16 x 16
  image — the fixed cost of every call — and ``fuse`` on a BSDS image), and
  under them the floor: a bare interpreter, and one that only imports the
  libraries a ``fuse`` cannot run without (NumPy, SciPy's ``ndimage``,
  OpenCV, scikit-image's segmentation, Typer, Rich), nothing of segensemble.

Every run's fused labels are hashed: the threaded run must give the serial
run's segmentations byte for byte.

Usage::

    python benchmarks/bench_recipe_time.py [--bsds ROOT] [--split val] [--images 20] [--recipe default]
                                           [--baseline default@5] [--cli] [--repeat 5]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _worker(args) -> None:
    from segensemble.datasets import BSDS500
    from segensemble.edges import detect_boundaries
    from segensemble.pipeline import run_segmenters
    from segensemble.pipeline.recipes import load_recipe
    from segensemble.pipeline.runner import run_recipe

    ds = BSDS500(args.bsds)
    ids = ds.ids(args.split)[: args.images]
    warm = np.random.default_rng(0).random((321, 481, 3))
    recipe = load_recipe(args.recipe)  # its detector model and ucm member (the shipped default model without one)
    model = (recipe.boundary or "").partition(":")[2] or None
    ucm = next((m for m in recipe.segmenters if m.split(":")[0] == "ucm"), "ucm")
    run = {"ucm": lambda img: run_segmenters(img, [ucm])[0].labels,
           "detector": lambda img: detect_boundaries(img, model=model, nms=False),
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


def _child(args, worker: str, recipe: str, cpus, n_jobs: int) -> dict:
    cmd = [sys.executable, __file__, "--worker", worker, "--bsds", str(args.bsds), "--split", args.split,
           "--images", str(args.images), "--recipe", recipe, "--n-jobs", str(n_jobs)]
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
    parser.add_argument("--baseline", default="default@5", help="recipe timed beside --recipe, in the same run")
    parser.add_argument("--cli", action="store_true", help="also time whole segensemble processes")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each --cli command")
    parser.add_argument("--worker", choices=("ucm", "recipe", "detector"), help=argparse.SUPPRESS)
    parser.add_argument("--n-jobs", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.bsds:
        parser.error("--bsds: give the BSDS500 root (or set SEGENSEMBLE_BSDS_ROOT)")
    if args.worker:
        return _worker(args)
    cpus = sorted(os.sched_getaffinity(0))
    rows = [(f"{args.recipe}'s detector alone (raw probability)", "detector", args.recipe, {cpus[0]}, 1),
            (f"{args.recipe}'s detector + UCM (`ucm` member)", "ucm", args.recipe, {cpus[0]}, 1)]
    for recipe in (args.recipe, args.baseline):
        rows += [(f"recipe {recipe}, members in turn", "recipe", recipe, {cpus[0]}, 1),
                 (f"recipe {recipe}, members in threads", "recipe", recipe, set(cpus), -1)]
    results = [_child(args, worker, recipe, use, n_jobs) for _, worker, recipe, use, n_jobs in rows]
    base = {n_jobs: float(np.mean(res["times"])) for (_, w, recipe, _, n_jobs), res in zip(rows, results)
            if w == "recipe" and recipe == args.baseline}
    print(f"{args.images} BSDS500 {args.split} images, seconds per image (after one warm-up image)\n")
    print(f"| run | cores | median | mean | max | mean vs {args.baseline} |")
    print("|---|---|---|---|---|---|")
    for (name, worker, _, use, n_jobs), res in zip(rows, results):
        t = np.array(res["times"])
        ratio = f"{t.mean() / base[n_jobs]:.2f}x" if worker == "recipe" else ""
        print(f"| {name} | {len(use)} | {np.median(t):.2f} | {t.mean():.2f} | {t.max():.2f} | {ratio} |")
    same = all(results[i]["digest"] == results[i + 1]["digest"] for i in (2, 4))
    print(f"\nthreaded fused labels identical to serial: {'yes' if same else 'NO'}")
    if args.cli:
        _cli_table(args)
    if not same:
        sys.exit(1)


def _cli_table(args) -> None:
    """Wall seconds of whole ``segensemble`` processes (imports, model loading, the work, writing)."""
    from segensemble.datasets import BSDS500
    from segensemble.io import write_image

    script = Path(sys.executable).parent / "segensemble"
    exe = [str(script)] if script.exists() else ([shutil.which("segensemble")] if shutil.which("segensemble")
                                                 else [sys.executable, "-m", "segensemble.cli"])
    ds = BSDS500(args.bsds)
    photo = ds.image_path(args.split, ds.ids(args.split)[0])
    with tempfile.TemporaryDirectory() as tmp:
        tiny = write_image(Path(tmp) / "tiny.png", np.random.default_rng(0).random((16, 16, 3)))
        commands = [("segensemble --version", ["--version"]), ("segensemble fuse --help", ["fuse", "--help"]),
                    ("segensemble fuse (16 x 16 image)", ["fuse", str(tiny), "-o", f"{tmp}/a.png", "--quiet"]),
                    (f"segensemble fuse (BSDS {Path(photo).name})", ["fuse", str(photo), "-o", f"{tmp}/b.png",
                                                                     "--quiet"])]
        floor = "import numpy, scipy.ndimage, cv2, skimage.segmentation, typer, rich.progress"
        commands += [("python -c pass (the interpreter alone)", "pass"),
                     ("python importing the libraries only (the floor)", floor)]
        print(f"\nwhole processes, wall seconds over {args.repeat} runs after one warm-up\n")
        print("| command | median | min | max |")
        print("|---|---|---|---|")
        for name, argv in commands:
            cmd = exe + argv if isinstance(argv, list) else [sys.executable, "-c", argv]  # a str: Python code
            subprocess.run(cmd, check=True, capture_output=True)
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True)
                times.append(time.perf_counter() - t)
            print(f"| {name} | {np.median(times):.2f} | {min(times):.2f} | {max(times):.2f} |")


if __name__ == "__main__":
    main()
