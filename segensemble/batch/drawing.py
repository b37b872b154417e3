"""Pictures of results: region boundaries and boundary matches drawn on the image.

Small and free of the benchmark's layers, so that ``segensemble fuse --overlay`` draws without importing the
report's dataset and scoring code.
"""

from __future__ import annotations

import cv2
import numpy as np

from segensemble.errors import InputError
from segensemble.validation import check_image_8bit

__all__ = ["draw_boundaries", "draw_matches", "overlay_boundaries"]


def draw_boundaries(image, labels) -> np.ndarray:
    """A copy of the image (float RGB) with the region boundaries of ``labels`` drawn in red.

    Examples
    --------
    >>> draw_boundaries(np.zeros((2, 2, 3)), np.array([[0, 1], [0, 1]]))[:, :, 0].tolist()  # red channel
    [[0.0, 1.0], [0.0, 1.0]]
    """
    from skimage.segmentation import find_boundaries

    out = np.array(image, dtype=np.float64, copy=True)
    if out.ndim == 2:
        out = np.repeat(out[:, :, None], 3, axis=2)
    edge = find_boundaries(labels, mode="inner")
    out[edge] = (1.0, 0.1, 0.1)
    return out


def overlay_boundaries(image, labels, *, width: int | None = None, colour=(255, 26, 26)) -> np.ndarray:
    """An 8-bit RGB copy of an image of any size with the region boundaries of ``labels`` drawn on it.

    Works on the image as stored (uint8/uint16/float; gray, RGB or RGBA) at
    about 5 bytes a pixel, so a 100-megapixel photo can be drawn on.
    ``width`` (pixels) defaults to one per 1 000 pixels of the longer side.

    Examples
    --------
    >>> img = np.zeros((4, 4), np.uint8); lab = np.array([[0, 0, 1, 1]] * 4)
    >>> overlay_boundaries(img, lab)[0, :, 0].tolist()
    [0, 255, 255, 0]
    """
    arr = np.asarray(image)
    lab = np.asarray(labels)
    if arr.shape[:2] != lab.shape:
        raise InputError(f"labels: expected the image's shape {arr.shape[:2]}, got {lab.shape}")
    out = check_image_8bit(arr)
    if np.may_share_memory(out, arr):  # 8-bit RGB(A) as given: drawn on a copy
        out = out.copy()
    edge = np.zeros(lab.shape, np.uint8)
    edge[:, 1:] |= lab[:, 1:] != lab[:, :-1]
    edge[:, :-1] |= lab[:, 1:] != lab[:, :-1]
    edge[1:] |= lab[1:] != lab[:-1]
    edge[:-1] |= lab[1:] != lab[:-1]
    width = max(1, round(max(lab.shape) / 1000)) if width is None else int(width)
    if width > 1:
        edge = cv2.dilate(edge, np.ones((width, width), np.uint8))
    out[edge.astype(bool)] = colour
    return out


def draw_matches(image, tp, fp, fn) -> np.ndarray:
    """The image faded, with matched machine boundaries green, unmatched ones blue, missed human ones red.

    The colours of the Structured Edge toolbox's evaluation view; lines are
    drawn 3 pixels wide so they survive the report's thumbnails.

    Examples
    --------
    >>> tp = np.zeros((5, 5), bool); tp[2, 2] = True
    >>> v = draw_matches(np.ones((5, 5, 3)), tp, np.zeros_like(tp), np.zeros_like(tp))
    >>> v[2, 2].tolist(), v[0, 0].tolist()
    ([0.0, 0.75, 0.0], [1.0, 1.0, 1.0])
    """
    out = np.array(image, dtype=np.float64, copy=True)
    if out.ndim == 2:
        out = np.repeat(out[:, :, None], 3, axis=2)
    out = 0.35 * out + 0.65  # faded towards white
    grow = np.ones((3, 3), np.uint8)
    for mask, colour in ((fn, (0.9, 0.0, 0.0)), (fp, (0.0, 0.2, 1.0)), (tp, (0.0, 0.75, 0.0))):
        out[cv2.dilate(np.asarray(mask, np.uint8), grow) > 0] = colour
    return out
