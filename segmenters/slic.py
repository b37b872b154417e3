"""SLIC superpixels."""

from __future__ import annotations

import numpy as np
import skimage.segmentation

from segensemble._validation import check_image, check_int, check_random_state
from segensemble.errors import InputError
from segensemble.segmentation import Segmentation
from segensemble.segmenters._registry import REGISTRY

__all__ = ["slic"]


@REGISTRY.register("slic")
def slic(image, *, n_segments: int = 200, compactness: float = 10.0, sigma: float = 1.0, rng=None) -> Segmentation:
    """SLIC superpixels: k-means in Lab colour and position (Achanta et al. 2012).

    A thin wrapper over :func:`skimage.segmentation.slic` in Lab space.

    Parameters
    ----------
    image : (H, W[, C]) array
        Gray, RGB or RGBA; integer or float.
    n_segments : int, default 200
        Approximate number of superpixels (the grid of initial centres).
    compactness : float, default 10
        Balance of colour and space; higher gives more regular superpixels.
    sigma : float, default 1
        Gaussian pre-smoothing width in pixels.
    rng : None, int or numpy Generator
        Unused (SLIC is deterministic); accepted for a uniform signature.

    Returns
    -------
    Segmentation

    References
    ----------
    R. Achanta, A. Shaji, K. Smith, A. Lucchi, P. Fua, S. Süsstrunk, "SLIC
    superpixels compared to state-of-the-art superpixel methods", IEEE TPAMI
    34(11), 2012.

    Examples
    --------
    >>> img = np.zeros((20, 40, 3)); img[:, 20:] = 1
    >>> slic(img, n_segments=2).n_segments
    2
    """
    img = check_image(image)
    n = check_int(n_segments, "n_segments", minimum=1)
    if not np.isfinite(compactness) or compactness <= 0:
        raise InputError(f"compactness: expected a positive number, got {compactness!r}")
    if not np.isfinite(sigma) or sigma < 0:
        raise InputError(f"sigma: expected a non-negative number, got {sigma!r}")
    check_random_state(rng)
    labels = skimage.segmentation.slic(
        img, n_segments=n, compactness=float(compactness), sigma=float(sigma), start_label=0,
        channel_axis=-1, convert2lab=True, enforce_connectivity=True,
    )
    return Segmentation(labels, name="slic", params={"n_segments": n, "compactness": compactness, "sigma": sigma})
