"""Exposure: a dark picture brightened before a recipe's members and fusion see it.

Every member and model of a recipe works with absolute colour differences
(Felzenszwalb's scale, mean shift's range, SLIC's compactness, the boundary
detector's gradients, the merge criterion's colour term), all fitted on
well-exposed pictures. An under-exposed photo has every difference smaller:
the 640 x 427 sample photo gives 25 regions as stored, 13 two stops
under-exposed and 5 at four stops (``default@9``). A recipe with
``exposure = T`` measures the picture's *white point* — the 99th
percentile, over pixels, of each pixel's brightest channel max(R, G, B) (a
few bright lamps or highlights do not count) — and when it is below ``T``
multiplies the picture by the gain ``T / white`` (at most
:data:`MAX_GAIN`), clipped to [0, 1]; a picture already bright enough is
not changed at all. The full-resolution refinement of a photo compares its pixels in the
same brightened colours (:func:`segensemble.pipeline.workscale.upsample_labels`).
"""

from __future__ import annotations

import numpy as np

from segensemble.errors import InputError

__all__ = ["MAX_GAIN", "WHITE_PERCENTILE", "check_exposure", "exposure_gain", "apply_gain"]

#: The largest gain applied (a picture darker than 1/16 of its target stays that much darker).
MAX_GAIN = 16.0
#: The percentile of the per-pixel brightest channel taken as the picture's white point.
WHITE_PERCENTILE = 99.0


def check_exposure(value, name: str = "exposure"):
    """None (the picture as it is) or a target white point in (0, 1].

    Examples
    --------
    >>> check_exposure(0.9), check_exposure(None)
    (0.9, None)
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise InputError(f"{name}: expected none or a white point in (0, 1], got {value!r}")
    return float(value)


def exposure_gain(image: np.ndarray, target) -> float:
    """The gain that brings ``image``'s white point (see the module) up to ``target``: 1.0 when it is there already.

    Parameters
    ----------
    image : (H, W, 3) float array
        RGB in [0, 1] (the processed image of a recipe).
    target : float or None
        The white point wanted; None gives 1.0.

    Examples
    --------
    >>> img = np.full((4, 4, 3), 0.25)
    >>> exposure_gain(img, 0.9), exposure_gain(img * 4, 0.9), exposure_gain(img, None)
    (3.6, 1.0, 1.0)
    >>> exposure_gain(np.zeros((4, 4, 3)), 0.9)  # black: nothing to bring up
    1.0
    """
    if target is None:
        return 1.0
    white = float(np.percentile(np.asarray(image).max(axis=-1), WHITE_PERCENTILE))
    if white >= target or white <= 0:
        return 1.0
    return min(MAX_GAIN, target / white)


def apply_gain(image: np.ndarray, gain: float) -> np.ndarray:
    """``image`` times ``gain``, clipped to [0, 1]; ``image`` itself when the gain is 1.

    Examples
    --------
    >>> apply_gain(np.array([[0.2, 0.6]]), 2.0).tolist()
    [[0.4, 1.0]]
    """
    if gain == 1.0:
        return image
    return np.clip(image * gain, 0.0, 1.0)
