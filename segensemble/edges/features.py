"""Per-pixel features of the learned boundary detector.

Oriented gradients in the manner of Martin, Fowlkes & Malik's Pb: for every
channel (L, a, b and texture energy at two scales), every disc radius and
eight orientations, the difference between the mean of the channel on the
two halves of a disc split by a diameter (one correlation with a
half-disc kernel per orientation). Per channel and radius the maximum and
the mean over orientations are kept; per radius the channels are also
combined (each scaled by its 99th percentile) into one oriented energy,
with how much of a local maximum it is and its smoothed level. Then the
neighbourhood: the fine combined energies and the lightness gradient read
on a 5 x 5 grid of offsets (spacing 3 px) around the pixel, so the learner
sees the shape of the contour and not one pixel alone (the patch view of
Sketch Tokens and Structured Edges, restricted to a few channels).

:func:`context_features` gives a second stage the first stage's
probabilities around the pixel (auto-context).
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from segensemble.edges._oriented import add_scaled, orientation_stats
from segensemble.features import lab_colour, texture_features
from segensemble.errors import InputError
from segensemble.threads import available_cores, thread_map
from segensemble.validation import check_image
from segensemble.evaluation.nms import non_maximum_suppression

__all__ = ["RADII", "N_ORIENTATIONS", "FEATURE_SETS", "FOURIER_RADII", "half_disc_kernels", "boundary_features",
           "boundary_feature_names", "context_features", "shifted"]

#: Disc radii (pixels, at BSDS500's 481 x 321) of the oriented gradients.
RADII = (3, 6, 12, 20)
#: Orientations of the half-disc split, k pi / N_ORIENTATIONS.
N_ORIENTATIONS = 8
_TEXTURE_SCALES = (1.0, 2.0)
_N_CHANNELS = 3 + 2 * len(_TEXTURE_SCALES)
#: Offsets of the neighbourhood grid (pixels along y and x).
_GRID = tuple(range(-6, 7, 3))
#: The feature sets :func:`boundary_features` computes (a model file names the one it was trained on). All give
#: the same 146 columns; ``v2`` computes the oriented gradients of radius 6, 12 and 20 on the image at half size
#: (radius 3, 6 and 10 there), a sixth of v1's cost, and brings them back by bilinear interpolation; ``v3`` is
#: v1 with the correlations of radius 6, 12 and 20 computed through the discrete Fourier transform (one transform
#: of each channel, one inverse per kernel): v1's values to float32 rounding, those correlations in a third of the
#: time (the features in two thirds).
FEATURE_SETS = ("oriented-gradients-v1", "oriented-gradients-v2", "oriented-gradients-v3")
#: Radii whose half-disc correlations feature set v3 computes through the Fourier transform (radius 3's 7 x 7
#: kernels are cheaper applied directly).
FOURIER_RADII = (6, 12, 20)


def half_disc_kernels(radius: int, n_orientations: int = N_ORIENTATIONS) -> list:
    """Kernels whose correlation with a channel is (mean on one half-disc) - (mean on the other).

    The disc has the given radius; orientation k splits it by the diameter
    at angle ``k pi / n`` (pixels within half a pixel of the diameter are
    left out).

    Examples
    --------
    >>> k = half_disc_kernels(2, 4)[0]
    >>> k.shape, round(float(k.sum()), 6), bool((k[:, 3:] > 0).all() or (k[:, 3:] < 0).all())
    ((5, 5), 0.0, False)
    """
    y, x = np.mgrid[-radius:radius + 1, -radius:radius + 1].astype(np.float64)
    disc = x * x + y * y <= radius * radius + 0.5
    kernels = []
    for k in range(n_orientations):
        t = np.pi * k / n_orientations
        s = x * np.cos(t) + y * np.sin(t)
        pos, neg = disc & (s > 0.5), disc & (s < -0.5)
        kernels.append((pos / pos.sum() - neg / neg.sum()).astype(np.float32))
    return kernels


_KERNELS = {r: half_disc_kernels(r) for r in RADII}
_HALF_KERNELS = {r: half_disc_kernels(max(1, round(r / 2))) for r in RADII}


def _channels(image) -> list:
    lab = lab_colour(image)
    tex = texture_features(image, scales=_TEXTURE_SCALES, lab=lab).astype(np.float32)
    lab = lab.astype(np.float32)
    return [lab[..., 0] / 100, lab[..., 1] / 100, lab[..., 2] / 100] + [tex[..., i] / 20 for i in range(tex.shape[2])]


def _aligned(a, align: int = 64) -> np.ndarray:
    """A C-contiguous float32 copy of ``a`` starting on an ``align``-byte boundary.

    OpenCV's vectorised ``magnitude`` takes another path for the elements it
    cannot load aligned, which rounds differently: with every buffer aligned
    the result no longer depends on where the allocator put the arrays.
    """
    a = np.asarray(a, dtype=np.float32)
    buf = np.empty(a.size + align // 4, np.float32)
    start = (-buf.ctypes.data % align) // 4
    out = buf[start:start + a.size].reshape(a.shape)
    out[...] = a
    return out


def shifted(channel, offsets=_GRID) -> list:
    """``channel`` read at every (dy, dx) of ``offsets`` x ``offsets`` from each pixel (reflected at the border).

    Examples
    --------
    >>> [s[1, 1].item() for s in shifted(np.arange(9.0).reshape(3, 3), (-1, 1))]
    [0.0, 2.0, 6.0, 8.0]
    """
    pad = max(abs(o) for o in offsets)
    p = np.pad(channel, pad, mode="reflect")
    h, w = channel.shape
    return [p[pad + dy:pad + dy + h, pad + dx:pad + dx + w] for dy in offsets for dx in offsets]


def boundary_feature_names() -> list:
    """Names of the :func:`boundary_features` columns, in order.

    Examples
    --------
    >>> names = boundary_feature_names(); len(names), names[0]
    (146, 'L r3 max')
    """
    channels = ["L", "a", "b"] + [f"texture{i}" for i in range(2 * len(_TEXTURE_SCALES))]
    names = []
    for r in RADII:
        names += [f"{c} r{r} {stat}" for c in channels for stat in ("max", "mean")]
        names += [f"energy r{r}", f"energy r{r} local max ratio", f"energy r{r} smoothed"]
    names += ["L", "a", "b"]
    for base in ("energy r3", "energy r6", "L gradient"):
        names += [f"{base} at {dy},{dx}" for dy in _GRID for dx in _GRID]
    return names


def _oriented(channel, kernels) -> tuple:
    """One channel's absolute oriented responses: (strongest, mean over orientations, the responses, the divisor
    that scales them for the combined energy: the 99th percentile of the strongest + 1e-6)."""
    import cv2

    resp = np.empty((len(kernels),) + channel.shape, np.float32)
    for k, kernel in enumerate(kernels):
        cv2.filter2D(channel, -1, kernel, dst=resp[k], borderType=cv2.BORDER_REFLECT)
    return _statistics(resp)


def _statistics(resp) -> tuple:
    strongest, mean = orientation_stats(resp)  # resp made absolute in place
    return strongest, mean, resp, np.percentile(strongest, 99) + 1e-6


class _Fourier:
    """Correlations of an image's channels with the half-disc kernels of :data:`FOURIER_RADII` through the DFT.

    Each channel is extended by reflection (OpenCV's ``BORDER_REFLECT``, as ``filter2D`` extends it) by the largest
    radius and transformed once (:meth:`spectrum`); a kernel's correlation is the inverse transform of the product
    with the kernel's transform (:meth:`oriented`; :meth:`kernels` gives one radius's 8 at a time, so that no more
    are held). The extension is at least as wide as every kernel's reach, so the cyclic wrap of the transform never
    reaches the image's pixels; each kernel is placed on the grid so that pixel (y, x) of the image is (y, x) of the
    inverse transform, whose first rows alone are computed. In float64, whose rounding (~1e-16 of the channel)
    leaves a flat channel's responses as near zero as ``filter2D``'s, as the energy's local-maximum ratio (a ratio
    of two such near zeros in flat regions) needs.
    """

    def __init__(self, shape):
        import cv2

        self._shape, self._pad = shape, max(FOURIER_RADII)
        self._grid = tuple(cv2.getOptimalDFTSize(n + 2 * self._pad) for n in shape)

    def kernels(self, radius: int) -> list:
        """The transforms of the kernels of ``radius``: each flipped (a correlation is a convolution with it) and
        placed (see the class)."""
        import cv2

        spectra = []
        for kernel in _KERNELS[radius]:
            placed = np.zeros(self._grid, np.float64)
            placed[:2 * radius + 1, :2 * radius + 1] = kernel[::-1, ::-1]
            shift = -(radius + self._pad)  # output (y, x) reads the extended channel around (y + pad, x + pad)
            spectra.append(cv2.dft(np.roll(placed, (shift, shift), axis=(0, 1))))
        return spectra

    def spectrum(self, channel):
        """The transform of the channel extended by reflection (OpenCV's packed layout)."""
        import cv2

        p, (gh, gw) = self._pad, self._grid
        extended = cv2.copyMakeBorder(channel, p, p, p, p, cv2.BORDER_REFLECT).astype(np.float64)
        grid = np.zeros((gh, gw), np.float64)
        grid[:extended.shape[0], :extended.shape[1]] = extended
        return cv2.dft(grid)

    def oriented(self, spectrum, kernels) -> tuple:
        """:func:`_oriented` of the channel whose :meth:`spectrum` is given, with the :meth:`kernels` of a radius."""
        import cv2

        h, w = self._shape
        inverse = cv2.DFT_INVERSE | cv2.DFT_REAL_OUTPUT | cv2.DFT_SCALE
        resp = np.empty((N_ORIENTATIONS, h, w), np.float32)
        for k, kernel in enumerate(kernels):
            resp[k] = cv2.dft(cv2.mulSpectrums(spectrum, kernel, 0), flags=inverse, nonzeroRows=h)[:h, :w]
        return _statistics(resp)


def boundary_features(image, *, stack: bool = True, feature_set: str = FEATURE_SETS[0], n_jobs: int = 1):
    """The detector's features of every pixel, (H, W, 146) float32 (see the module docstring).

    Parameters
    ----------
    image : (H, W[, C]) array
        Any image segensemble accepts.
    stack : bool, default True
        False: the list of the 146 (H, W) planes instead (the detector reads
        them at its prediction stride without copying the whole stack).
    feature_set : str, default 'oriented-gradients-v1'
        One of :data:`FEATURE_SETS` (a model's ``features``).
    n_jobs : int, default 1
        Threads computing the channels' oriented responses (-1: every core); the features do not depend on it.

    Returns
    -------
    (H, W, F) float32 array, or list of F (H, W) float32 arrays
        Columns named by :func:`boundary_feature_names`.

    References
    ----------
    D. Martin, C. Fowlkes, J. Malik, "Learning to detect natural image boundaries using local brightness,
    color, and texture cues", IEEE TPAMI 26(5), 2004 (oriented half-disc gradients).
    J. Lim, C. L. Zitnick, P. Dollár, "Sketch tokens", CVPR 2013 (patch features around the pixel).

    Examples
    --------
    >>> boundary_features(np.zeros((30, 40, 3))).shape
    (30, 40, 146)
    """
    import cv2

    if feature_set not in FEATURE_SETS:
        raise InputError(f"feature_set: expected one of {', '.join(FEATURE_SETS)}, got {feature_set!r}")
    workers = available_cores(n_jobs)
    channels = _channels(check_image(image))
    h, w = channels[0].shape
    half = feature_set == FEATURE_SETS[1] and min(h, w) >= 8
    small = [cv2.resize(c, ((w + 1) // 2, (h + 1) // 2), interpolation=cv2.INTER_AREA) for c in channels] if half \
        else None
    fourier = _Fourier((h, w)) if feature_set == FEATURE_SETS[2] else None
    spectra = None if fourier is None else thread_map(fourier.spectrum, channels, workers, name="features")
    feats, energy = [], {}
    for r in RADII:
        coarse = half and r > RADII[0]
        source, kernels = (small, _HALF_KERNELS[r]) if coarse else (channels, _KERNELS[r])
        back = (lambda a: cv2.resize(a, (w, h), interpolation=cv2.INTER_LINEAR)) if coarse else (lambda a: a)
        if fourier is not None and r in FOURIER_RADII:
            kernel_spectra = fourier.kernels(r)
            jobs = [lambda s=s: fourier.oriented(s, kernel_spectra) for s in spectra]
        else:
            jobs = [lambda c=c: _oriented(c, kernels) for c in source]
        per_orientation = np.zeros((N_ORIENTATIONS,) + source[0].shape, np.float32)
        for strongest, mean, resp, divisor in thread_map(lambda job: job(), jobs, workers, name="features"):
            feats += [back(strongest), back(mean)]
            add_scaled(per_orientation, resp, divisor)  # in channel order, whatever the threads
        e = per_orientation.max(axis=0)
        sigma = 2 if coarse else 4
        local = e / (ndimage.maximum_filter(e, size=3 if coarse else 5) + 1e-6)
        e, local, smoothed = back(e), back(local), back(cv2.GaussianBlur(e, (0, 0), sigma))
        energy[r] = e
        feats += [e, local, smoothed]
    feats += channels[:3]
    smooth_l = cv2.GaussianBlur(channels[0], (0, 0), 1)
    gx, gy = _aligned(cv2.Sobel(smooth_l, cv2.CV_32F, 1, 0)), _aligned(cv2.Sobel(smooth_l, cv2.CV_32F, 0, 1))
    gradient = cv2.magnitude(gx, gy, _aligned(np.zeros_like(gx)))
    for base in (energy[3], energy[6], gradient):
        feats += shifted(base)
    feats = [np.asarray(f, dtype=np.float32) for f in feats]
    return np.stack(feats, axis=-1) if stack else feats


def context_features(probability, *, stack: bool = True):
    """A second stage's view of the first stage's boundary probability around every pixel, (H, W, 52) float32.

    The probability read on a 5 x 5 grid of offsets 4 px apart, its
    non-maximum-suppressed ridge on a 5 x 5 grid 2 px apart, and the
    probability smoothed at sigma 3 and 8 (auto-context: Tu & Bai, IEEE TPAMI 32(10), 2010).
    ``stack=False`` gives the list of (H, W) planes.

    Examples
    --------
    >>> context_features(np.zeros((20, 30))).shape
    (20, 30, 52)
    """
    import cv2

    p = np.asarray(probability, dtype=np.float32)
    ridge = non_maximum_suppression(p).astype(np.float32)
    feats = shifted(p, tuple(range(-8, 9, 4))) + shifted(ridge, tuple(range(-4, 5, 2)))
    feats += [cv2.GaussianBlur(p, (0, 0), 3), cv2.GaussianBlur(p, (0, 0), 8)]
    return np.stack(feats, axis=-1) if stack else feats
