"""Quality at scale: the default recipe on BSDS500 images upscaled x4 against the same images at their own size.

For every image of the split: the native image is fused (``run_recipe(path, "default")``, what ``segensemble
fuse`` runs); the image upscaled x4 with ``cv2.INTER_CUBIC`` (1924 x 1284, 2.5 MP: a photo-sized input) is fused
the same way (it runs at the recipe's working scale, and its labels come back at 1924 x 1284, refined against
the upscaled image). Then

- the x4 labels are brought back to the native size (nearest neighbour) and both label maps are scored against
  the BSDS ground truth: mean covering, PRI, VOI per image and the dataset boundary F (counts summed over images,
  as the benchmark does for one segmentation);
- boundary placement at full resolution: the share of the x4 result's boundary pixels (a pixel whose right or
  lower neighbour has another label, both sides counted) lying within 2 full-resolution pixels of a boundary
  pixel of the native labels upscaled x4 by nearest neighbour.

Two reference figures separate the full-resolution refinement from the recipe's own stability:

- *refinement alone*: the same share against the x4 run's own working-scale labels upscaled x4 by nearest
  neighbour (what the refinement started from);
- *stability floor*: the same share for the native image re-encoded as JPEG (quality 95) and fused at its own
  size, against the native result: how far the recipe's boundaries move under an invisible change of pixels.

Usage::

    python benchmarks/photos_at_scale.py [--bsds ROOT] [--split test] [--limit N] [--jobs 2] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

SCALE = 4


def _edges(labels: np.ndarray) -> np.ndarray:
    e = np.zeros(labels.shape, bool)
    dx = labels[:, 1:] != labels[:, :-1]
    dy = labels[1:] != labels[:-1]
    e[:, 1:] |= dx
    e[:, :-1] |= dx
    e[1:] |= dy
    e[:-1] |= dy
    return e


def placement(full: np.ndarray, native: np.ndarray, radius: float = 2.0) -> tuple[int, int]:
    """(boundary pixels of ``full`` within ``radius`` of the upscaled native boundaries, all of them)."""
    import cv2
    from scipy import ndimage

    up = cv2.resize(native.astype(np.int32), full.shape[::-1], interpolation=cv2.INTER_NEAREST)
    ref = _edges(up)
    mine = _edges(full)
    if not ref.any():
        return 0, int(mine.sum())
    dist = ndimage.distance_transform_edt(~ref)
    return int((dist[mine] <= radius).sum()), int(mine.sum())


def one_image(args) -> dict:
    root, split, image_id = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import cv2

    from segensemble.datasets import BSDS500
    from segensemble.evaluation.benchmark import MachineResult, evaluate_image
    from segensemble.io import decode_image, read_ground_truth
    from segensemble.pipeline.runner import run_recipe

    ds = BSDS500(root)
    path = ds.image_path(split, image_id)
    gt = read_ground_truth(ds.ground_truth_path(split, image_id))
    t0 = time.perf_counter()
    native = run_recipe(path, "default", rng=0).labels
    t1 = time.perf_counter()
    raw = decode_image(path)
    big = cv2.resize(raw, (raw.shape[1] * SCALE, raw.shape[0] * SCALE), interpolation=cv2.INTER_CUBIC)
    x4 = run_recipe(big, "default", rng=0)
    full = x4.labels
    t2 = time.perf_counter()
    _, buf = cv2.imencode(".jpg", raw[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 95])
    recoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)[:, :, ::-1]
    jpeg95 = run_recipe(np.ascontiguousarray(recoded), "default", rng=0).labels
    back = cv2.resize(full, native.shape[::-1], interpolation=cv2.INTER_NEAREST)
    rec = {"id": image_id, "seconds_native": t1 - t0, "seconds_x4": t2 - t1}
    for name, labels in (("native", native), ("x4", back)):
        ev = evaluate_image(MachineResult("segs", [labels]), gt)
        s = ev.scores()
        b = ev.boundary
        rec[name] = {"covering": s["covering"], "pri": s["pri"], "voi": s["voi"], "regions": int(labels.max()) + 1,
                     "counts": [float(b.cntR[0]), float(b.sumR[0]), float(b.cntP[0]), float(b.sumP[0])]}
    rec["placement"] = placement(full, native)
    rec["refinement"] = placement(full, x4.processed_labels)
    rec["stability"] = placement(cv2.resize(jpeg95.astype(np.int32), full.shape[::-1],
                                            interpolation=cv2.INTER_NEAREST), native)
    return rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT", "../shared/bsds500/BSDS500"))
    ap.add_argument("--split", default="test")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=None, help="also write every image's record (JSON)")
    args = ap.parse_args()
    from segensemble.datasets import BSDS500

    ids = BSDS500(args.bsds).ids(args.split)[: args.limit]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        recs = list(pool.map(one_image, [(args.bsds, args.split, i) for i in ids]))
    wall = time.perf_counter() - start
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(recs, fh, indent=1)
    print(f"{len(recs)} {args.split} images, x{SCALE} = {SCALE * 481}x{SCALE * 321}, {wall:.0f} s with {args.jobs} "
          f"workers\n")
    print("| run | covering | PRI | VOI | boundary F | regions | s / image |")
    print("|---|---|---|---|---|---|---|")
    rows = {}
    for name, secs in (("native", "seconds_native"), ("x4", "seconds_x4")):
        c = np.array([r[name]["counts"] for r in recs]).sum(axis=0)
        rec, prec = c[0] / max(c[1], 1), c[2] / max(c[3], 1)
        f = 2 * prec * rec / max(prec + rec, 1e-12)
        m = {k: float(np.mean([r[name][k] for r in recs])) for k in ("covering", "pri", "voi", "regions")}
        rows[name] = {**m, "f": f}
        label = "native (481x321)" if name == "native" else "x4 (1924x1284), labels back to native"
        print(f"| {label} | {m['covering']:.4f} | {m['pri']:.4f} | {m['voi']:.4f} | {f:.4f} | {m['regions']:.1f} | "
              f"{np.median([r[secs] for r in recs]):.2f} |")
    d = {k: rows["x4"][k] - rows["native"][k] for k in ("covering", "pri", "voi", "f")}
    print(f"| difference (x4 - native) | {d['covering']:+.4f} | {d['pri']:+.4f} | {d['voi']:+.4f} | "
          f"{d['f']:+.4f} | | |")
    ok = [r["placement"][0] for r in recs]
    total = [r["placement"][1] for r in recs]
    print()
    for key, what in (("placement", "x4 result vs the x4-upscaled native boundaries"),
                      ("refinement", "x4 result vs its own working-scale labels upscaled x4 (refinement alone)"),
                      ("stability", "native image re-encoded JPEG q95 vs native (the recipe's stability floor)")):
        a = [r[key][0] for r in recs]
        b = [r[key][1] for r in recs]
        per_image = [x / y for x, y in zip(a, b) if y]
        print(f"within 2 px at 1924x1284, {what}: {sum(a) / max(sum(b), 1):.2%} of boundary pixels "
              f"(per image: median {np.median(per_image):.2%}, min {min(per_image):.2%})")
    within = abs(d["covering"]) <= 0.01 and abs(d["pri"]) <= 0.01 and abs(d["f"]) <= 0.01 and abs(d["voi"]) <= 0.05
    print(f"bounds (covering, PRI, F within 0.01; VOI within 0.05): {'met' if within else 'NOT met'}; "
          f"placement >= 90%: {'met' if sum(ok) >= 0.9 * sum(total) else 'NOT met'}")


if __name__ == "__main__":
    main()
