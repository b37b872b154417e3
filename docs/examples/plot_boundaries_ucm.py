"""
Learned boundaries and the ultrametric contour map
==================================================

:func:`~segensemble.edges.detect_boundaries` is a boundary detector learned on
BSDS500 train (gradient features, boosted trees). Its probability map, thinned
by non-maximum suppression, feeds an oriented watershed whose regions are
merged weakest border first: the ultrametric contour map (UCM), a whole
hierarchy in one image. Thresholding it gives a segmentation; the ``ucm``
segmenter does exactly that.
"""

import matplotlib.pyplot as plt
from skimage import data
from skimage.segmentation import mark_boundaries
from skimage.transform import rescale

import segensemble
from segensemble.edges import detect_boundaries

image = rescale(data.astronaut(), 0.5, channel_axis=-1, anti_aliasing=True)
raw = detect_boundaries(image, nms=False)
thin = detect_boundaries(image)
seg = segensemble.segment(image, "ucm", rng=0)

fig, axes = plt.subplots(1, 4, figsize=(16, 4.4))
axes[0].imshow(image)
axes[0].set_title("image")
axes[1].imshow(raw, cmap="gray_r")
axes[1].set_title("boundary probability")
axes[2].imshow(thin, cmap="gray_r")
axes[2].set_title("thinned (non-maximum suppression)")
axes[3].imshow(mark_boundaries(image, seg.labels, color=(1, 0.2, 0.2)))
axes[3].set_title(f"UCM cut: {seg.n_segments} regions")
for ax in axes:
    ax.axis("off")
fig.tight_layout()
plt.show()
