"""Compact watershed on a colour gradient."""

from __future__ import annotations

import skimage.segmentation

from segensemble.validation import check_image, check_int, check_rng
from segensemble.features import boundary_strength
from segensemble.segmentation import Segmentation
from segensemble.segmenters._common import check_positive
from segensemble.segmenters._registry import REGISTRY

__all__ = ["watershed"]


@REGISTRY.register("watershed", imports=("skimage.segmentation:watershed",))
def watershed(image, *, n_segments: int = 25, compactness: float = 0.0001, sigma: float = 1.0, rng=None) -> Segmentation:
    """Compact watershed of the Lab colour gradient from a regular grid of markers.

    Parameters
    ----------
    image : (H, W[, C]) array
    n_segments : int, default 25
        Number of markers, placed on a regular grid.
    compactness : float, default 0.0001
        0 is the classic watershed; larger values give more regular regions.
    sigma : float, default 1
        Gaussian scale of the gradient.
    rng : None, int or numpy Generator
        Unused (deterministic); accepted for a uniform signature.

    Returns
    -------
    Segmentation

    References
    ----------
    L. Vincent, P. Soille, "Watersheds in digital spaces", IEEE TPAMI 13(6),
    1991; P. Neubert, P. Protzel, "Compact watershed and preemptive SLIC", ICPR 2014.

    Examples
    --------
    >>> img = np.zeros((20, 20, 3)); img[:, 10:] = 1
    >>> watershed(img, n_segments=4).n_segments
    4
    """
    img = check_image(image)
    n = check_int(n_segments, "n_segments", minimum=1)
    c = check_positive(compactness, "compactness", allow_zero=True)
    s = check_positive(sigma, "sigma")
    check_rng(rng)
    grad = boundary_strength(img, sigma=s)
    labels = skimage.segmentation.watershed(grad, markers=min(n, grad.size), compactness=c)
    return Segmentation(labels, name="watershed", params={"n_segments": n, "compactness": c, "sigma": s})
