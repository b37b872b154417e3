"""Every registered consensus method on a recipe's members, on BSDS500 images, through the CLI's code path.

For each recipe (default: ``default,seed``) the members are computed once per image
(the recipe's segmenters, seeded as ``segensemble fuse --seed 0`` does); then
every method is applied exactly as ``segensemble fuse IMAGE --recipe R -m
METHOD`` applies it — :func:`segensemble.pipeline.runner.run_recipe` with the recipe's
members, image-aware settings and post-processing and the method swapped in
(its parameters reset to the method's defaults, as ``-m`` does) — and the
fused segmentation is
scored with the Berkeley benchmark (counts summed over images: covering, PRI,
VOI, boundary F at the single segmentation, as ``bench`` reports members vs
fused). The members themselves are scored too, so every table shows the
ensemble's best member per measure. The fuse step (members excluded) is timed
per image, one core; the image-aware frame (the atoms' learned hierarchy),
computed once per image and recipe and shared by the methods, is counted in
full in every method's time.

Choose on train/val (``--split val``); run ``--split test`` only for final
tables.

Writes ``OUT/methods.csv`` (one row per image, recipe and method) and
``OUT/methods.md`` (the table), and prints the table.

Usage::

    python benchmarks/methods_on_bsds.py [--bsds ROOT] [--split val] [--limit 20] [--recipes default,seed]
        [--methods eac,vote] [-k 8] [--boundary learned] [--jobs 2] [--out methods-out]

``-k K`` applies every method as ``fuse -k K`` does (default ``auto``); the
regions column gives the mean and the range per image. The boundary evidence
of merge and the frame is each recipe's own, as ``fuse`` uses it
(``--boundary recipe``, the default: the learned detector's probability for
``default`` from version 5); ``--boundary gradient`` forces the colour
gradient, ``--boundary learned`` the learned detector (``fuse --boundary
learned``). A detector's map is computed once per image like the members and,
like them, not counted in the fuse step.
"""

from __future__ import annotations

import os

# "One core" per worker: pin every thread pool (BLAS, OpenMP) before numpy is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
MEASURES = ("covering", "pri", "voi", "f")


def _score(labels, gt) -> dict:
    from segensemble.evaluation.benchmark import MachineResult, evaluate_image

    return evaluate_image(MachineResult("segs", [labels]), gt).to_dict()


def boundary_evidence(mode: str, recipe, image):
    """The boundary evidence passed to every fuse of ``recipe``: 'recipe' keeps the recipe's own (the CLI's
    default), 'gradient' the colour gradient (None), 'learned' the default detector. A detector's map is computed
    once per image and recipe, like the members (not in the fuse step's time)."""
    which = (recipe.boundary or None) if mode == "recipe" else (None if mode == "gradient" else "learned")
    if which is None:
        return None
    from segensemble.edges import detect_boundaries

    return detect_boundaries(image, model=which.partition(":")[2] or None, nms=False).astype(np.float64)


def _image_task(args):
    """All recipes x methods on one image: per-image evaluations (dicts) and fuse-step seconds."""
    root, split, image_id, recipes, methods, seed, n_segments, boundary = args
    from segensemble.datasets import BSDS500
    from segensemble.errors import InputError
    from segensemble.pipeline.imagesize import load_image
    from segensemble.pipeline import run_segmenters
    from segensemble.pipeline.recipes import load_recipe
    from segensemble.pipeline.runner import run_recipe

    ds = BSDS500(root)
    image, _ = load_image(ds.image_path(split, image_id))
    gt = ds.ground_truth(split, image_id)
    rows = []
    for name in recipes:
        recipe = load_recipe(name)
        evidence = boundary_evidence(boundary, recipe, image)
        members = run_segmenters(image, recipe.segmenters, rng=seed)
        for spec, seg in zip(recipe.segmenters, members):
            rows.append({"image": image_id, "recipe": name, "method": f"member {spec}", "seconds": 0.0,
                         "n_segments": int(seg.labels.max()) + 1, "evaluation": _score(seg.labels, gt)})
        for method in methods:
            chosen = recipe if method == recipe.method else recipe.with_overrides(method=method)
            if n_segments != "auto":
                chosen = chosen.with_overrides(n_segments=n_segments)
            start = time.perf_counter()
            try:
                result = run_recipe(image, chosen, members=members, rng=seed, boundary=evidence)
            except InputError as exc:  # a method that refuses this ensemble: recorded, not scored
                rows.append({"image": image_id, "recipe": name, "method": method, "error": str(exc)})
                continue
            seconds = time.perf_counter() - start
            if result.fusion is not None and result.fusion.frame_cached:  # as if this method had computed it
                seconds += result.fusion.frame_seconds
            rows.append({"image": image_id, "recipe": name, "method": method,
                         "seconds": seconds, "n_segments": int(result.labels.max()) + 1,
                         "evaluation": _score(result.labels, gt)})
    return rows


def _aggregate(rows) -> dict:
    """Dataset scores per (recipe, method): counts summed over images, as the benchmark's single-threshold ODS."""
    from segensemble.evaluation.aggregate import collect_boundaries, collect_regions
    from segensemble.evaluation.benchmark import ImageEvaluation

    groups: dict = {}
    for r in rows:
        if "evaluation" in r:
            groups.setdefault((r["recipe"], r["method"]), []).append(r)
    table = {}
    for key, rs in groups.items():
        evs = [ImageEvaluation.from_dict(r["evaluation"]) for r in rs]
        b, g = collect_boundaries([e.boundary for e in evs]), collect_regions([e.region for e in evs])
        table[key] = {"covering": float(g.covering_ods), "pri": float(g.pri_ods), "voi": float(g.voi_ods),
                      "f": float(b.ods_F), "regions": float(np.mean([r["n_segments"] for r in rs])),
                      "regions_range": (min(r["n_segments"] for r in rs), max(r["n_segments"] for r in rs)),
                      "seconds": float(np.median([r["seconds"] for r in rs])),
                      "seconds_max": float(np.max([r["seconds"] for r in rs])), "images": len(rs)}
    return table


def _markdown(table: dict, errors: dict) -> str:
    lines = ["| recipe | method | covering ↑ | PRI ↑ | VOI ↓ | F ↑ | regions (mean, range) | s / image (fuse, median / max) "
             "| beats best member on |", "|---|---|---|---|---|---|---|---|---|"]
    for recipe in sorted({k[0] for k in table}):
        members = {k[1]: v for k, v in table.items() if k[0] == recipe and k[1].startswith("member ")}
        best = {m: (min if m == "voi" else max)(v[m] for v in members.values()) for m in MEASURES}
        lines.append(f"| {recipe} | best member per measure | {best['covering']:.4f} | {best['pri']:.4f} | "
                     f"{best['voi']:.4f} | {best['f']:.4f} | | | |")
        for (rec, method), v in sorted(table.items()):
            if rec != recipe or method.startswith("member "):
                continue
            wins = sum((v[m] < best[m]) if m == "voi" else (v[m] > best[m]) for m in MEASURES)
            lines.append(f"| {recipe} | {method} | {v['covering']:.4f} | {v['pri']:.4f} | {v['voi']:.4f} | "
                         f"{v['f']:.4f} | {v['regions']:.1f} ({v['regions_range'][0]}–{v['regions_range'][1]}) | "
                         f"{v['seconds']:.2f} / {v['seconds_max']:.2f} | "
                         f"{wins} of 4 |")
        for (rec, method), message in sorted(errors.items()):
            if rec == recipe:
                lines.append(f"| {recipe} | {method} | refused: {message} | | | | | | |")
    return "\n".join(lines) + "\n"


def main() -> None:
    from segensemble import consensus
    from segensemble.datasets import BSDS500
    from segensemble.validation import check_n_segments

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT",
                                                     HERE.parent.parent / "shared/bsds500/BSDS500"))
    ap.add_argument("--split", default="val")
    ap.add_argument("--limit", type=int, default=None, help="only the first N images (sorted ids)")
    ap.add_argument("--recipes", default="default,seed", help="comma-separated recipe names or files")
    ap.add_argument("--methods", default="", help="comma-separated methods (default: every registered one)")
    ap.add_argument("-k", "--n-segments", default="auto", help="number of regions, or 'auto' (as fuse -k)")
    ap.add_argument("--boundary", default="recipe", choices=("recipe", "gradient", "learned"),
                    help="boundary evidence of merge and the frame: each recipe's own (as the CLI), the colour "
                         "gradient, or the learned detector")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default="methods-out")
    args = ap.parse_args()
    methods = [m for m in consensus.available() if not args.methods or m in args.methods.split(",")]
    recipes = [r.strip() for r in args.recipes.split(",") if r.strip()]
    ds = BSDS500(args.bsds)
    ids = ds.ids(args.split)[: args.limit]
    n_segments = check_n_segments(args.n_segments)
    tasks = [(str(ds.data), args.split, i, recipes, methods, args.seed, n_segments, args.boundary) for i in ids]
    rows = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for done, image_rows in enumerate(pool.map(_image_task, tasks), 1):
            rows.extend(image_rows)
            print(f"{done}/{len(ids)} images", flush=True)
    errors = {(r["recipe"], r["method"]): r["error"] for r in rows if "error" in r}
    table = _aggregate(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from segensemble.evaluation.benchmark import ImageEvaluation

    with open(out / "methods.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["image", "recipe", "method", "covering", "pri", "voi", "recall", "precision", "n_segments",
                    "seconds", "error"])
        for r in rows:
            sc = ImageEvaluation.from_dict(r["evaluation"]).scores() if "evaluation" in r else {}
            w.writerow([r["image"], r["recipe"], r["method"]]
                       + [f"{sc[k]:.6f}" if sc else "" for k in ("covering", "pri", "voi", "recall", "precision")]
                       + [r.get("n_segments", ""), f"{r.get('seconds', 0):.3f}", r.get("error", "")])
    text = (f"{len(ids)} images of BSDS500 {args.split}, recipes {', '.join(recipes)}, -k {n_segments}, boundary {args.boundary}, seed {args.seed}\n\n"
            + _markdown(table, errors))
    (out / "methods.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
