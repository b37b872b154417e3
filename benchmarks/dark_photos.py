"""Under-exposed and gray pictures: recipes on BSDS500 images darkened by camera stops, scored against the truth.

Every image of the split is darkened as an under-exposed photo is stored: its sRGB values are taken to linear
light, multiplied by 2^-stops, taken back to sRGB and rounded to 8 bits (what a camera writes when the exposure
was ``stops`` too short). Each recipe fuses every darkened image (``run_recipe(image, recipe, rng=0)``, what
``segensemble fuse`` runs), and the labels are scored against the BSDS ground truth: mean covering, PRI, VOI
per image, the dataset boundary F (counts summed over images, as the benchmark does for one segmentation) and
the mean number of regions; ``0`` stops is the image as stored. ``--tones colour,gray`` also scores every
picture converted to gray after the darkening (ITU-R 601 luma rounded to 8 bits, as PIL's ``convert("L")``
gives it, handed over as a 2-D array: a black-and-white photo as it is stored).

Usage::

    python benchmarks/dark_photos.py [--bsds ROOT] [--split val] [--limit N] [--stops 0,1,2,3]
                                     [--tones colour,gray] [--recipes default@9,default] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np


def darken(rgb8: np.ndarray, stops: float) -> np.ndarray:
    """An 8-bit sRGB picture as it is stored when exposed ``stops`` shorter (linear light times 2^-stops)."""
    s = rgb8.astype(np.float64) / 255
    linear = np.where(s <= 0.04045, s / 12.92, ((s + 0.055) / 1.055) ** 2.4) * 2.0 ** -stops
    back = np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)
    return np.clip(np.rint(back * 255), 0, 255).astype(np.uint8)


def gray(rgb8: np.ndarray) -> np.ndarray:
    """An 8-bit sRGB picture as a gray one is stored: ITU-R 601 luma, rounded to 8 bits (PIL's ``convert("L")``)."""
    from PIL import Image

    return np.asarray(Image.fromarray(rgb8).convert("L"))


def one_image(args) -> list:
    root, split, image_id, stops, tones, recipes = args
    from segensemble.datasets import BSDS500
    from segensemble.io import decode_image, read_ground_truth
    from segensemble.pipeline.runner import run_recipe

    ds = BSDS500(root)
    raw = decode_image(ds.image_path(split, image_id))
    gt = read_ground_truth(ds.ground_truth_path(split, image_id))
    out = []
    for s in stops:
        for tone in tones:
            img = darken(raw, s) if tone == "colour" else gray(darken(raw, s))
            for recipe in recipes:
                out.append(_scored(run_recipe(img, recipe, rng=0, n_jobs=1).labels, gt, s, tone, recipe))
    return out


def _scored(labels, gt, stops, tone, recipe) -> dict:
    from segensemble.evaluation.benchmark import MachineResult, evaluate_image

    ev = evaluate_image(MachineResult("segs", [labels]), gt)
    b, sc = ev.boundary, ev.scores()
    return {"stops": stops, "tone": tone, "recipe": recipe, "covering": sc["covering"], "pri": sc["pri"],
            "voi": sc["voi"], "regions": int(labels.max()) + 1,
            "counts": [float(b.cntR[0]), float(b.sumR[0]), float(b.cntP[0]), float(b.sumP[0])]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT", "../shared/bsds500/BSDS500"))
    ap.add_argument("--split", default="val")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--stops", default="0,1,2,3", help="comma-separated exposure shortfalls, in stops")
    ap.add_argument("--tones", default="colour", help="comma-separated: colour (as stored), gray (converted)")
    ap.add_argument("--recipes", default="default@9,default", help="comma-separated recipes (names or files)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from segensemble.datasets import BSDS500

    stops = [float(s) for s in args.stops.split(",")]
    tones = args.tones.split(",")
    if any(t not in ("colour", "gray") for t in tones):
        ap.error(f"--tones: expected colour and/or gray, got {args.tones!r}")
    recipes = args.recipes.split(",")
    ids = BSDS500(args.bsds).ids(args.split)[: args.limit]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        recs = [r for image in pool.map(one_image, [(args.bsds, args.split, i, stops, tones, recipes) for i in ids])
                for r in image]
    print(f"{len(ids)} {args.split} images, {time.perf_counter() - start:.0f} s with {args.jobs} workers\n")
    print("| stops darker | tone | recipe | covering | PRI | VOI | boundary F | regions |")
    print("|---|---|---|---|---|---|---|---|")
    for s, tone, recipe in ((s, t, r) for s in stops for t in tones for r in recipes):
        rows = [r for r in recs if r["stops"] == s and r["tone"] == tone and r["recipe"] == recipe]
        c = np.array([r["counts"] for r in rows]).sum(axis=0)
        rec, prec = c[0] / max(c[1], 1), c[2] / max(c[3], 1)
        f = 2 * prec * rec / max(prec + rec, 1e-12)
        m = {k: float(np.mean([r[k] for r in rows])) for k in ("covering", "pri", "voi", "regions")}
        print(f"| {s:g} | {tone} | {recipe} | {m['covering']:.4f} | {m['pri']:.4f} | {m['voi']:.4f} | {f:.4f} | "
              f"{m['regions']:.1f} |")


if __name__ == "__main__":
    main()
