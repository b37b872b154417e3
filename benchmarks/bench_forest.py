"""Seconds of the boundary detector's tree ensembles: LightGBM's C interface against the compiled tree walker.

For every shipped detector model and stage, the rows the detector predicts on
BSDS500 val images (stage 1 at its stride on every pixel; stage 2 at its
stride, on the candidates only when the model has a candidate threshold)
are predicted by :class:`~segensemble.edges.booster.TextBooster` (LightGBM)
and by :class:`~segensemble.edges.forest.CompiledForest`, one thread, best of
``--repeat``, in the same process; the predictions are asserted equal bit for
bit. Then the whole detector (features + both stages) per image with each.

Usage::

    python benchmarks/bench_forest.py [--bsds ROOT] [--images 5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace

import numpy as np


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _stage_rows(model, image):
    """The rows each stage of ``model`` predicts on ``image`` (as the detector gathers them)."""
    from segensemble.edges.detector import predict_probability
    from segensemble.edges.features import boundary_features, context_features

    feats = boundary_features(image, feature_set=model.features)
    s1, s2 = model.strides[0], model.strides[-1]
    rows = [feats[::s1, ::s1].reshape(-1, feats.shape[-1])]
    if len(model.stages) > 1:
        p = predict_probability(model.stages[0], feats, s1)
        both = np.concatenate([feats, context_features(p)], axis=-1)[::s2, ::s2].reshape(-1, rows[0].shape[1] + 52)
        if model.candidates is not None:
            both = both[p[::s2, ::s2].ravel() >= model.candidates]
        rows.append(np.ascontiguousarray(both))
    return rows


def main() -> None:
    from segensemble.datasets import BSDS500
    from segensemble.edges.booster import TextBooster
    from segensemble.edges.detector import _RECENT, boundary_models, detect_boundaries, load_boundary_model
    from segensemble.edges.forest import CompiledForest

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bsds", default=os.environ.get("SEGENSEMBLE_BSDS_ROOT"))
    ap.add_argument("--images", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not args.bsds:
        ap.error("--bsds: give the BSDS500 root (or set SEGENSEMBLE_BSDS_ROOT)")
    ds = BSDS500(args.bsds)
    images = [ds.image("val", i) for i in ds.ids("val")[: args.images]]
    print(f"{'model, stage':<28}{'rows/image':>11}{'trees':>7}{'LightGBM s':>12}{'compiled s':>12}{'ratio':>7}")
    for name in boundary_models():
        model = load_boundary_model(name)
        per_image = [_stage_rows(model, img) for img in images]
        for k, stage in enumerate(model.stages):
            text = stage.model_to_string()
            lgbm, ours = TextBooster(text), CompiledForest(text)
            rows = [r[k] for r in per_image]
            for r in rows:
                assert np.array_equal(lgbm.predict(r, num_threads=1), ours.predict(r)), (name, k)
            a = _best(lambda: [lgbm.predict(r, num_threads=1) for r in rows], args.repeat) / len(rows)
            b = _best(lambda: [ours.predict(r) for r in rows], args.repeat) / len(rows)
            print(f"{name + f', stage {k + 1}':<28}{np.mean([len(r) for r in rows]):>11.0f}{ours.num_trees():>7}"
                  f"{a:>12.4f}{b:>12.4f}{a / b:>7.2f}")
    print(f"\nwhole detector (raw probability), median s per image, one thread\n{'model':<28}{'LightGBM s':>12}"
          f"{'compiled s':>12}{'ratio':>7}")
    for name in boundary_models():
        model = load_boundary_model(name)
        reference = replace(model, stages=tuple(TextBooster(s.model_to_string()) for s in model.stages))
        times = {}
        for label, m in (("lgbm", reference), ("ours", model)):
            spent = []
            for img in images:
                _RECENT.clear()
                t = time.perf_counter()
                detect_boundaries(img, model=m, nms=False)
                spent.append(time.perf_counter() - t)
            times[label] = float(np.median(spent))
        print(f"{name:<28}{times['lgbm']:>12.3f}{times['ours']:>12.3f}{times['lgbm'] / times['ours']:>7.2f}")


if __name__ == "__main__":
    main()
