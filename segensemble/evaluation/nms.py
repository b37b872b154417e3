"""Non-maximum suppression of soft boundary maps.

A boundary detector answers with a ridge a few pixels wide around every
contour; the Berkeley benchmark wants one pixel per contour. The standard
step before it (Canny 1986; Dollár & Zitnick's Structured Edge detector)
keeps a pixel only where the map is a maximum across the boundary:

1. the orientation of the boundary at every pixel is estimated from the
   map itself, by the second derivatives of the map smoothed with a
   triangle filter (:func:`boundary_normal`);
2. a pixel is suppressed when the map, read with bilinear interpolation at
   ``d = 1..radius`` pixels on either side along the normal, exceeds its own
   value times ``multiplier`` (a multiplier slightly above 1 keeps both
   pixels of a flat two-pixel ridge rather than neither);
3. the map fades linearly to 0 over the last ``border`` pixels of the image,
   where the orientation is unreliable.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from segensemble.errors import InputError
from segensemble.evaluation._suppress import suppress_band
from segensemble.validation import check_int, check_soft_map

__all__ = ["boundary_normal", "edge_map_nms", "non_maximum_suppression", "triangle_smooth"]


def triangle_smooth(image, radius: int) -> np.ndarray:
    """Separable convolution with the triangle filter ``[1, 2, ..., r+1, ..., 2, 1] / (r+1)^2`` (reflected borders).

    Examples
    --------
    >>> impulse = np.zeros((5, 5)); impulse[2, 2] = 1
    >>> triangle_smooth(impulse, 1)[2].tolist()
    [0.0, 0.125, 0.25, 0.125, 0.0]
    """
    r = check_int(radius, "radius", minimum=0)
    f = np.concatenate([np.arange(1, r + 2), np.arange(r, 0, -1)]).astype(np.float64)
    f /= f.sum()
    out = ndimage.convolve1d(np.asarray(image, dtype=np.float64), f, axis=0, mode="reflect")
    return ndimage.convolve1d(out, f, axis=1, mode="reflect")


def _derivative(a, axis: int) -> np.ndarray:
    """Central differences along an axis (one-sided at the ends; 0 along an axis of one pixel)."""
    return np.gradient(a, axis=axis) if a.shape[axis] > 1 else np.zeros_like(a)


def boundary_normal(edges, *, smoothing: int = 4) -> np.ndarray:
    """Angle in [0, pi) of the normal to the boundary at every pixel of a soft boundary map.

    With ``S`` the map smoothed by :func:`triangle_smooth` and ``Sxx``,
    ``Syy``, ``Sxy`` its second derivatives (central differences), the normal
    is ``atan(Syy * sign(-Sxy) / Sxx)`` modulo pi (sign taken as +1 where
    ``Sxy = 0``): across a ridge the curvature is strongest along the normal
    (x to the right, y down).

    Examples
    --------
    A vertical ridge has a horizontal normal (angle 0), a horizontal ridge a
    vertical one (pi / 2):

    >>> ridge = np.zeros((9, 9)); ridge[:, 4] = 1
    >>> round(float(boundary_normal(ridge)[4, 4]), 3), round(float(boundary_normal(ridge.T)[4, 4]), 3)
    (0.0, 1.571)
    """
    s = triangle_smooth(check_soft_map(edges), smoothing)
    sx, sy = _derivative(s, 1), _derivative(s, 0)
    sxx, sxy, syy = _derivative(sx, 1), _derivative(sx, 0), _derivative(sy, 0)
    sign = np.where(sxy > 0, -1.0, 1.0)  # sign(-Sxy), with +1 where Sxy = 0 (axis-aligned ridges)
    return np.mod(np.arctan(syy * sign / (sxx + 1e-5)), np.pi)


def non_maximum_suppression(edges, normal=None, *, radius: int = 1, border: int = 5,
                            multiplier: float = 1.01) -> np.ndarray:
    """Thin a soft boundary map to its maxima across the boundary.

    Parameters
    ----------
    edges : (H, W) array
        Soft boundary strength (any non-negative scale; usually [0, 1]).
    normal : (H, W) array, optional
        Angle of the boundary normal (radians; x right, y down). Default:
        :func:`boundary_normal` of ``edges``.
    radius : int, default 1
        Compare with the map at 1..radius pixels on either side along the normal.
    border : int, default 5
        Fade the result linearly to 0 over this many pixels at the image border (0: no fading).
    multiplier : float, default 1.01
        A pixel is suppressed when ``value * multiplier`` is below a neighbour along the normal.

    Returns
    -------
    (H, W) float64 array
        ``edges`` where kept, 0 where suppressed.

    Raises
    ------
    InputError
        A map that is not 2-D, numeric and finite; a ``normal`` of another shape; bad settings.

    References
    ----------
    J. Canny, "A computational approach to edge detection", IEEE TPAMI 8(6), 1986.
    P. Dollár, C. L. Zitnick, "Fast edge detection using structured forests", IEEE TPAMI 37(8), 2015
    (Sec. 4: the non-maximum suppression applied before the BSDS benchmark).

    Examples
    --------
    A ridge three pixels wide keeps its centre line:

    >>> ridge = np.zeros((12, 12)); ridge[:, 5], ridge[:, 6], ridge[:, 7] = 0.5, 1.0, 0.5
    >>> thin = non_maximum_suppression(ridge, border=0)
    >>> sorted(set(np.flatnonzero(thin[6]).tolist()))
    [6]
    """
    e = check_soft_map(edges)
    given = normal is not None
    if given:
        normal = check_soft_map(normal, "normal")
        if normal.shape != e.shape:
            raise InputError(f"normal: expected shape {e.shape} like edges, got {normal.shape}")
    r = check_int(radius, "radius", minimum=1)
    b = check_int(border, "border", minimum=0)
    m = float(multiplier)
    if not np.isfinite(m) or m <= 0:
        raise InputError(f"multiplier: expected a positive number, got {multiplier!r}")
    h, w = e.shape
    out = np.empty((h, w), np.float64)
    rows = max(1, BAND_PIXELS // w)
    margin = r + _NORMAL_REACH
    for top in range(0, h, rows):  # bands of rows, each with the margin its pixels read
        lo, hi = max(0, top - margin), min(h, top + rows + margin)
        band = normal[lo:hi] if given else boundary_normal(e[lo:hi])
        out[top:top + rows] = _suppressed(e[lo:hi], band, lo, h, r, m, top - lo, min(top + rows, h) - lo)
    if b:  # the nearer side decides: min over both axes (equal to min(distance to the border) / b)
        out *= np.minimum(_side_fade(h, b)[:, None], _side_fade(w, b)[None, :])
    return out


#: Pixels :func:`non_maximum_suppression` thins at once: larger maps go in bands of rows (each with the rows its
#: pixels read), the same result to the last bit; thinning a 12 MP map then peaks 0.3 GB above it, not 1.1 GB.
BAND_PIXELS = 1 << 20
#: Rows beyond a pixel that its normal reads: the triangle smoothing (radius 4) and two central differences.
_NORMAL_REACH = 6


def _suppressed(e, normal, lo: int, h: int, r: int, m: float, first: int, stop: int) -> np.ndarray:
    """Rows ``first:stop`` of ``e`` (rows ``lo`` on of a map ``h`` rows high) where it is a maximum along
    ``normal``, 0 elsewhere (the band's other rows are the margin they read).

    The positions read are computed in the whole map's rows and then shifted to the band's (an exact
    subtraction of a whole number), so the interpolation weights are the whole map's to the last bit. The
    readings and comparisons are compiled (:mod:`segensemble.evaluation._suppress`): the values
    ``scipy.ndimage.map_coordinates(e, positions, order=1)`` gives, bit for bit, without its arrays of
    positions.
    """
    cos, sin = (np.ascontiguousarray(f(normal), dtype=np.float64) for f in (np.cos, np.sin))
    return suppress_band(np.ascontiguousarray(e, dtype=np.float64), cos, sin, lo, h, r, m, first, stop)


def _side_fade(n: int, width: float) -> np.ndarray:
    """Along one axis of ``n`` pixels: 0 at both ends rising linearly to 1 at ``width`` pixels from the nearer one."""
    i = np.arange(n, dtype=np.float64)
    return np.minimum(np.minimum(i, n - 1 - i) / width, 1.0)


def edge_map_nms(edges) -> np.ndarray:
    """Non-maximum suppression as edge detectors are evaluated on BSDS500 (``score --nms``).

    The protocol of the Structured Edge, HED and RCF evaluation scripts:
    smooth the map with the radius-1 triangle ``[1, 2, 1] / 4``, take the
    normal from the map smoothed again with radius 4 (:func:`boundary_normal`),
    suppress along it at distance 1 with multiplier 1.01
    (:func:`non_maximum_suppression`), and fade the last 5 pixels of every
    side: a pixel ``x`` pixels from a side (``x < 5``) is multiplied by
    ``x / 5``, once per side it is near (corners get the product).

    Examples
    --------
    >>> ridge = np.zeros((12, 12)); ridge[:, 5], ridge[:, 6], ridge[:, 7] = 0.5, 1.0, 0.5
    >>> thin = edge_map_nms(ridge)
    >>> np.flatnonzero(thin[6]).tolist(), round(float(thin[6, 6]), 3), float(thin[0, 6])
    ([6], 0.75, 0.0)
    """
    e = triangle_smooth(check_soft_map(edges), 1)
    out = non_maximum_suppression(e, boundary_normal(e), border=0)
    h, w = out.shape
    return out * _side_fade(h, min(5, h // 2 or 1))[:, None] * _side_fade(w, min(5, w // 2 or 1))[None, :]
