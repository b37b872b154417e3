"""
Fuse segmentations made by other tools
======================================

The members need not come from segensemble: any label maps of the image's shape
will do (here three scikit-image segmentations and a colour quantisation with
OpenCV). :func:`segensemble.fuse` takes them as arrays; the command line does
the same with ``segensemble fuse --inputs a.png b.png ...``.
"""

import cv2
import matplotlib.pyplot as plt
import numpy as np
from skimage import data, filters, segmentation
from skimage.transform import rescale

import segensemble

image = rescale(data.coffee(), 0.4, channel_axis=-1, anti_aliasing=True)
u8 = (image * 255).astype(np.uint8)
_, quantised, _ = cv2.kmeans(u8.reshape(-1, 3).astype(np.float32), 5, None,
                             (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 1.0), 3,
                             cv2.KMEANS_PP_CENTERS)
others = {
    "skimage slic": segmentation.slic(image, n_segments=80, start_label=0),
    "skimage felzenszwalb": segmentation.felzenszwalb(image, scale=300),
    "skimage watershed": segmentation.watershed(filters.sobel(image.mean(axis=2)), markers=40),
    "OpenCV k-means colours": quantised.reshape(image.shape[:2]),
}
fused = segensemble.fuse(list(others.values()), method="basic", n_segments=8, image=image)

fig, axes = plt.subplots(1, 5, figsize=(18, 3.6))
for ax, (name, labels) in zip(axes, list(others.items()) + [("fused (basic)", fused)]):
    ax.imshow(segmentation.mark_boundaries(image, labels, color=(1, 0.2, 0.2)))
    ax.set_title(name)
    ax.axis("off")
fig.tight_layout()
plt.show()
