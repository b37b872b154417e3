"""Fit the learned merging criterion of ``merge`` on BSDS500 train; choose its cut on val.

Protocol (train and val only; the test split is never read):

1. Every train image is segmented by the default recipe's members and merged
   with the plain policy (``criterion='mean'``, ``gradient_weight=0.5``,
   ``min_size=200``). Before every merge the two regions' pair features are
   recorded with a soft target: the probability, averaged over the human
   annotators, that a pixel of one region and a pixel of the other lie in
   *different* ground-truth segments. Each merge is weighted by the square
   root of the smaller region's size (large decisions matter more to the
   region scores). This trains on the merges a merging policy actually makes
   (Nunez-Iglesias et al., PLoS ONE 2013).
2. Two logistic models are fitted (scikit-learn, C = 10): one on the
   :data:`~segensemble.consensus.merging.PAIR_FEATURES` with the unweighted
   vote (the built-in ``LEARNED_COEFFICIENTS``), and one with one coefficient
   per member, written as ``member_weights`` plus a vote coefficient equal to
   their sum (the ``default`` recipe).
   With ``--rounds R`` (R > 1) the per-member model is trained on the merges
   it makes itself: round r records every train image's merges under the
   learned criterion of round r - 1 (the merges the shipped policy meets,
   not the plain policy's) and refits on them alone — the on-policy training
   of Nunez-Iglesias et al. (2013), their "active learning". The generic
   model stays the first round's.
3. With ``--val N``, the first N val images are fused with the per-member
   model and cut at every ``--thresholds`` value (post-processed like the
   recipe); the table shows the members and every cut, so the threshold is
   chosen on val. ``--raw`` adds every cut without the post-processing
   (connected relabelling, pieces under 200 pixels merged), to measure it.

Usage::

    python benchmarks/train_merge_model.py                      # all 200 train images, 2 processes
    python benchmarks/train_merge_model.py --train 100 --val 100
    python benchmarks/train_merge_model.py --rounds 2 --val 100   # default@8's coefficients
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from segensemble import Ensemble  # noqa: E402
from segensemble.consensus.merging import (  # noqa: E402
    PAIR_FEATURES,
    BoundaryMerge,
    cut_hierarchy,
    learned_key,
    normalised_member_weights,
    pair_features,
    region_merger,
)
from segensemble.datasets import BSDS500  # noqa: E402
from segensemble.evaluation.aggregate import collect_boundaries, collect_regions  # noqa: E402
from segensemble.evaluation.benchmark import MachineResult, evaluate_image  # noqa: E402
from segensemble.features import boundary_strength  # noqa: E402
from segensemble.pipeline import run_segmenters  # noqa: E402
from segensemble.pipeline.postprocess import postprocess  # noqa: E402
from segensemble.pipeline.recipes import load_recipe  # noqa: E402

MIN_SIZE = 200
#: Workers are spawned: a process forked after LightGBM (the boundary detector) has run can hang.
_SPAWN = multiprocessing.get_context("spawn")


def _ensemble(ds, split, image_id, segmenters, boundary):
    """The members' ensemble, the image and the boundary evidence (colour gradient or the learned detector)."""
    image = ds.image(split, image_id)
    ens = Ensemble.from_segmentations(run_segmenters(image, segmenters, rng=0), image)
    kind, _, model = boundary.partition(":")  # 'learned' or 'learned:NAME' (a shipped detector model)
    if kind == "learned":
        from segensemble.edges import detect_boundaries

        return ens, image, detect_boundaries(image, model=model or None, nms=False).astype(np.float64)
    return ens, image, boundary_strength(image)


def _contingency(ensemble, gt) -> list:
    """Pixels of every atom in every ground-truth segment, one table per annotator."""
    idx, n = ensemble.index.ravel(), ensemble.n_objects
    out = []
    for seg in gt.segmentations:
        g = np.unique(np.asarray(seg).ravel(), return_inverse=True)[1]
        k = int(g.max()) + 1
        out.append(np.bincount(idx * k + g, minlength=n * k).reshape(n, k).astype(np.float64))
    return out


def record_merges(args):
    """Pair features, per-member border votes, soft targets and weights of one image's merges.

    ``policy``: None merges by the plain policy; (coefficients, member_weights) by that learned criterion, as
    ``BoundaryMerge(criterion='learned')`` keys it — the recorded vote is then the members' unweighted share (the
    mean of their separations), as in the plain rounds."""
    root, image_id, segmenters, boundary, policy = args
    ds = BSDS500(root)
    ens, image, gradient = _ensemble(ds, "train", image_id, segmenters, boundary)
    weights = None if policy is None else normalised_member_weights(policy[1], ens.n_members)
    merger = region_merger(ens, gradient, member_weights=weights, per_member=True)
    tables = _contingency(ens, ds.ground_truth("train", image_id))
    rows = []

    def on_merge(m, keep, gone):
        su, sv = m.size[keep], m.size[gone]
        same = np.mean([t[keep] @ t[gone] for t in tables]) / (su * sv)
        features, votes = pair_features(m, keep, gone), m.border_mean(keep, gone)[2:]
        if policy is not None:
            features[0] = votes.mean()
        rows.append((*features, *votes, 1.0 - same, np.sqrt(min(su, sv))))
        for t in tables:
            t[keep] += t[gone]

    def plain(m, u, v):  # the 'mean' policy with gradient_weight 0.5
        b = m.border_mean(u, v)
        return 0.5 * b[0] + 0.5 * b[1]

    if policy is None:
        merger.run(plain, min_size=MIN_SIZE, on_merge=on_merge)
    else:
        merger.run(learned_key(policy[0]), min_size=MIN_SIZE, on_merge=on_merge, batched=True)
    return np.array(rows)


def fit_logistic(X, y, w):
    """Weighted logistic regression on soft targets (each row as a positive and a negative sample)."""
    model = LogisticRegression(C=10.0, max_iter=5000)
    model.fit(np.concatenate([X, X]), np.r_[np.ones(len(y)), np.zeros(len(y))], sample_weight=np.r_[w * y, w * (1 - y)])
    return model.coef_[0], float(model.intercept_[0])


def _round(x) -> float:
    return round(float(x), 3)


def evaluate_val(args):
    root, image_id, coefficients, member_weights, thresholds, raw, segmenters, boundary = args
    ds = BSDS500(root)
    ens, image, gradient = _ensemble(ds, "val", image_id, segmenters, boundary)
    gt = ds.ground_truth("val", image_id)
    est = BoundaryMerge(criterion="learned", coefficients=coefficients, member_weights=member_weights,
                        min_size=MIN_SIZE).fit(ens, gradient=gradient)
    out = [evaluate_image(MachineResult("segs", [ens.to_image(ens.labels[:, j])]), gt) for j in range(ens.n_members)]
    for t in thresholds:
        cut = ens.to_image(cut_hierarchy(ens.n_objects, est.merges_, est.heights_, threshold=t))
        out.append(evaluate_image(MachineResult("segs", [postprocess(cut, image, connected=True,
                                                                     min_size=MIN_SIZE)]), gt))
        if raw:
            out.append(evaluate_image(MachineResult("segs", [cut]), gt))
    return out


def fit_models(ds, a):
    """Record the train merges, fit both models, print (and with ``--out`` save) them."""
    t0 = time.perf_counter()
    m, nf = len(a.segmenters), len(PAIR_FEATURES)
    policy, generic = None, None
    for _ in range(a.rounds):  # round 1: the plain policy's merges; then the last fit's own
        jobs = [(a.bsds, i, a.segmenters, a.boundary, policy) for i in ds.ids("train")[: a.train]]
        with _SPAWN.Pool(a.jobs) as pool:
            data = np.concatenate(pool.map(record_merges, jobs, chunksize=1))
        X, per_member, y, w = data[:, :nf], data[:, nf:nf + m], data[:, -2], data[:, -1]
        if generic is None:
            coef, bias = fit_logistic(X, y, w)
            generic = {k: _round(c) for k, c in zip(PAIR_FEATURES, coef)} | {"bias": _round(bias)}
        coef_m, bias_m = fit_logistic(np.column_stack([per_member, X[:, 1:]]), y, w)
        weights = [_round(c) for c in coef_m[:m]]
        recipe = {"vote": _round(sum(weights))} | {k: _round(c) for k, c in zip(PAIR_FEATURES[1:], coef_m[m:])}
        recipe["bias"] = _round(bias_m)
        policy = (recipe, weights)
    result = {"train_images": a.train, "rounds": a.rounds, "merges": len(y), "generic": generic,
              "member_weights": weights, "coefficients": recipe, "segmenters": a.segmenters, "boundary": a.boundary}
    print(json.dumps(result, indent=1))
    print(f"fitted on {len(y)} merges of {a.train} train images (round {a.rounds}) in {time.perf_counter() - t0:.0f} s")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)
    return recipe, weights


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT"),
                    help="BSDS500 root (default: $SEGENSEMBLE_BSDS_ROOT)")
    ap.add_argument("--train", type=int, default=200,
                    help="train images used (first N); 0: no fitting, evaluate the default recipe's coefficients")
    ap.add_argument("--val", type=int, default=0, help="val images for choosing the cut (first N)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of on-policy training of the per-member model "
                                                          "(1: the plain policy's merges only)")
    ap.add_argument("--thresholds", default="0.35,0.4,0.45,0.5")
    ap.add_argument("--raw", action="store_true", help="also score every cut without post-processing")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", help="write the fitted coefficients as JSON here")
    ap.add_argument("--recipe", default="default", help="recipe whose members (and, with --train 0, fitted "
                                                       "coefficients) are used (name or name@version)")
    ap.add_argument("--segmenters", help="comma-separated members instead of the recipe's")
    ap.add_argument("--boundary", default=None,
                    help="boundary evidence: 'gradient', 'learned' or 'learned:NAME' (a shipped detector model; "
                         "default: the recipe's)")
    ap.add_argument("--val-model", default=None,
                    help="shipped detector model used instead of the recipe's in the val evaluation (ucm members "
                         "and boundary evidence): boundary-v2-train, trained on train only, when the recipe's "
                         "detector was refitted on train + val")
    a = ap.parse_args(argv)
    base = load_recipe(a.recipe)
    a.segmenters = a.segmenters.split(",") if a.segmenters else list(base.segmenters)
    a.boundary = a.boundary or (base.boundary or "gradient")
    if not a.bsds:
        ap.error("--bsds: give the BSDS500 root (or set SEGENSEMBLE_BSDS_ROOT)")
    if a.rounds < 1:
        ap.error(f"--rounds: expected at least 1 (the plain policy's round), got {a.rounds}")
    ds = BSDS500(a.bsds)
    if a.train == 0:  # evaluate the shipped recipe's model
        fitted = base.method_params()
        recipe, weights = fitted["coefficients"], fitted["member_weights"]
    else:
        recipe, weights = fit_models(ds, a)
    if a.val:
        ths = [float(t) for t in a.thresholds.split(",")]
        segmenters, boundary = a.segmenters, a.boundary
        if a.val_model:  # the same members and evidence from a detector that never saw val
            fitted_model = boundary.partition(":")[2] or "boundary-v1"
            segmenters = [s.replace(f"model={fitted_model}", f"model={a.val_model}") for s in segmenters]
            boundary = f"learned:{a.val_model}"
        jobs = [(a.bsds, i, recipe, weights, ths, a.raw, segmenters, boundary) for i in ds.ids("val")[: a.val]]
        with _SPAWN.Pool(a.jobs) as pool:
            res = pool.map(evaluate_val, jobs, chunksize=1)
        names = segmenters + [n for t in ths for n in [f"merge learned t={t:g}"] + a.raw * ["  without post-processing"]]
        print(f"\nval, first {a.val} images (official aggregation)")
        print(f"{'':<32}{'covering':>9}{'PRI':>8}{'VOI':>8}{'F':>8}")
        for j, name in enumerate(names):
            g = collect_regions([r[j].region for r in res])
            b = collect_boundaries([r[j].boundary for r in res])
            print(f"{name:<32}{g.covering_ods:>9.4f}{g.pri_ods:>8.4f}{g.voi_ods:>8.4f}{b.ods_F:>8.4f}")


if __name__ == "__main__":
    main()
