"""Draw docs/_static/overview.png, the README's picture: a photo, three of the default recipe's members, the fused
segmentation. Run from the repository root: ``python docs/_scripts/make_overview.py``."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from skimage import data  # noqa: E402
from skimage.segmentation import mark_boundaries  # noqa: E402
from skimage.transform import rescale  # noqa: E402

from segensemble.pipeline.runner import run_recipe  # noqa: E402

image = rescale(data.coffee(), 0.75, channel_axis=-1, anti_aliasing=True)  # under the working scale: members at full size
result = run_recipe(image, "default", rng=0)
shown = [next(m for m in result.members if m.name == name) for name in ("felzenszwalb", "meanshift", "ucm")]
fig, axes = plt.subplots(1, 5, figsize=(15, 2.4), dpi=80)
axes[0].imshow(image)
axes[0].set_title("photo")
for ax, member in zip(axes[1:4], shown):
    ax.imshow(mark_boundaries(image, member.labels, color=(1, 1, 0)))
    ax.set_title(f"member: {member.name} ({member.n_segments} regions)")
axes[4].imshow(mark_boundaries(image, result.labels, color=(1, 0.1, 0.1)))
axes[4].set_title(f"fused: {result.labels.max() + 1} regions")
for ax in axes:
    ax.axis("off")
fig.tight_layout()
fig.savefig(Path(__file__).resolve().parents[1] / "_static" / "overview.png")
