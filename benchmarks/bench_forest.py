"""Seconds of the boundary detector's tree ensembles: LightGBM's C interface against the compiled tree walker.

For every shipped detector model and stage, the rows the detector hands that
stage on BSDS500 val images (recorded from a run of the detector: stage 1 at
its stride on every pixel; stage 2 at its stride, on the candidates only when
the model has a candidate threshold; in the detector's layout) are predicted
by :class:`~segensemble.edges.booster.TextBooster` (LightGBM) and by
:class:`~segensemble.edges.forest.CompiledForest`, one thread, best of
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


class _Recorder:
    """A stage that keeps the rows the detector hands it (as given) and predicts with the stage it wraps."""

    def __init__(self, stage):
        self.stage, self.rows = stage, []

    def predict(self, rows, num_threads: int = 1):
        self.rows.append(rows)
        return self.stage.predict(rows, num_threads=num_threads)


def _stage_rows(model, image) -> list:
    """The rows each stage of ``model`` predicts on ``image``, recorded from a run of the detector itself (one
    thread: one call per stage, none for a candidate stage without candidates)."""
    from segensemble.edges.detector import _RECENT, detect_boundaries

    recorders = tuple(_Recorder(stage) for stage in model.stages)
    _RECENT.clear()
    detect_boundaries(image, model=replace(model, stages=recorders), nms=False)
    return [r.rows[0] if r.rows else np.zeros((0, r.stage.num_feature()), np.float32) for r in recorders]


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
