"""Felzenszwalb-Huttenlocher graph-based segmentation."""

from __future__ import annotations

import numpy as np
import skimage.segmentation

from segensemble.validation import check_image, check_int, check_rng
from segensemble.segmentation import Segmentation
from segensemble.segmenters._common import check_positive
from segensemble.segmenters._registry import REGISTRY

__all__ = ["felzenszwalb"]


def _fh(img, scale, sigma, min_size):
    return skimage.segmentation.felzenszwalb(img, scale=scale, sigma=sigma, min_size=min_size, channel_axis=-1)


@REGISTRY.register("felzenszwalb")
def felzenszwalb(
    image, *, n_segments: int | None = None, scale: float = 300.0, sigma: float = 0.8,
    min_size: int = 50, rng=None,
) -> Segmentation:
    """Efficient graph-based segmentation (Felzenszwalb & Huttenlocher 2004).

    A thin wrapper over :func:`skimage.segmentation.felzenszwalb`. The method
    has no direct control of the number of regions; when ``n_segments`` is
    given, ``scale`` is found by bisection on a log scale (at most 12 runs) so
    that the result has the closest number of regions.

    Parameters
    ----------
    image : (H, W[, C]) array
    n_segments : int, optional
        Target number of regions; overrides ``scale``.
    scale : float, default 300
        Larger values give larger regions.
    sigma : float, default 0.8
        Gaussian pre-smoothing width.
    min_size : int, default 50
        Minimum region size in pixels (post-processing merge).
    rng : None, int or numpy Generator
        Unused (deterministic); accepted for a uniform signature.

    Returns
    -------
    Segmentation

    References
    ----------
    P. F. Felzenszwalb, D. P. Huttenlocher, "Efficient graph-based image
    segmentation", IJCV 59(2), 2004.

    Examples
    --------
    >>> img = np.zeros((20, 20, 3)); img[:, 10:] = 1
    >>> felzenszwalb(img, scale=100, sigma=0, min_size=5).n_segments
    2
    """
    img = check_image(image)
    scale = check_positive(scale, "scale")
    sigma = check_positive(sigma, "sigma", allow_zero=True)
    min_size = check_int(min_size, "min_size", minimum=1)
    check_rng(rng)
    if n_segments is None:
        labels = _fh(img, float(scale), float(sigma), min_size)
    else:
        target = check_int(n_segments, "n_segments", minimum=1)
        lo, hi = np.log(1.0), np.log(1e5)
        best = None
        for _ in range(12):
            mid = 0.5 * (lo + hi)
            lab = _fh(img, float(np.exp(mid)), float(sigma), min_size)
            k = int(lab.max()) + 1
            if best is None or abs(k - target) < abs(best[0] - target):
                best = (k, lab, float(np.exp(mid)))
            if k == target:
                break
            if k > target:
                lo = mid
            else:
                hi = mid
        labels, scale = best[1], best[2]
    params = {"scale": float(scale), "sigma": sigma, "min_size": min_size}
    return Segmentation(labels, name="felzenszwalb", params=params)
