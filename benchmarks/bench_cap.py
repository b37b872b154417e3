"""CAP on BSDS500: ensemble stability before/after, and consensus quality with and without it.

For the first N images of the BSDS500 val split (default 50) the default
segmenters of ``segensemble fuse`` (slic, felzenszwalb) make the ensemble
(``--segmenters recipe``: the default recipe's members, as ``fuse --agree``);
CAP (32 visual words, T = 4 rounds) makes it agree. Printed: the average
pairwise Jaccard stability before and after CAP, PRI / VOI (mean over images)
of SCCC and of EAC on the original and on the agreed ensemble (K fused
regions, default 8, or each method's own criterion with ``--k auto``), and
seconds per image (one thread) of CAP and of
each consensus. ``--baseline`` also runs CAP evaluating every target of every
move (no gain bounds) in the same process, checks it agrees label for label,
and prints both times and their ratio. The paper reports large stability gains and better consensus
quality after CAP (on documents and ratings); this checks image segmentation.

Usage::

    python benchmarks/bench_cap.py [--bsds ROOT] [--images 50] [--segmenters slic,felzenszwalb] [--k 8]
                                   [--baseline]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from segensemble import Ensemble, consensus  # noqa: E402
from segensemble.consensus import agreement  # noqa: E402
from segensemble.consensus.agreement import CAP  # noqa: E402
from segensemble.datasets import BSDS500  # noqa: E402
from segensemble.evaluation import ensemble_stability  # noqa: E402
from segensemble.evaluation.regions import region_scores  # noqa: E402
from segensemble.pipeline import parse_segmenter_list, run_segmenters  # noqa: E402
from segensemble.pipeline.recipes import load_recipe  # noqa: E402

HERE = Path(__file__).resolve().parent
METHODS = ("sccc", "eac")


def _agree_every_target(ens, img):
    """CAP with every target of every move evaluated (the climb without its gain bounds): the baseline."""
    climb = agreement._climb
    agreement._climb = functools.partial(climb, prune=False)
    try:
        return CAP(random_state=0).fit_transform(ens, image=img)
    finally:
        agreement._climb = climb


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT", HERE.parent.parent / "shared/bsds500/BSDS500"))
    ap.add_argument("--images", type=int, default=50)
    ap.add_argument("--segmenters", default="slic,felzenszwalb")
    ap.add_argument("--k", default="8", help="fused regions, or 'auto'")
    ap.add_argument("--baseline", action="store_true", help="also time CAP evaluating every target (no bounds)")
    args = ap.parse_args()
    ds = BSDS500(args.bsds)
    specs = (list(load_recipe("default").segmenters) if args.segmenters == "recipe"
             else parse_segmenter_list(args.segmenters))
    k = args.k if args.k == "auto" else int(args.k)
    stab = {"before": [], "after": []}
    scores = {(m, a): [] for m in METHODS for a in (False, True)}
    secs = {"cap": [], "every": []} | {(m, a): [] for m in METHODS for a in (False, True)}
    for i in ds.ids("val")[: args.images]:
        img, gt = ds.image("val", i), ds.ground_truth("val", i)
        ens = Ensemble.from_segmentations(run_segmenters(img, specs, rng=0), img)
        t = time.perf_counter()
        agreed = CAP(random_state=0).fit_transform(ens, image=img)
        secs["cap"].append(time.perf_counter() - t)
        if args.baseline:
            t = time.perf_counter()
            every = _agree_every_target(ens, img)
            secs["every"].append(time.perf_counter() - t)
            assert np.array_equal(every.labels, agreed.labels), i
        stab["before"].append(ensemble_stability(ens))
        stab["after"].append(ensemble_stability(agreed))
        for a, e in ((False, ens), (True, agreed)):
            for m in METHODS:
                t = time.perf_counter()
                labels = consensus.get(m)(n_clusters=k).fit(e).labels_
                secs[(m, a)].append(time.perf_counter() - t)
                scores[(m, a)].append(region_scores(e.to_image(labels), gt))
    b, a = np.mean(stab["before"]), np.mean(stab["after"])
    print(f"{len(stab['before'])} BSDS500 val images, members: {args.segmenters}, K = {args.k}")
    print(f"ensemble stability (mean pairwise Jaccard): before CAP {b:.4f}, after {a:.4f} ({(a - b) / b:+.1%}); "
          f"higher after CAP on {np.mean(np.array(stab['after']) > np.array(stab['before'])):.0%} of the images")
    print(f"CAP: {np.mean(secs['cap']):.2f} s per image")
    if args.baseline:
        print(f"CAP evaluating every target (no gain bounds; the same labels): {np.mean(secs['every']):.2f} s per "
              f"image; ratio {np.mean(secs['every']) / np.mean(secs['cap']):.2f}x")
    print(f"{'consensus':<10} {'CAP':<6} {'PRI':>7} {'VOI':>7} {'regions':>8} {'s/img':>7}")
    for m in METHODS:
        for agreed_ in (False, True):
            r = scores[(m, agreed_)]
            print(f"{m:<10} {'yes' if agreed_ else 'no':<6} {np.mean([x['pri'] for x in r]):>7.4f} "
                  f"{np.mean([x['voi'] for x in r]):>7.4f} {np.mean([x['n_segments'] for x in r]):>8.1f} "
                  f"{np.mean(secs[(m, agreed_)]):>7.3f}")


if __name__ == "__main__":
    main()
