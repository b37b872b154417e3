"""
Consensus methods side by side
==============================

The members are reduced once to weighted *atoms* (pixels with the same label
in every member, :meth:`~segensemble.Ensemble.from_segmentations`); every
consensus method is a scikit-learn estimator fitted on that ensemble. Here six
methods fuse the same five members into 8 clusters of atoms. Fitted directly
like this a method knows nothing of space, so a cluster may be scattered;
:func:`segensemble.fuse` and the recipes run every method image-aware
(connected regions).
"""

import time

import matplotlib.pyplot as plt
from skimage import data
from skimage.segmentation import mark_boundaries
from skimage.transform import rescale

import segensemble
from segensemble import Ensemble, consensus

image = rescale(data.coffee(), 0.4, channel_axis=-1, anti_aliasing=True)
members = segensemble.run_segmenters(
    image, ["slic:n_segments=60", "felzenszwalb:scale=200", "kmeans:n_segments=6", "watershed", "quickshift"], rng=0)
ensemble = Ensemble.from_segmentations(members, image=image)
print(f"{len(members)} members, {ensemble.n_objects} atoms")

methods = ["basic", "eac", "vote", "hbgf", "mcla", "merge"]
fig, axes = plt.subplots(2, 3, figsize=(13, 6.5))
for ax, name in zip(axes.ravel(), methods):
    t = time.perf_counter()
    estimator = consensus.make(name, 8, random_state=0).fit(ensemble)
    fused = ensemble.to_image(estimator.labels_)
    ax.imshow(mark_boundaries(image, fused, color=(1, 0.2, 0.2)))
    ax.set_title(f"{name} ({time.perf_counter() - t:.2f} s)")
    ax.axis("off")
fig.tight_layout()
plt.show()
