"""
Score one image and a folder against BSDS ground truth
======================================================

The Berkeley benchmark compares a result with every human segmentation of the
image: boundary precision/recall over thresholds (ODS, OIS, AP) and, for
segmentations, region scores (covering, probabilistic Rand index, variation of
information). Here the ground truth is the built-in synthetic dataset (BSDS
layout, several annotators per image) and the results are soft boundary maps
of the learned detector (on the images with noise added) saved as 8-bit PNGs,
the format edge detectors write.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from segensemble.batch.score import ScoreConfig, score_results
from segensemble.datasets import make_synthetic_dataset
from segensemble.edges import detect_boundaries
from segensemble.evaluation.benchmark import evaluate_image, load_result
from segensemble.io import read_ground_truth, read_image, write_image

root = make_synthetic_dataset(tempfile.mkdtemp(), n_images=4, shape=(120, 180))
gt_dir = root / "data" / "groundTruth" / "test"
results = Path(tempfile.mkdtemp())
noise = np.random.default_rng(0)
for path in sorted((root / "data" / "images" / "test").iterdir()):
    image = read_image(path)  # the synthetic images are easy: noise gives the detector some work
    noisy = np.clip(image + noise.normal(0, 0.12, image.shape), 0, 1)
    probability = detect_boundaries(noisy, nms=False)
    write_image(results / f"{path.stem}.png", np.round(probability * 255).astype(np.uint8))

# %%
# One image (``segensemble evaluate MAP --gt GT --kind boundary`` on the command line):
first = sorted(results.iterdir())[0]
ev = evaluate_image(load_result(first, "boundary"), read_ground_truth(gt_dir / f"{first.stem}.mat"),
                    region=False, nms=True)
b = ev.boundary
recall, precision = b.cntR / np.maximum(b.sumR, 1), b.cntP / np.maximum(b.sumP, 1)
f = 2 * recall * precision / np.maximum(recall + precision, 1e-12)
print(f"image {first.stem}: best F {f.max():.3f} at threshold {b.thresholds[f.argmax()]:.2f}")

# %%
# The folder (``segensemble score RESULTS --gt GT --kind boundary --nms``) writes the
# official ``eval_bdry*.txt`` files and ``summary.json``:
config = ScoreConfig(kind="boundary", what="boundary", nms=True)
summary = score_results(results, gt_dir, tempfile.mkdtemp(), config=config)
ods = summary["boundary"]["ods"]
ois, ap = summary["boundary"]["ois"]["f"], summary["boundary"]["ap"]
print(f"folder: ODS F {ods['f']:.3f}, OIS F {ois:.3f}, AP {ap:.3f}")

fig, ax = plt.subplots(figsize=(5, 5))
ax.plot(recall, precision, "-", label=f"image {first.stem}")
curve = summary["pr_curve"]
ax.plot(curve["recall"], curve["precision"], "-", label=f"folder of {summary['n_images']} images")
ax.plot(ods["recall"], ods["precision"], "o", label=f"ODS F = {ods['f']:.3f}")
ax.set(xlabel="recall", ylabel="precision", xlim=(0, 1), ylim=(0, 1), title="boundary precision/recall")
ax.legend(loc="lower left")
plt.show()
