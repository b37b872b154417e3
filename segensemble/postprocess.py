"""Post-processing of fused segmentations: connected regions, small-region merging.

A consensus labels atoms, so one fused label can cover several disconnected
pieces of the image. :func:`connected_regions` gives every 4-connected piece
its own label; :func:`merge_small` then merges every region below a minimum
size into its most similar neighbour (mean CIE Lab colour).
"""

from __future__ import annotations

import numpy as np
from skimage.measure import label as _label

from segensemble.validation import check_image, check_int, check_label_map
from segensemble.errors import InputError

__all__ = ["connected_regions", "merge_small", "postprocess"]


def connected_regions(labels) -> np.ndarray:
    """Relabel so that every 4-connected region has its own label (0..k-1).

    Examples
    --------
    >>> connected_regions(np.array([[0, 1, 0], [0, 1, 0]])).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    lab = check_label_map(labels, "labels")
    return (_label(lab, background=-1, connectivity=1) - 1).astype(np.int32)


def merge_small(labels, image, min_size: int) -> np.ndarray:
    """Merge every region smaller than ``min_size`` pixels into its most similar adjacent region.

    Similarity is the distance between the regions' mean CIE Lab colours;
    small regions merge pass by pass until none is left (or one region).

    Examples
    --------
    >>> lab = np.array([[0, 0, 1, 1], [0, 0, 1, 2]])
    >>> img = np.zeros((2, 4, 3)); img[:, 2:] = 1
    >>> merge_small(lab, img, 2).tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1]]
    """
    from segensemble.features import lab_colour
    from segensemble.adjacency import merge_small_regions

    lab = check_label_map(labels, "labels")
    img = check_image(image)
    if img.shape[:2] != lab.shape:
        raise InputError(f"image: expected shape {lab.shape} like the labels, got {img.shape[:2]}")
    size = check_int(min_size, "min_size", minimum=0)
    if size <= 1:
        return lab.astype(np.int32)
    return merge_small_regions(lab, lab_colour(img), size)


def postprocess(labels, image=None, *, connected: bool = True, min_size: int = 0) -> np.ndarray:
    """Connected relabelling, then small-region merging (each optional).

    Examples
    --------
    >>> postprocess(np.array([[0, 1, 0]]), connected=True).tolist()
    [[0, 1, 2]]
    """
    lab = check_label_map(labels, "labels")
    if connected:
        lab = connected_regions(lab)
    if min_size and min_size > 1:
        if image is None:
            raise InputError("image: merging small regions needs the image")
        lab = merge_small(lab, image, min_size)
    return lab.astype(np.int32)
