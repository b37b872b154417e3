"""
Fuse with the default recipe: members, fused, confidence
========================================================

:func:`~segensemble.pipeline.runner.run_recipe` applies a recipe to one image:
it runs the recipe's segmenters (the *members*), fuses their labellings with
the recipe's consensus method and post-processes the result. It is the code
path of ``segensemble fuse``. ``confidence="auto"`` adds a per-pixel confidence
(for a hard method: the share of hierarchy levels in which a pixel is a
boundary, so it needs ``hierarchy=True``).
"""

import matplotlib.pyplot as plt
from skimage import data
from skimage.segmentation import mark_boundaries
from skimage.transform import rescale

from segensemble.pipeline.runner import run_recipe

image = rescale(data.astronaut(), 0.5, channel_axis=-1, anti_aliasing=True)
result = run_recipe(image, "default", hierarchy=True, confidence="auto", rng=0)
print(f"{len(result.members)} members, fused into {result.labels.max() + 1} regions")

n = len(result.members)
fig, axes = plt.subplots(2, (n + 3) // 2, figsize=(16, 7))
axes = axes.ravel()
for ax, member in zip(axes, result.members):
    ax.imshow(mark_boundaries(image, member.labels))
    ax.set_title(f"{member.name}: {member.n_segments}")
axes[n].imshow(mark_boundaries(image, result.labels, color=(1, 0.2, 0.2)))
axes[n].set_title(f"fused: {result.labels.max() + 1} regions")
axes[n + 1].imshow(result.confidence, cmap="magma")
axes[n + 1].set_title("confidence")
for ax in axes:
    ax.axis("off")
fig.tight_layout()
plt.show()
