"""
Segment a photo with each segmenter
===================================

Every segmenter is a function ``name(image, *, n_segments=..., rng=None, ...)``
returning a :class:`~segensemble.Segmentation`, found by name in a registry.
:func:`segensemble.segment` runs one of them by name. Here each one segments the
same photo (``skimage.data.coffee``, halved) and its regions are outlined.
"""

import matplotlib.pyplot as plt
from skimage import data
from skimage.segmentation import mark_boundaries
from skimage.transform import rescale

import segensemble
from segensemble import segmenters

image = rescale(data.coffee(), 0.4, channel_axis=-1, anti_aliasing=True)
print("image", image.shape, "segmenters", segmenters.available())

fig, axes = plt.subplots(2, 5, figsize=(15, 5.2))
for ax, name in zip(axes.ravel(), segmenters.available()):
    seg = segensemble.segment(image, name, rng=0)
    ax.imshow(mark_boundaries(image, seg.labels, color=(1, 0.2, 0.2)))
    ax.set_title(f"{name}: {seg.n_segments} regions")
    ax.axis("off")
fig.tight_layout()
plt.show()
