"""Active contours without edges (Chan-Vese), multiphase by recursive splitting."""

from __future__ import annotations

import numpy as np
import skimage.segmentation
from scipy import ndimage

from segensemble.validation import check_image, check_int, check_rng
from segensemble.features import lab_colour, standardise
from segensemble.segmentation import Segmentation
from segensemble.segmenters._common import check_choice, check_dense_per_pixel, check_positive
from segensemble.segmenters._registry import REGISTRY

__all__ = ["chanvese", "morphological_acwe"]

_LINES = [np.eye(3, dtype=bool), np.fliplr(np.eye(3, dtype=bool)),
          np.array([[0, 0, 0], [1, 1, 1], [0, 0, 0]], bool), np.array([[0, 1, 0], [0, 1, 0], [0, 1, 0]], bool)]


def _sup_inf(u):
    return np.max([ndimage.binary_erosion(u, s) for s in _LINES], axis=0)


def _inf_sup(u):
    return np.min([ndimage.binary_dilation(u, s) for s in _LINES], axis=0)


def morphological_acwe(features, mask, *, n_iter: int = 60, smoothing: int = 1, init=None, lambda1: float = 1.0,
                       lambda2: float = 1.0) -> np.ndarray:
    """Two-phase morphological Chan-Vese on vector-valued features inside a mask.

    Márquez-Neila, Baumela & Alvarez's morphological ACWE: at every iteration
    the image term ``lambda1 ||I - c1||^2 - lambda2 ||I - c0||^2`` (summed over
    channels, Chan-Sandberg-Vese vector model) moves the contour where the level
    set has a non-zero gradient, then the curvature operator (SI o IS, IS o SI
    alternately) smooths it ``smoothing`` times. c0, c1 are the mean features
    outside/inside, computed within ``mask``.

    Parameters
    ----------
    features : (H, W, C) float array
    mask : (H, W) bool array
        Pixels the contour may cover (others stay outside).
    n_iter : int
    smoothing : int
    init : (H, W) bool array, optional
        Initial inside; default a checkerboard of 5-pixel squares.
    lambda1, lambda2 : float

    Returns
    -------
    (H, W) bool array: inside of the final contour.

    References
    ----------
    P. Márquez-Neila, L. Baumela, L. Alvarez, "A morphological approach to
    curvature-based evolution of curves and surfaces", IEEE TPAMI 36(1), 2014;
    T. Chan, B. Sandberg, L. Vese, "Active contours without edges for
    vector-valued images", JVCIR 11, 2000.

    Examples
    --------
    >>> f = np.zeros((20, 20, 1)); f[5:15, 5:15] = 1
    >>> u = morphological_acwe(f, np.ones((20, 20), bool), n_iter=30)
    >>> bool(u[10, 10] != u[0, 0])
    True
    """
    h, w = mask.shape
    if init is None:
        yy, xx = np.mgrid[0:h, 0:w]
        init = ((yy // 5) + (xx // 5)) % 2 == 0
    u = init & mask
    for it in range(n_iter):
        inside, outside = u, mask & ~u
        if not inside.any() or not outside.any():
            break
        c1 = features[inside].mean(axis=0)
        c0 = features[outside].mean(axis=0)
        uf = u.astype(np.float64)  # a one-pixel-thin image has no gradient across its thin axis
        gy = np.gradient(uf, axis=0) if h > 1 else 0.0
        gx = np.gradient(uf, axis=1) if w > 1 else 0.0
        border = (np.abs(gy) + np.abs(gx)) > 0
        aux = lambda1 * ((features - c1) ** 2).sum(2) - lambda2 * ((features - c0) ** 2).sum(2)
        new = u.copy()
        new[border & (aux < 0)] = True
        new[border & (aux > 0)] = False
        for s in range(smoothing):
            new = _sup_inf(_inf_sup(new)) if (it + s) % 2 == 0 else _inf_sup(_sup_inf(new))
        new &= mask
        if np.array_equal(new, u):
            break
        u = new
    return u


def _signed_distance(u):
    return ndimage.distance_transform_edt(u) - ndimage.distance_transform_edt(~u)


@REGISTRY.register("chanvese", cost=8, imports=("skimage.segmentation:chan_vese",))
def chanvese(
    image, *, n_segments: int = 10, variant: str = "morphological", n_iter: int = 30, smoothing: int = 1,
    downsample: int = 3, min_fraction: float = 0.02, softness: float = 2.0, rng=None,
) -> Segmentation:
    """Active contours without edges (Chan & Vese 2001), multiphase by recursive splitting.

    Starting from the whole image, the region with the largest colour spread
    (sum of squared deviations of standardised Lab) is split in two by a
    two-phase Chan-Vese model restricted to it, until ``n_segments`` regions
    exist or no region splits any more. ``variant='morphological'`` (default)
    uses the fast morphological ACWE on all three Lab channels (run on a
    ``downsample``-times smaller grid, then refined at full resolution);
    ``variant='exact'`` uses :func:`skimage.segmentation.chan_vese` (level-set
    PDE, lightness channel only) on the region's bounding box — slower.

    Parameters
    ----------
    image : (H, W[, C]) array
    n_segments : int, default 10
        Number of regions K (phases; regions may be disconnected).
    variant : {'morphological', 'exact'}
    n_iter : int, default 30
        Iterations per split.
    smoothing : int, default 1
        Curvature smoothing steps per iteration (morphological).
    downsample : int, default 3
    min_fraction : float, default 0.02
        A split leaving either side smaller than this fraction of the region is
        rejected.
    softness : float, default 2
        Width (pixels) of the sigmoid of the signed distance used for the soft
        memberships.
    rng : None, int or numpy Generator
        Unused (deterministic); accepted for a uniform signature.

    Returns
    -------
    Segmentation
        With soft memberships: the product, along the splitting tree, of the
        sigmoids of every split's signed distance.

    References
    ----------
    T. F. Chan, L. A. Vese, "Active contours without edges", IEEE TIP 10(2),
    2001; L. A. Vese, T. F. Chan, "A multiphase level set framework for image
    segmentation using the Mumford and Shah model", IJCV 50(3), 2002;
    P. Márquez-Neila, L. Baumela, L. Alvarez, IEEE TPAMI 36(1), 2014.

    Examples
    --------
    >>> img = np.zeros((30, 30, 3)); img[8:22, 8:22] = [1, 1, 0]
    >>> img += np.random.default_rng(0).normal(0, 0.1, img.shape)
    >>> chanvese(img, n_segments=2).n_segments
    2
    """
    img = check_image(image)
    k = check_int(n_segments, "n_segments", minimum=1)
    variant = check_choice(variant, "variant", ("morphological", "exact"))
    n_iter = check_int(n_iter, "n_iter", minimum=1)
    smoothing = check_int(smoothing, "smoothing", minimum=0)
    ds = check_int(downsample, "downsample", minimum=1)
    minf = check_positive(min_fraction, "min_fraction", allow_zero=True)
    soft = check_positive(softness, "softness")
    check_rng(rng)
    h, w = img.shape[:2]
    check_dense_per_pixel(h * w, k, "Chan-Vese phase probabilities", copies=2)  # the planes, then their stack
    feats = standardise(lab_colour(img))
    labels = np.zeros((h, w), dtype=np.int64)
    probs = [np.ones((h, w))]
    frozen: set = set()
    if ds > 1 and min(h, w) < 16 * ds:
        ds = 1
    while len(probs) < k:
        sse = []
        for r in range(len(probs)):
            sel = labels == r
            sse.append(-1.0 if r in frozen or sel.sum() < 2 else float(((feats[sel] - feats[sel].mean(0)) ** 2).sum()))
        r = int(np.argmax(sse))
        if sse[r] <= 0:
            break
        region = labels == r
        u = _split(feats, region, variant, n_iter, smoothing, ds)
        n_in, n_reg = int(u.sum()), int(region.sum())
        if min(n_in, n_reg - n_in) <= max(minf * n_reg, 0):
            frozen.add(r)
            continue
        s = 1.0 / (1.0 + np.exp(-np.clip(_signed_distance(u) / soft, -50, 50)))
        new = len(probs)
        labels[u] = new
        probs.append(probs[r] * s)
        probs[r] = probs[r] * (1 - s)
    mem = np.stack(probs, axis=2)
    mem /= mem.sum(axis=2, keepdims=True)
    params = {"n_segments": k, "variant": variant, "n_iter": n_iter, "smoothing": smoothing}
    return Segmentation(labels, memberships=mem, name="chanvese", params=params)


def _split(feats, region, variant, n_iter, smoothing, ds):
    if variant == "exact":
        ys, xs = np.nonzero(region)
        box = (slice(ys.min(), ys.max() + 1), slice(xs.min(), xs.max() + 1))
        L = feats[box][:, :, 0].copy()
        L[~region[box]] = L[region[box]].mean()
        inside = skimage.segmentation.chan_vese(L, max_num_iter=max(n_iter, 20))
        u = np.zeros(region.shape, dtype=bool)
        u[box] = inside
        return u & region
    if ds > 1:
        small = (slice(None, None, ds), slice(None, None, ds))
        us = morphological_acwe(feats[small], region[small], n_iter=n_iter, smoothing=smoothing)
        up = np.repeat(np.repeat(us, ds, 0), ds, 1)[: region.shape[0], : region.shape[1]]
        return morphological_acwe(feats, region, n_iter=max(5, n_iter // 8), smoothing=smoothing, init=up & region)
    return morphological_acwe(feats, region, n_iter=n_iter, smoothing=smoothing)
