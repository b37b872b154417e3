"""The learned boundary detector and its ultrametric contour map on a BSDS500 split.

Per image (one core per worker, times measured inside the worker):

- the detector alone: the thinned soft map (``segensemble edges``) scored as
  the Berkeley benchmark scores a soft boundary map (99 thresholds);
- its hierarchy: watershed + ultrametric contour map, written as a BSDS
  ``ucm2`` and scored like gPb-owt-ucm's result files (boundaries and regions,
  99 thresholds: ODS, OIS, AP);
- the ``ucm`` segmenter's single segmentation at its default threshold
  (covering, PRI, VOI, boundary F).

Usage::

    python benchmarks/boundaries_on_bsds.py --split val [--limit 20] [--jobs 2] [--thresholds 0.2,0.25,0.3]
    python benchmarks/boundaries_on_bsds.py --split test --model boundary-v2 --detector-only   # fast's detector
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import multiprocessing  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402


def _image(task):
    root, split, image_id, thresholds, min_size, model, detector_only = task
    from segensemble.datasets import BSDS500
    from segensemble.edges import detect_boundaries, non_maximum_suppression
    from segensemble.edges.ucm import boundary_hierarchy
    from segensemble.evaluation.benchmark import MachineResult, evaluate_image

    ds = BSDS500(root)
    img, gt = ds.image(split, image_id), ds.ground_truth(split, image_id)
    t0 = time.perf_counter()
    p = detect_boundaries(img, model=model, nms=False)
    t1 = time.perf_counter()
    thin = non_maximum_suppression(p)
    nms_seconds = time.perf_counter() - t1
    detector = evaluate_image(MachineResult("boundary", thin), gt, region=False)
    if detector_only:
        return {"detector": detector, "seconds": (t1 - t0, nms_seconds, 0.0)}
    t2 = time.perf_counter()
    hierarchy = boundary_hierarchy(p, min_size=min_size)
    ucm2 = hierarchy.ucm2()
    t3 = time.perf_counter()
    ucm = evaluate_image(MachineResult("ucm2", ucm2), gt)
    cuts = {t: evaluate_image(MachineResult("segs", [hierarchy.cut(threshold=t)]), gt) for t in thresholds}
    return {"detector": detector, "ucm": ucm, "cuts": cuts, "seconds": (t1 - t0, nms_seconds, t3 - t2)}


def main() -> None:
    from segensemble.datasets import BSDS500
    from segensemble.evaluation.aggregate import collect_boundaries, collect_regions
    from segensemble.segmenters.ucm import UCM_MIN_SIZE, UCM_THRESHOLD

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT",
                                                     os.path.join("..", "shared", "bsds500", "BSDS500")))
    ap.add_argument("--split", default="val", choices=("train", "val", "test"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--thresholds", default=str(UCM_THRESHOLD), help="cuts of the hierarchy to score as one "
                                                                     "segmentation (comma-separated)")
    ap.add_argument("--min-size", type=int, default=UCM_MIN_SIZE)
    ap.add_argument("--model", default=None, help="shipped detector model (default: boundary-v1)")
    ap.add_argument("--detector-only", action="store_true", help="score the detector alone (no UCM)")
    args = ap.parse_args()

    ds = BSDS500(args.bsds)
    ids = ds.ids(args.split)[: args.limit]
    thresholds = [float(t) for t in args.thresholds.split(",")]
    tasks = [(str(ds.data), args.split, i, thresholds, args.min_size, args.model, args.detector_only) for i in ids]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        rows = list(pool.map(_image, tasks))
    wall = time.perf_counter() - start
    det = collect_boundaries([r["detector"].boundary for r in rows])
    sec = np.array([r["seconds"] for r in rows])
    print(f"{len(ids)} images of BSDS500 {args.split}, {args.jobs} workers, {wall:.0f} s wall, "
          f"model {args.model or 'boundary-v1'}\n")
    print("| result | covering | PRI | VOI | boundary F | AP |\n|---|---|---|---|---|---|")
    print(f"| detector (thinned soft map), ODS | | | | {det.ods_F:.4f} | {det.ap:.4f} |")
    print(f"| detector, OIS | | | | {det.ois_F:.4f} | |")
    if args.detector_only:
        print(f"\nseconds per image (median / max, one core): detector {np.median(sec[:, 0]):.2f} / "
              f"{sec[:, 0].max():.2f}")
        return
    ub, ur = collect_boundaries([r["ucm"].boundary for r in rows]), collect_regions([r["ucm"].region for r in rows])
    print(f"| UCM hierarchy, ODS | {ur.covering_ods:.4f} | {ur.pri_ods:.4f} | {ur.voi_ods:.4f} | {ub.ods_F:.4f} | "
          f"{ub.ap:.4f} |")
    print(f"| UCM hierarchy, OIS | {ur.covering_ois:.4f} | {ur.pri_ois:.4f} | {ur.voi_ois:.4f} | {ub.ois_F:.4f} | |")
    for t in thresholds:
        cb = collect_boundaries([r["cuts"][t].boundary for r in rows])
        cr = collect_regions([r["cuts"][t].region for r in rows])
        print(f"| `ucm` segmenter, threshold {t} | {cr.covering_ods:.4f} | {cr.pri_ods:.4f} | {cr.voi_ods:.4f} | "
              f"{cb.ods_F:.4f} | |")
    print(f"\nseconds per image (median / max, one core): detector {np.median(sec[:, 0]):.2f} / {sec[:, 0].max():.2f}, "
          f"NMS {np.median(sec[:, 1]):.2f}, watershed + UCM {np.median(sec[:, 2]):.2f} / {sec[:, 2].max():.2f}, "
          f"detector + UCM {np.median(sec[:, 0] + sec[:, 2]):.2f} / {(sec[:, 0] + sec[:, 2]).max():.2f}")


if __name__ == "__main__":
    main()
