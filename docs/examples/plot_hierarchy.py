"""
The hierarchy at three levels
=============================

With ``hierarchy=True`` the recipe also returns a hierarchy of segmentations,
each coarser than the one before (the merge tree of the consensus step).
Three of its levels, fine to coarse:
"""

import matplotlib.pyplot as plt
from skimage import data
from skimage.segmentation import mark_boundaries
from skimage.transform import rescale

from segensemble.pipeline.runner import run_recipe

image = rescale(data.chelsea(), 0.5, channel_axis=-1, anti_aliasing=True)
result = run_recipe(image, "default", hierarchy=True, rng=0)
levels = result.levels
print(f"{len(levels)} levels, from {levels[0].max() + 1} to {levels[-1].max() + 1} regions")

picks = [0, len(levels) // 2, len(levels) - 1]
fig, axes = plt.subplots(1, 3, figsize=(14, 4))
for ax, k in zip(axes, picks):
    ax.imshow(mark_boundaries(image, levels[k], color=(1, 0.2, 0.2)))
    ax.set_title(f"level {k}: {levels[k].max() + 1} regions")
    ax.axis("off")
fig.tight_layout()
plt.show()
