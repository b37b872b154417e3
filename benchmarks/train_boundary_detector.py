"""Train the learned boundary detector on BSDS500 train; measure it on val.

Protocol (train and val only; the test split is never read):

1. Every train image's :func:`~segensemble.edges.features.boundary_features`
   are computed; the target of a pixel is the share of the human annotators
   who drew a boundary within one pixel of it (4-neighbourhood). Per image,
   up to 2 500 pixels with a positive target and 3 500 with target 0 are
   sampled (a fixed seed per image).
2. Stage 1: LightGBM, cross-entropy objective on the soft target
   (``--rounds`` trees of 63 leaves, learning rate 0.1).
3. With ``--stages 2`` (auto-context): two stage-1 models, each trained on
   half of the train images, give every train image a probability map it
   was not trained on; stage 2 learns from the features plus
   :func:`~segensemble.edges.features.context_features` of that map. The
   shipped stage 1 is trained on all of train.
4. The model is written (gzip JSON, LightGBM text inside) and, with
   ``--val N``, scored on the first N val images as the Berkeley boundary
   benchmark scores a soft map (99 thresholds; non-maximum suppression
   first), so the settings are chosen on val.

Usage::

    python benchmarks/train_boundary_detector.py --out segensemble/edges/models/boundary-v1.json.gz --val 100
    python benchmarks/train_boundary_detector.py --stages 1 --rounds 300 --val 20 --out /tmp/m.json.gz
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
from scipy import ndimage  # noqa: E402

POSITIVES, NEGATIVES = 2500, 3500
#: Distance (pixels) within which ``--near-negatives`` draws negatives beside a contour.
NEAR_DISTANCE = 6
#: Workers are spawned, not forked: a process forked after LightGBM has run its OpenMP threads can hang.
_SPAWN = multiprocessing.get_context("spawn")


def _params(threads: int, learning_rate: float = 0.1, leaves: int = 63) -> dict:
    return dict(objective="cross_entropy", learning_rate=learning_rate, num_leaves=leaves, min_data_in_leaf=200,
                feature_fraction=0.8, bagging_fraction=0.5, bagging_freq=1, seed=0, num_threads=threads, verbose=-1)


def boundary_target(gt) -> np.ndarray:
    """Share of the annotators with a boundary pixel within one pixel (4-neighbourhood) of each pixel."""
    cross = ndimage.generate_binary_structure(2, 1)
    return np.mean([ndimage.binary_dilation(b, cross) for b in gt.boundaries], axis=0)


def _sample(k: int, target: np.ndarray, where=None, rows=(POSITIVES, NEGATIVES), near: float = 0.0) -> np.ndarray:
    """Up to ``rows`` = (positives, negatives) pixels with a positive target and with target 0 (among ``where``).

    With ``near`` > 0, that share of the negatives is drawn from the target-0 pixels within
    ``NEAR_DISTANCE`` pixels of a positive one (the pixels beside a contour, which non-maximum suppression
    must rank below it), the rest from all target-0 pixels.
    """
    rng = np.random.default_rng(k)
    allowed = np.ones(target.shape, bool) if where is None else where
    zero = allowed & (target == 0)
    pos, neg = np.flatnonzero(allowed & (target > 0)), np.flatnonzero(zero)
    n_pos, n_neg = rows
    picked = [rng.choice(pos, min(len(pos), n_pos), replace=False)]
    if near > 0:
        close = ndimage.distance_transform_edt(target == 0) <= NEAR_DISTANCE
        beside = np.flatnonzero(zero & close)
        take = rng.choice(beside, min(len(beside), round(near * n_neg)), replace=False)
        picked.append(take)
        neg = np.setdiff1d(neg, take, assume_unique=True)
        n_neg -= len(take)
    picked.append(rng.choice(neg, min(len(neg), n_neg), replace=False))
    return np.concatenate(picked)


def _rows(task):
    """Sampled feature rows and targets of one train image (with the context of ``stage1`` when given)."""
    root, k, (split, image_id), stage1, stride, feature_set, candidates, rows, near = task
    from segensemble.datasets import BSDS500
    from segensemble.edges.detector import load_boundary_model, predict_probability
    from segensemble.edges.features import boundary_features, context_features

    ds = BSDS500(root)
    features = boundary_features(ds.image(split, image_id), feature_set=feature_set)
    target = boundary_target(ds.ground_truth(split, image_id))
    where = None
    if stage1 is not None:
        booster = load_boundary_model(stage1).stages[0]
        p = predict_probability(booster, features, stride)
        features = np.concatenate([features, context_features(p)], axis=-1)
        if candidates is not None:  # stage 2 learns only the pixels it will be asked about
            where = p >= candidates
    idx = _sample(k, target, where, rows, near)
    return features.reshape(-1, features.shape[-1])[idx], target.ravel()[idx]


def _gather(root, ids, jobs, feature_set, stage1_of=None, stride=2, candidates=None, rows=(POSITIVES, NEGATIVES),
            near=0.0):
    tasks = [(root, k, i, None if stage1_of is None else stage1_of(k), stride, feature_set, candidates, rows, near)
             for k, i in enumerate(ids)]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_SPAWN) as pool:
        parts = list(pool.map(_rows, tasks))
    return [p[0] for p in parts], [p[1] for p in parts]


def _score(task):
    root, image_id, model_path = task
    from segensemble.datasets import BSDS500
    from segensemble.edges import detect_boundaries
    from segensemble.evaluation.benchmark import MachineResult, evaluate_image

    ds = BSDS500(root)
    start = time.perf_counter()
    edges = detect_boundaries(ds.image("val", image_id), model=model_path)
    seconds = time.perf_counter() - start
    ev = evaluate_image(MachineResult("boundary", edges), ds.ground_truth("val", image_id), region=False)
    return ev.boundary, seconds


def main() -> None:
    import lightgbm

    from segensemble.datasets import BSDS500
    from segensemble.edges.detector import BoundaryModel
    from segensemble.edges.features import FEATURE_SETS
    from segensemble.evaluation.aggregate import collect_boundaries

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT",
                                                     os.path.join("..", "shared", "bsds500", "BSDS500")))
    ap.add_argument("--train", type=int, default=None, help="only the first N train images")
    ap.add_argument("--refit-on-val", action="store_true",
                    help="train on train + val (the papers' convention for the shipped model, once the settings "
                         "are chosen on val; --val is then refused: val is no longer held out)")
    ap.add_argument("--val", type=int, default=0, help="score the model on the first N val images")
    ap.add_argument("--stages", type=int, default=2, choices=(1, 2))
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--stage2-rounds", type=int, default=None, help="trees of stage 2 (default: --rounds)")
    ap.add_argument("--stage2-learning-rate", type=float, default=None,
                    help="learning rate of stage 2 (default: --learning-rate)")
    ap.add_argument("--leaves", type=int, default=63, help="leaves per tree")
    ap.add_argument("--stride", type=int, default=2, help="prediction stride of the last stage")
    ap.add_argument("--context-stride", type=int, default=3,
                    help="prediction stride of stage 1 when it feeds stage 2 (training uses --stride)")
    ap.add_argument("--features", default=FEATURE_SETS[0], choices=FEATURE_SETS,
                    help="feature set (v2: the coarse oriented gradients at half size, a sixth of the cost)")
    ap.add_argument("--candidates", type=float, default=None,
                    help="stage 2 predicts only where stage 1 reaches this probability (default: everywhere)")
    ap.add_argument("--train-on-candidates", action="store_true",
                    help="sample stage 2's training pixels only where the held-out stage 1 reaches --candidates")
    ap.add_argument("--rows-per-image", type=int, nargs=2, default=(POSITIVES, NEGATIVES), metavar=("POS", "NEG"),
                    help="pixels sampled per train image with a positive target and with target 0")
    ap.add_argument("--near-negatives", type=float, default=0.0,
                    help=f"share of the negatives drawn within {NEAR_DISTANCE} px of a contour (default 0)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", required=True, help="model file to write (.json.gz)")
    args = ap.parse_args()
    if args.train_on_candidates and (args.candidates is None or args.stages != 2):
        ap.error("--train-on-candidates: needs --candidates and --stages 2")
    if args.refit_on_val and args.val:
        ap.error("--val: val is part of the training data with --refit-on-val; choose the settings first")
    if not 0.0 <= args.near_negatives <= 1.0:
        ap.error(f"--near-negatives: expected a share in [0, 1], got {args.near_negatives}")
    if min(args.rows_per_image) < 1:
        ap.error(f"--rows-per-image: expected two positive counts, got {args.rows_per_image}")

    start = time.perf_counter()
    ds = BSDS500(args.bsds)
    root = str(ds.data)
    ids = [("train", i) for i in ds.ids("train")[: args.train]]
    if args.refit_on_val:
        ids += [("val", i) for i in ds.ids("val")]
    rows = tuple(args.rows_per_image)
    X, Y = _gather(root, ids, args.jobs, args.features, rows=rows, near=args.near_negatives)
    print(f"stage 1 rows: {sum(len(y) for y in Y)} from {len(ids)} images ({time.perf_counter() - start:.0f} s)",
          flush=True)

    def fit(parts, rounds=args.rounds, learning_rate=args.learning_rate):
        xs, ys = [X[k] for k in parts], [Y[k] for k in parts]
        data = lightgbm.Dataset(np.concatenate(xs), np.concatenate(ys))
        return lightgbm.train(_params(args.jobs, learning_rate, args.leaves), data, rounds)

    stages = [fit(range(len(ids)))]
    info = {"train_images": len(ids), "splits": sorted({split for split, _ in ids}), "rounds": args.rounds,
            "stages": args.stages,
            "learning_rate": args.learning_rate, "leaves": args.leaves,
            "rows_per_image": list(rows)}
    if args.near_negatives:
        info["near_negatives"] = [args.near_negatives, NEAR_DISTANCE]
    if args.stages == 2:  # out-of-fold stage-1 maps for the context of stage 2
        folds = [range(0, len(ids), 2), range(1, len(ids), 2)]
        tmp = []
        for f, fold in enumerate(folds):
            path = f"{args.out}.fold{f}.tmp"
            BoundaryModel((fit(fold),), (args.stride,), {}, args.features).to_file(path)
            tmp.append(path)
        X, Y = _gather(root, ids, args.jobs, args.features, stage1_of=lambda k: tmp[1 - k % 2], stride=args.stride,
                       candidates=args.candidates if args.train_on_candidates else None, rows=rows,
                       near=args.near_negatives)
        for path in tmp:
            os.remove(path)
        rounds, rate = args.stage2_rounds or args.rounds, args.stage2_learning_rate or args.learning_rate
        stages.append(fit(range(len(ids)), rounds, rate))
        if args.stage2_rounds or args.stage2_learning_rate:
            info["stage2_rounds"], info["stage2_learning_rate"] = rounds, rate
    info["train_seconds"] = round(time.perf_counter() - start, 1)
    strides = (args.stride,) if args.stages == 1 else (args.context_stride, args.stride)
    info["strides"] = list(strides)
    info["features"], info["candidates"] = args.features, args.candidates
    if args.train_on_candidates:
        info["stage2_trained_on_candidates"] = True
    out = BoundaryModel(tuple(stages), strides, info, args.features, args.candidates).to_file(args.out)
    print(f"trained in {info['train_seconds']} s -> {out}", flush=True)
    if args.val:
        vids = ds.ids("val")[: args.val]
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=_SPAWN) as pool:
            res = list(pool.map(_score, [(root, i, str(out)) for i in vids]))
        s = collect_boundaries([r[0] for r in res])
        info["val"] = {"images": len(vids), "ods_f": round(float(s.ods_F), 4), "ois_f": round(float(s.ois_F), 4),
                       "ap": round(float(s.ap), 4), "seconds_median": round(float(np.median([r[1] for r in res])), 3)}
        BoundaryModel(tuple(stages), strides, info, args.features, args.candidates).to_file(args.out)
        print(f"val ({len(vids)} images, 99 thresholds): ODS F {s.ods_F:.4f}  OIS F {s.ois_F:.4f}  AP {s.ap:.4f}  "
              f"detector {info['val']['seconds_median']:.2f} s / image (median, one core)")


if __name__ == "__main__":
    main()
