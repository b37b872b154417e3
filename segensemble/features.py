"""Per-pixel image features shared by segmenters and consensus methods."""

from __future__ import annotations

import numpy as np
from skimage.color import rgb2lab

from segensemble._validation import check_image

__all__ = ["lab_colour"]


def lab_colour(image) -> np.ndarray:
    """CIE Lab colour of every pixel.

    Parameters
    ----------
    image : (H, W[, C]) array
        Any image accepted by segensemble (gray, RGB, RGBA; integer or float).

    Returns
    -------
    (H, W, 3) float64 array
        L in [0, 100], a and b roughly in [-128, 127].

    Examples
    --------
    >>> lab_colour(np.ones((2, 2, 3)))[0, 0].round(2).tolist()
    [100.0, -0.0, 0.0]
    """
    return rgb2lab(check_image(image))
