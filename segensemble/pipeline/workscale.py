"""The working scale: run a recipe on a photo at the scale its models were fitted on, answer at full resolution.

A recipe's members, boundary detector and fusion were chosen on BSDS500
images (481 x 321 = 154 401 pixels). A 12-megapixel photo gives them a scale
they never saw and costs ~80 times the memory and time for the same
segmentation. So a recipe with a ``working_pixels`` budget processes a larger
image at that budget (area-averaged, aspect ratio kept), and the labels come
back at the input's full resolution by a joint bilateral upsampling of the
label map (after Kopf et al., "Joint bilateral upsampling", SIGGRAPH 2007):
every full-resolution pixel ``p`` whose 3 x 3 working-pixel neighbourhood
``N(p)`` holds more than one label takes the label ``l`` of that
neighbourhood with the largest score

    S(l) = sum_{q in N(p), L(q) = l} w_s(p, q) * exp(-|I(p) - m_l|^2 / (2 sigma_r^2)),
    w_s(p, q) = exp(-|p - q|^2 / (2 sigma_s^2)),
    m_l = sum_{q in N(p), L(q) = l} w_s(p, q) I_w(q) / sum_{q in N(p), L(q) = l} w_s(p, q),

where ``|p - q|`` is in working pixels, ``I(p)`` is the full-resolution
pixel's CIE Lab colour and ``I_w(q)`` the working pixel's. Where we chose:
Kopf et al. weigh each ``q`` by its own colour, ``exp(-|I(p) - I_w(q)|^2 /
(2 sigma_r^2))``; against the label's local mean ``m_l`` instead, a working
pixel labelled one side of an edge while its colour is the other side's does
not drag the full-resolution pixels of that colour along. Everywhere else
the label is the nearest working pixel's. Only a band of about one working pixel on each side of a
boundary is touched, in strips of rows, so memory stays a few bytes a pixel:
no full-resolution float image is ever held.

The refinement moves boundaries; it does not make regions. Pixel by pixel,
the vote can leave a few pixels of a label cut off from the rest of it (a
speck of texture that resembles the other side): 98 pieces of 25 regions on
a 640 x 427 photo, 107 on a 12-megapixel one. So a piece of the refined map
(4-connected, one label) that lies wholly in the band (or in a working pixel
outside it with no other such pixel beside it) and is not part of a working
region lying wholly there itself (a region a working pixel or two wide; a
piece of one smaller than half a working pixel is still a fragment) is a
fragment, and takes the label it shares the longest border with, among the
pieces that are no fragments when it touches any (a fragment is also less
than four working pixels high; when one ringed by fragments took a
fragment's label, the pass runs again); the refined map then has the
working map's connected regions.

Examples
--------
>>> guide = np.zeros((40, 40, 3), np.uint8); guide[:, 17:] = 255      # an edge at column 17
>>> coarse = np.zeros((10, 10), np.int32); coarse[:, 4:] = 1           # at working column 4 (full column 16)
>>> small = working_image(guide, (10, 10))
>>> labels = upsample_labels(coarse, small, guide)
>>> labels.shape, int(np.argmax(labels[0]))                          # the boundary follows the full-res edge
((40, 40), 17)
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from scipy import ndimage

from segensemble.boundarymaps import thin_boundaries
from segensemble.errors import InputError
from segensemble.evaluation.nms import boundary_normal, non_maximum_suppression
from segensemble.pipeline._vote_sums import label_sums
from segensemble.threads import available_cores, thread_map
from segensemble.validation import check_image, check_int, check_soft_map

__all__ = ["WORKING_PIXELS", "working_shape", "working_image", "upsample_labels", "upsample_map",
           "thin_upsampled_map", "check_working_pixels", "SIGMA_SPATIAL", "SIGMA_RANGE"]

#: The working scale of recipes from ``default@6``: the pixel count of every BSDS500 image (481 x 321 or
#: 321 x 481), the scale at which the detector and the merge criterion were trained. Benchmark images run at
#: their own size; a photo of the same aspect ratio is seen at exactly the training images' size.
WORKING_PIXELS = 154_401
#: Spatial and range widths of the joint bilateral kernel: working pixels, and CIE Lab units.
SIGMA_SPATIAL = 0.8
SIGMA_RANGE = 8.0
#: Full-resolution rows handled at a time (bounded memory on 100-megapixel images).
_STRIP_PIXELS = 4_000_000
#: Band pixels scored at a time.
_CHUNK = 262_144
#: Most passes that remove fragments: another runs only when a fragment ringed by fragments took the label of one
#: (that label may have moved on): 406 + 3 pixels on a 640 x 427 SLIC map, then none.
_FRAGMENT_PASSES = 4
#: Strips per thread when several threads refine (whole strips are the unit of work).
_STRIPS_PER_THREAD = 4


def check_working_pixels(value, name: str = "working_pixels"):
    """None (full resolution) or a pixel budget of at least 1 024.

    Examples
    --------
    >>> check_working_pixels(154_401), check_working_pixels(None)
    (154401, None)
    """
    if value is None:
        return None
    return check_int(value, name, minimum=1024)


def working_shape(shape, working_pixels) -> tuple[int, int] | None:
    """(h, w) at which an image of ``shape`` is processed, or None when it is processed at its own size.

    Examples
    --------
    >>> working_shape((3000, 4000), 154_401), working_shape((321, 481), 154_401), working_shape((1284, 1924), 154_401)
    ((340, 453), None, (321, 481))
    """
    h, w = int(shape[0]), int(shape[1])
    if working_pixels is None or h * w <= working_pixels:
        return None
    f = (working_pixels / (h * w)) ** 0.5
    return max(1, int(h * f)), max(1, int(w * f))


def _rgb_channels(raw: np.ndarray) -> np.ndarray:
    """An image array as stored, with alpha dropped and gray kept 2-D (no copy, no conversion)."""
    if raw.ndim == 3 and raw.shape[2] == 1:
        return raw[:, :, 0]
    if raw.ndim == 3 and raw.shape[2] == 4:
        return raw[:, :, :3]
    return raw


def working_image(raw, shape) -> np.ndarray:
    """The image area-averaged to ``shape`` (h, w), as float64 RGB in [0, 1] (what segmenters take).

    ``raw`` is the image as decoded or given (uint8/uint16/float, gray, RGB or
    RGBA); only the small result is ever converted to float64.

    Examples
    --------
    >>> working_image(np.full((40, 60), 255, np.uint8), (20, 30)).shape
    (20, 30, 3)
    """
    arr = _rgb_channels(np.asarray(raw))
    if arr.dtype not in (np.uint8, np.uint16, np.float32, np.float64):
        arr = check_image(arr)
    small = cv2.resize(np.ascontiguousarray(arr), (shape[1], shape[0]), interpolation=cv2.INTER_AREA)
    return check_image(small)


def _lab(rgb01: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(np.ascontiguousarray(rgb01, dtype=np.float32), cv2.COLOR_RGB2Lab)


def _strip_lab(raw: np.ndarray, y0: int, y1: int, gain: float = 1.0) -> np.ndarray:
    """CIE Lab (float32) of rows y0:y1 of the full-resolution image as stored, its colours times ``gain``."""
    part = _rgb_channels(raw[y0:y1])
    if part.dtype == bool:
        part = part.astype(np.float32)
    elif np.issubdtype(part.dtype, np.unsignedinteger):
        part = part.astype(np.float32) / np.float32(np.iinfo(part.dtype).max)
    elif np.issubdtype(part.dtype, np.signedinteger):
        part = check_image(part).astype(np.float32)
    else:
        part = np.clip(part.astype(np.float32), 0.0, 1.0)
    if gain != 1.0:
        part = np.clip(part * np.float32(gain), 0.0, 1.0)
    if part.ndim == 2:
        part = np.repeat(part[:, :, None], 3, axis=2)
    return _lab(part)


def _nearest_index(n_full: int, n_small: int):
    """For every full-resolution coordinate: its position in working pixels and the nearest working pixel."""
    pos = (np.arange(n_full, dtype=np.float64) + 0.5) * (n_small / n_full) - 0.5
    return pos, np.clip(np.rint(pos), 0, n_small - 1).astype(np.intp)


def upsample_labels(labels, small_image, raw, *, sigma_spatial: float = SIGMA_SPATIAL,
                    sigma_range: float = SIGMA_RANGE, n_jobs: int = 1, gain: float = 1.0) -> np.ndarray:
    """Labels of the working image brought to the full resolution of ``raw``, boundaries refined against it.

    Parameters
    ----------
    labels : (h, w) int array
        Labels of the working image.
    small_image : (h, w, 3) float array
        The working image (RGB in [0, 1]) the labels were computed on.
    raw : (H, W[, C]) array
        The full-resolution image as stored (uint8/uint16/float; gray, RGB or RGBA).
    sigma_spatial, sigma_range : float
        Widths of the joint bilateral kernel (working pixels; CIE Lab units).
    n_jobs : int, default 1
        Threads that refine strips of rows at once (-1: every core); the
        labels do not depend on it (every pixel's vote reads only its own
        neighbourhood).
    gain : float, default 1.0
        ``raw``'s colours are compared times this (clipped to [0, 1]): the
        exposure gain the working image was brightened by
        (:mod:`segensemble.pipeline.exposure`).

    Returns
    -------
    (H, W) int32 array
        Every full-resolution pixel's label; pixels farther than one working
        pixel from a boundary keep the nearest working pixel's label.

    Examples
    --------
    >>> guide = np.zeros((8, 8), np.uint8); guide[:, 5:] = 255
    >>> small = working_image(guide, (4, 4))
    >>> upsample_labels(np.array([[0, 0, 1, 1]] * 4), small, guide)[0].tolist()
    [0, 0, 0, 0, 0, 1, 1, 1]
    """
    workers = available_cores(n_jobs)
    lab = np.asarray(labels)
    h, w = lab.shape
    H, W = np.shape(raw)[:2]
    if (h, w) == (H, W):
        return lab.astype(np.int32)
    lab = lab.astype(np.int32)
    small_lab = _lab(small_image).reshape(-1, 3)
    mixed = ndimage.maximum_filter(lab, size=3, mode="nearest") != ndimage.minimum_filter(lab, size=3, mode="nearest")
    py, iy = _nearest_index(H, h)
    px, ix = _nearest_index(W, w)
    out = np.empty((H, W), np.int32)
    rows = max(1, _STRIP_PIXELS // max(W, 1))
    if workers > 1:  # a few strips per thread, so that they finish together
        rows = min(rows, -(-H // (_STRIPS_PER_THREAD * workers)))
    offsets = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
    inv_s, inv_r = 1.0 / (2 * sigma_spatial ** 2), 1.0 / (2 * sigma_range ** 2)

    def refine(y0):
        y1 = min(H, y0 + rows)
        strip = lab[iy[y0:y1, None], ix[None, :]]
        band = mixed[iy[y0:y1, None], ix[None, :]]
        ys, xs = np.nonzero(band)
        if len(ys):
            colours = _strip_lab(raw, y0, y1, gain)[ys, xs]
            ys_full = ys + y0
            for c0 in range(0, len(ys), _CHUNK):
                sl = slice(c0, c0 + _CHUNK)
                strip[ys[sl], xs[sl]] = _vote(lab, small_lab, w, h, offsets, py[ys_full[sl]], px[xs[sl]],
                                              iy[ys_full[sl]], ix[xs[sl]], colours[sl], inv_s, inv_r)
        out[y0:y1] = strip

    thread_map(refine, range(0, H, rows), workers, name="refine")
    cell = math.ceil(max(H / h, W / w))  # full-resolution pixels a working pixel spans, rounded up
    fixes = _Fragments(lab, mixed, iy, ix, out, tall=4 * cell + 2, least=cell * cell / 2)
    for _ in range(_FRAGMENT_PASSES):
        found = thread_map(lambda y0: fixes.in_rows(y0, min(H, y0 + rows)), range(0, H, rows), workers, name="refine")
        for ys, xs, new, _ in found:
            out[ys, xs] = new  # after every strip has read the map
        if not any(ringed for *_, ringed in found):  # a fragment took a fragment's label: it may be one again
            break
    return out


class _Fragments:
    """The fragments of a refined label map ``out`` and the label each takes (see the module docstring).

    A fragment is also less than ``tall`` rows high (four working pixels: every fragment seen on photos was a few
    dozen pixels at most). :meth:`in_rows` finds them in a strip of rows, reading ``2 * tall`` rows on either side:
    a fragment with a pixel in the strip, and every fragment beside it (whose labels it does not take when it can
    take another), lie wholly in that window, and a piece that reaches the window's end is no fragment, so the
    strips find the same fragments and labels however the rows are cut.
    """

    def __init__(self, lab, mixed, iy, ix, out, tall: int, least: float):
        from skimage.measure import label as components

        self._components = components
        self.lab, self.iy, self.ix, self.out, self.tall, self.least = lab, iy, ix, out, tall, least
        core = ~mixed  # working pixels whose 3 x 3 neighbourhood is one label: their full-resolution pixels keep it
        beside = ndimage.binary_dilation(core, structure=[[0, 1, 0], [1, 0, 1], [0, 1, 0]])  # one of 4 beside
        self.loose = ~(core & beside)  # the band, and core pixels with no core pixel beside them (cut off as easily)
        self.regions = components(lab, background=-1, connectivity=1)  # the working map's 4-connected regions
        self.all_band = np.bincount(self.regions[~self.loose], minlength=int(self.regions.max()) + 1) == 0

    def in_rows(self, y0: int, y1: int) -> tuple:
        """(rows, columns, labels, ringed): the fragment pixels of rows ``y0:y1``, their new labels, and whether a
        fragment of the window took the label of another fragment (it touched no other piece)."""
        H, W = self.out.shape
        a, b = max(0, y0 - 2 * self.tall), min(H, y1 + 2 * self.tall)
        win = self.out[a:b]
        pieces = self._components(win, background=-1, connectivity=1)
        band = np.take(self.loose[self.iy[a:b]], self.ix, axis=1)
        ys, xs = np.nonzero(band)
        ids = pieces[ys, xs]
        n = int(pieces.max()) + 1
        in_band = np.bincount(ids, minlength=n)
        inside = in_band == np.bincount(pieces.ravel(), minlength=n)  # wholly in the band: in_band is its area
        inside[pieces[0] if a > 0 else []] = False
        inside[pieces[-1] if b < H else []] = False
        keep = inside[ids]
        ys, xs, ids = ys[keep], xs[keep], ids[keep]
        top, bottom = np.full(n, H), np.full(n, -1)
        np.minimum.at(top, ids, ys)
        np.maximum.at(bottom, ids, ys)
        inside &= bottom - top < self.tall
        qy, qx = self.iy[a + ys], self.ix[xs]
        thin = (self.lab[qy, qx] == win[ys, xs]) & self.all_band[self.regions[qy, qx]]
        thin &= in_band[ids] >= self.least
        inside[ids[thin]] = False  # part of a working region that lies wholly in the band: not a fragment
        keep = inside[ids]
        ys, xs, ids = ys[keep], xs[keep], ids[keep]
        new, ringed = _longest_border(win, pieces, ys, xs, ids, inside)  # from all of a fragment's pixels
        core = (a + ys >= y0) & (a + ys < y1)
        return a + ys[core], xs[core], new[core], ringed


def _longest_border(win, pieces, ys, xs, ids, fragment) -> tuple:
    """For each given pixel of a piece: the label its piece shares the most pixel edges with (the smallest on a
    tie), counting only the edges with pieces that are no ``fragment`` when it has any; and whether some piece had
    none."""
    if not len(ys):
        return np.empty(0, win.dtype), False
    h, w = win.shape
    pairs = []
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        ny, nx, own = ys + dy, xs + dx, ids
        ok = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
        ny, nx, own = ny[ok], nx[ok], own[ok]
        across = pieces[ny, nx] != own
        other = pieces[ny[across], nx[across]]
        pairs.append(np.stack([own[across], win[ny[across], nx[across]], fragment[other]]))
    (piece, label, loose), counts = np.unique(np.concatenate(pairs, axis=1), axis=1, return_counts=True)
    order = np.lexsort((label, -counts, loose, piece))  # per piece: edges with the regions first
    piece, label, loose = piece[order], label[order], loose[order]
    first = np.r_[True, piece[1:] != piece[:-1]]
    new = np.zeros(int(pieces.max()) + 1, win.dtype)
    new[piece[first]] = label[first]
    return new[ids], bool(loose[first].any())


def _vote(lab, small_lab, w, h, offsets, py, px, iy, ix, colours, inv_s, inv_r) -> np.ndarray:
    """The label of each band pixel among those of its 3 x 3 working neighbourhood (see the module's formula).

    Each candidate label ``l`` scores its spatial support times the colour
    likelihood of the pixel under the label's local mean colour:
    ``sum_q∈l w_s(p, q) * exp(-|I(p) - m_l|^2 / (2 sigma_r^2))`` with ``m_l`` the
    ``w_s``-weighted mean of the working colours labelled ``l`` there. Against
    the local mean, not each working pixel's colour, a working pixel labelled
    one side of an edge while its colour is the other's does not pull the
    full-resolution pixels of that colour with it.
    """
    n = len(iy)
    cand = np.empty((n, len(offsets)), np.int32)
    ws = np.empty((n, len(offsets)), np.float32)
    col = np.empty((n, len(offsets), 3), np.float32)
    for j, (dy, dx) in enumerate(offsets):
        qy = np.clip(iy + dy, 0, h - 1)
        qx = np.clip(ix + dx, 0, w - 1)
        cand[:, j] = lab[qy, qx]
        col[:, j] = small_lab[qy * w + qx]
        ws[:, j] = np.exp(-((py - qy) ** 2 + (px - qx) ** 2) * inv_s)
    support, sums = label_sums(cand, ws, col)
    means = sums / support[:, :, None]
    score = support * np.exp(-((colours[:, None, :] - means) ** 2).sum(axis=2) * inv_r)
    return cand[np.arange(n), np.argmax(score, axis=1)]


def upsample_map(values, shape) -> np.ndarray:
    """A per-pixel map of the working image (e.g. a confidence in [0, 1]) brought to ``shape`` (H, W), bilinear.

    Examples
    --------
    >>> upsample_map(np.array([[0.0, 1.0]]), (1, 4)).tolist()
    [[0.0, 0.25, 0.75, 1.0]]
    """
    arr = np.asarray(values, dtype=np.float32)
    if arr.shape[:2] == tuple(shape):
        return arr
    if arr.ndim != 2:
        raise InputError(f"values: expected an (h, w) map, got shape {arr.shape}")
    return cv2.resize(arr, (int(shape[1]), int(shape[0])), interpolation=cv2.INTER_LINEAR)


def thin_upsampled_map(probability, shape) -> np.ndarray:
    """A soft boundary map of the working image brought to ``shape`` (H, W) and thinned there (float64).

    Upsampled ``s`` times, a map is ``s`` times smoother, and the thinning protocol of a native map (the
    normal from its second derivatives after a radius-4 smoothing, a pixel kept where it is within 1 % of
    the map one pixel away along it) keeps broad patches: inside the bilinear cells the second derivatives
    vanish and neighbours one pixel apart differ by far less than 1 %. So the normal is taken at the
    working scale (:func:`~segensemble.evaluation.nms.boundary_normal`) and brought to ``shape`` as the
    doubled angle (``cos 2θ``, ``sin 2θ``, bilinear), the map is compared with the map 1..ceil(s) pixels
    away along it, and the kept pixels are thinned to lines one pixel wide
    (:func:`~segensemble.boundarymaps.thin_boundaries`: two equal neighbours of the working map become a
    plateau ``s`` pixels wide), keeping their values.

    Examples
    --------
    A vertical ridge one pixel wide, brought to four times the size, stays one pixel wide:

    >>> ridge = np.zeros((12, 12)); ridge[:, 5] = 1.0; ridge[:, 4] = ridge[:, 6] = 0.5
    >>> thin = thin_upsampled_map(ridge, (48, 48))
    >>> sorted({int(np.count_nonzero(row)) for row in thin[8:40]})
    [1]
    """
    p = check_soft_map(probability, "probability")
    h, w = int(shape[0]), int(shape[1])
    if h < p.shape[0] or w < p.shape[1]:
        raise InputError(f"shape: expected at least the map's {p.shape}, got {(h, w)}")
    normal = 2.0 * boundary_normal(p)
    cos2, sin2 = upsample_map(np.cos(normal), (h, w)), upsample_map(np.sin(normal), (h, w))
    full_normal = np.arctan2(sin2, cos2, out=sin2)  # float32 (the thinning reads it as float64)
    del cos2
    full_normal *= 0.5
    full_normal[full_normal < 0] += np.float32(np.pi)
    radius = max(1, math.ceil(max(h / p.shape[0], w / p.shape[1])))
    kept = non_maximum_suppression(upsample_map(p, (h, w)), full_normal, radius=radius)
    del full_normal
    kept[~thin_boundaries(kept > 0)] = 0.0
    return kept
