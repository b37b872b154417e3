"""Quick shift mode seeking."""

from __future__ import annotations

import skimage.segmentation

from segensemble.validation import check_image, check_rng
from segensemble.segmentation import Segmentation
from segensemble.segmenters._common import check_positive, seed_of
from segensemble.segmenters._registry import REGISTRY

__all__ = ["quickshift"]


@REGISTRY.register("quickshift", cost=9, imports=("skimage.segmentation:quickshift",))
def quickshift(
    image, *, kernel_size: float = 6.0, max_dist: float = 30.0, ratio: float = 0.5, sigma: float = 1.0, rng=None,
) -> Segmentation:
    """Quick shift: kernelised mode seeking in colour + position (Vedaldi & Soatto 2008).

    A thin wrapper over :func:`skimage.segmentation.quickshift` in Lab space.

    Parameters
    ----------
    image : (H, W[, C]) array
    kernel_size : float, default 6
        Width of the Gaussian density kernel.
    max_dist : float, default 30
        Cut-off of the links to parents; larger values give fewer regions.
    ratio : float in (0, 1], default 0.5
        Weight of colour against position.
    sigma : float, default 1
        Gaussian pre-smoothing.
    rng : None, int or numpy Generator
        Seeds the tie-breaking noise.

    Returns
    -------
    Segmentation

    References
    ----------
    A. Vedaldi, S. Soatto, "Quick shift and kernel methods for mode seeking", ECCV 2008.

    Examples
    --------
    >>> img = np.zeros((20, 20, 3)); img[:, 10:] = 1
    >>> quickshift(img, rng=0).n_segments
    2
    """
    img = check_image(image)
    ks = check_positive(kernel_size, "kernel_size")
    md = check_positive(max_dist, "max_dist")
    r = check_positive(ratio, "ratio")
    s = check_positive(sigma, "sigma", allow_zero=True)
    gen = check_rng(rng)
    labels = skimage.segmentation.quickshift(
        img, ratio=min(r, 1.0), kernel_size=ks, max_dist=md, sigma=s, convert2lab=True, rng=seed_of(gen),
        channel_axis=-1,
    )
    return Segmentation(labels, name="quickshift", params={"kernel_size": ks, "max_dist": md, "ratio": r, "sigma": s})
