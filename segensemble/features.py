"""Per-pixel image features shared by segmenters and consensus methods.

One place for colour (CIE Lab), position, texture (a small Gaussian-derivative
filter bank on lightness) and a boundary-strength map, plus per-region
aggregates; segmenters, PCE and CAP reuse them.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage
from skimage.color import rgb2lab

from segensemble.validation import check_image, check_label_map
from segensemble.errors import InputError
from segensemble.memo import ImageMemo, image_key

__all__ = [
    "group_means",
    "lab_colour",
    "texture_features",
    "pixel_features",
    "pixel_feature_names",
    "boundary_strength",
    "standardise",
    "region_means",
]

#: Scales (pixels) of the texture filter bank.
TEXTURE_SCALES = (1.0, 2.0, 4.0)
#: The last image's Lab colour, and its texture energies by scale (keyed by the lightness they are computed from):
#: a recipe's detector, watershed member, merge and post-processing all ask for them.
_LAB, _TEXTURE = ImageMemo(), ImageMemo()


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
    img = check_image(image)
    return _LAB.get(image_key(img), "lab", lambda: rgb2lab(img), pixels=img.shape[0] * img.shape[1]).copy()


def texture_features(image, scales=TEXTURE_SCALES, *, lab=None) -> np.ndarray:
    """Texture energy: local mean of Gaussian-derivative magnitudes of lightness.

    For every scale s: the gradient magnitude and the absolute Laplacian of
    the Gaussian-smoothed L channel, each averaged over a window of width 4s
    (texture energy, as in Malik et al.'s filter-bank descriptors). ``lab``:
    :func:`lab_colour` of the image when the caller has it already (not
    computed again).

    Returns
    -------
    (H, W, 2 * len(scales)) float64 array

    References
    ----------
    J. Malik, S. Belongie, T. Leung, J. Shi, "Contour and texture analysis for
    image segmentation", IJCV 43(1), 2001.

    Examples
    --------
    >>> texture_features(np.zeros((8, 8, 3))).shape
    (8, 8, 6)
    """
    L = np.ascontiguousarray((lab_colour(image) if lab is None else lab)[:, :, 0])
    key = image_key(L)
    out = []
    for s in scales:
        out += _TEXTURE.get(key, s, lambda: _texture_energy(L, s), pixels=L.size)
    return np.stack(out, axis=2)


def _texture_energy(L, s) -> tuple:
    """(gradient energy, Laplacian energy) of lightness ``L`` at scale ``s`` (see :func:`texture_features`)."""
    grad = ndimage.gaussian_gradient_magnitude(L, s, mode="reflect")
    lap = np.abs(ndimage.gaussian_laplace(L, s, mode="reflect"))
    return tuple(ndimage.uniform_filter(resp, size=max(3, int(round(4 * s))), mode="reflect") for resp in (grad, lap))


def standardise(features: np.ndarray) -> np.ndarray:
    """Zero mean and unit variance per feature (constant features become 0).

    Examples
    --------
    >>> standardise(np.array([[1.0, 5.0], [3.0, 5.0]])).tolist()
    [[-1.0, 0.0], [1.0, 0.0]]
    """
    f = np.asarray(features, dtype=np.float64)
    flat = f.reshape(-1, f.shape[-1])
    sd = flat.std(axis=0)
    return (f - flat.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def pixel_features(image, *, colour: bool = True, position: bool = False, texture: bool = True) -> np.ndarray:
    """Standardised per-pixel features: Lab colour, (y, x) position, texture.

    Parameters
    ----------
    image : (H, W[, C]) array
    colour, position, texture : bool
        Which groups to include (in that order).

    Returns
    -------
    (H, W, F) float64 array, every feature standardised.

    Examples
    --------
    >>> pixel_features(np.random.default_rng(0).random((6, 7, 3)), position=True).shape
    (6, 7, 11)
    """
    img = check_image(image)
    parts = []
    if colour:
        parts.append(rgb2lab(img))
    if position:
        yy, xx = np.mgrid[0 : img.shape[0], 0 : img.shape[1]].astype(np.float64)
        parts.append(np.stack([yy, xx], axis=2))
    if texture:
        parts.append(texture_features(img))
    if not parts:
        raise InputError("pixel_features: at least one of colour, position, texture must be True")
    return standardise(np.concatenate(parts, axis=2))


def pixel_feature_names(*, colour: bool = True, position: bool = False, texture: bool = True) -> list[str]:
    """Names of the :func:`pixel_features` channels, in order.

    Examples
    --------
    >>> pixel_feature_names(texture=False, position=True)
    ['L*', 'a*', 'b*', 'y', 'x']
    """
    names = []
    if colour:
        names += ["L*", "a*", "b*"]
    if position:
        names += ["y", "x"]
    if texture:
        for s in TEXTURE_SCALES:
            names += [f"gradient(s={s:g})", f"|laplacian|(s={s:g})"]
    return names


def boundary_strength(image, sigma: float = 1.0) -> np.ndarray:
    """Colour gradient magnitude in Lab, scaled to [0, 1] by its 99th percentile.

    Examples
    --------
    >>> img = np.zeros((10, 10, 3)); img[:, 5:] = 1
    >>> b = boundary_strength(img)
    >>> bool(b[:, 4:6].min() > 0.5), float(b[:, 0].max())
    (True, 0.0)
    """
    lab = lab_colour(image)
    g = np.sqrt(sum(ndimage.gaussian_gradient_magnitude(lab[:, :, c], sigma) ** 2 for c in range(3)))
    top = np.percentile(g, 99)
    return np.clip(g / top, 0, 1) if top > 0 else np.zeros_like(g)


def region_means(features, labels) -> np.ndarray:
    """Mean feature vector of every region.

    Parameters
    ----------
    features : (H, W, F) or (H, W) array
    labels : (H, W) int array, labels 0..k-1

    Returns
    -------
    (k, F) float64 array

    Examples
    --------
    >>> region_means(np.arange(4.0).reshape(2, 2), np.array([[0, 0], [1, 1]])).tolist()
    [[0.5], [2.5]]
    """
    lab = check_label_map(labels, "labels")
    f = np.asarray(features, dtype=np.float64)
    if f.ndim == 2:
        f = f[:, :, None]
    if f.shape[:2] != lab.shape:
        raise InputError(f"features: expected shape {lab.shape + ('F',)}, got {f.shape}")
    k = int(lab.max()) + 1
    counts = np.bincount(lab.ravel(), minlength=k).astype(np.float64)
    sums = np.stack([np.bincount(lab.ravel(), weights=f[:, :, c].ravel(), minlength=k) for c in range(f.shape[2])], 1)
    return sums / np.maximum(counts, 1)[:, None]


def group_means(index: np.ndarray, n_groups: int, weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Mean of ``values`` (N, d) over the groups of ``index`` (N,) of sizes ``weights``, as float64.

    Examples
    --------
    >>> group_means(np.array([0, 1, 0]), 2, np.array([2.0, 1.0]), np.array([[1.0], [5.0], [3.0]])).tolist()
    [[2.0], [5.0]]
    """
    import scipy.sparse as sp

    agg = sp.csr_matrix((np.ones(len(index)), (index, np.arange(len(index)))), shape=(n_groups, len(index)))
    return np.asarray(agg @ values.astype(np.float64)) / weights[:, None]
