"""The image a recipe processes: size limits checked from the file header, the working scale, the way back.

An image above ``max_pixels`` (a decompression-bomb guard, :data:`MAX_PIXELS`)
is refused before anything is decoded, or with ``downscale`` decoded at
reduced size; an image above a recipe's working scale is processed
area-averaged to it (:mod:`segensemble.pipeline.workscale`) and its results
are brought back to the input's size (:func:`results_to_input_size`).
"""

from __future__ import annotations

import numpy as np

from segensemble.validation import check_image
from segensemble.io import DECODE_LIMIT, MAX_PIXELS, check_image_file, check_pixel_limit, decode_image, read_image
from segensemble.pipeline.workscale import upsample_labels, upsample_map, working_image, working_shape

__all__ = ["MAX_PIXELS", "DECODE_LIMIT", "limit_image_size", "check_image_file", "load_image", "upscale_labels",
           "target_shape", "prepare_image", "to_input_size", "results_to_input_size", "read_unoriented"]


def limit_image_size(image, max_pixels: int = MAX_PIXELS, *, downscale: bool = False, name: str = "image"):
    """Refuse an image above ``max_pixels``, or downscale it to fit.

    Returns
    -------
    image : array
        The image, downscaled (area averaging) when needed and allowed.
    shape : (H, W) or None
        The original shape when it was downscaled (upscale results to it with
        nearest neighbours), else None.

    Examples
    --------
    >>> small, orig = limit_image_size(np.zeros((100, 200, 3)), 5000, downscale=True)
    >>> small.shape[:2], orig
    ((50, 100), (100, 200))
    """
    import cv2

    img = check_image(image)
    h, w = img.shape[:2]
    if max_pixels is None or h * w <= max_pixels:
        return img, None
    if not downscale:
        check_pixel_limit((h, w), max_pixels, name)
    return cv2.resize(img, _target_size(h, w, max_pixels), interpolation=cv2.INTER_AREA), (h, w)


def target_shape(h: int, w: int, max_pixels) -> tuple[int, int]:
    """(H, W) an image of (h, w) is read at: its own size, or downscaled to ``max_pixels`` (aspect kept).

    Examples
    --------
    >>> target_shape(100, 200, 5000), target_shape(10, 20, None)
    ((50, 100), (10, 20))
    """
    if max_pixels is None or h * w <= max_pixels:
        return h, w
    tw, th = _target_size(h, w, max_pixels)
    return th, tw


def _target_size(h: int, w: int, max_pixels: int) -> tuple[int, int]:
    """(width, height) of the downscaled copy: the aspect ratio kept, at most ``max_pixels``."""
    f = (max_pixels / (h * w)) ** 0.5
    return max(1, int(w * f)), max(1, int(h * f))


def load_image(path, max_pixels: int = MAX_PIXELS, *, downscale: bool = False):
    """Read an image file within a pixel limit, checking the size its header declares before decoding.

    A file above ``max_pixels`` is refused before anything is decoded (a
    decompression bomb never allocates), or with ``downscale`` decoded at
    reduced size (JPEG: directly at 1/2, 1/4 or 1/8 by the decoder; other
    formats: 8-bit at full size, up to :data:`DECODE_LIMIT` pixels) and
    area-averaged down to the limit.

    Returns
    -------
    image : (h, w, 3) float64 array
    shape : (H, W) or None
        The original shape when it was downscaled (upscale results to it
        with :func:`upscale_labels`), else None.

    Raises
    ------
    InputError
        Above the limit without ``downscale``, or too large to decode.

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.io import write_image
    >>> p = write_image(os.path.join(tempfile.mkdtemp(), "a.png"), np.zeros((100, 200, 3)))
    >>> img, orig = load_image(p, 5000, downscale=True)
    >>> img.shape, orig
    ((50, 100, 3), (100, 200))
    """
    return _load_checked(path, check_image_file(path, max_pixels, downscale=downscale), max_pixels)


def _load_checked(path, checked, max_pixels):
    """:func:`load_image` of a file whose header :func:`check_image_file` has read: ``checked`` is what it gave."""
    import cv2

    (h, w), reduce = checked
    if max_pixels is None or h * w <= max_pixels:
        return read_image(path), None  # the header is checked: decoded once, not read again
    raw = decode_image(path, reduce=reduce)
    small = cv2.resize(raw, _target_size(h, w, max_pixels), interpolation=cv2.INTER_AREA)
    return check_image(small), (h, w)


def read_unoriented(path, max_pixels=MAX_PIXELS, downscale: bool = False) -> np.ndarray:
    """An image file's pixel grid as stored, EXIF orientation not applied (``--ignore-orientation``); header-checked.

    Examples
    --------
    >>> import tempfile, os
    >>> from PIL import Image
    >>> exif = Image.Exif(); exif[0x0112] = 6
    >>> p = os.path.join(tempfile.mkdtemp(), "sideways.png")
    >>> Image.new("RGB", (6, 4)).save(p, exif=exif.tobytes())
    >>> read_unoriented(p).shape
    (4, 6, 3)
    """
    _, reduce = check_image_file(path, max_pixels, downscale=downscale)
    return decode_image(path, reduce=reduce, orient=False)


def upscale_labels(labels, shape) -> np.ndarray:
    """Nearest-neighbour upscaling of a label map to ``shape`` (H, W).

    Examples
    --------
    >>> upscale_labels(np.array([[0, 1]]), (2, 4)).tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1]]
    """
    import cv2

    return cv2.resize(np.asarray(labels, dtype=np.int32), (shape[1], shape[0]),
                      interpolation=cv2.INTER_NEAREST).astype(np.int32)


def prepare_image(image, max_pixels, downscale, working_pixels=None):
    """The image to process: (processed image or None, the input's shape if processed smaller, the image as stored).

    A path is header-checked first (``max_pixels``, EXIF orientation
    applied). An image above ``working_pixels`` is processed area-averaged to
    that many pixels; the third item, the full-resolution image as decoded or
    given, is then what its labels are refined against (:func:`to_input_size`).
    Otherwise the third item is None and a downscaled image's results are
    upscaled by nearest neighbours.

    Examples
    --------
    >>> img, original, raw = prepare_image(np.zeros((400, 600), np.uint8), MAX_PIXELS, False, 60_000)
    >>> img.shape, original, raw.shape
    ((200, 300, 3), (400, 600), (400, 600))
    """
    from pathlib import Path

    if image is None:
        return None, None, None
    if isinstance(image, (str, Path)):
        (h, w), reduce = check_image_file(image, max_pixels, downscale=downscale)
        target = target_shape(h, w, max_pixels)
        small = working_shape(target, working_pixels)
        if small is None:  # at its own size, or --downscale above max_pixels without a working scale: as always
            return (*_load_checked(image, ((h, w), reduce), max_pixels), None)
        raw = decode_image(image, reduce=reduce)  # check_image_file bounded what is decoded
        return working_image(raw, small), (h, w), raw
    arr = np.asarray(image)
    if arr.ndim < 2:
        check_image(arr)  # the one message for a malformed image
    h, w = arr.shape[:2]
    if max_pixels is not None and h * w > max_pixels and not downscale:
        check_pixel_limit((h, w), max_pixels, "image")
    small = working_shape(target_shape(h, w, max_pixels), working_pixels)
    if small is None:
        return (*limit_image_size(image, max_pixels, downscale=downscale), None)
    return working_image(arr, small), (h, w), arr


def to_input_size(labels, small, raw, original, *, n_jobs: int = 1, gain: float = 1.0):
    """Labels of the processed image at the input's size: refined against ``raw`` when there is one (in ``n_jobs``
    threads, :func:`~segensemble.pipeline.workscale.upsample_labels`; ``raw``'s colours times ``gain``, the
    exposure gain ``small`` was brightened by).

    A region a pixel or two wide at the working scale can lose every full-resolution pixel to its neighbours
    in the refinement: the k labels that remain are then renumbered 0..k-1 in their order, so that a label map's
    largest label + 1 is its number of regions.

    Examples
    --------
    >>> to_input_size(np.array([[0, 1]]), None, None, (2, 4)).tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1]]
    """
    if raw is None:
        return upscale_labels(labels, original)
    full = upsample_labels(labels, small, raw, n_jobs=n_jobs, gain=gain)
    return _without_gaps(full if full.shape == tuple(original) else upscale_labels(full, original))


def _without_gaps(labels: np.ndarray) -> np.ndarray:
    """Non-negative labels renumbered 0..k-1 in their order when some value below the largest is absent."""
    kept = np.bincount(labels.ravel()) > 0
    if kept.all():
        return labels
    return (np.cumsum(kept) - 1).astype(labels.dtype)[labels]


def results_to_input_size(labels, levels, confidence, small, raw, original, *, n_jobs: int = 1, gain: float = 1.0):
    """(labels, levels, confidence) of a processed image at the input's size ``original`` (as they are when None).

    Labels and levels go through :func:`to_input_size` (``n_jobs`` threads, ``gain``); a confidence map is
    resized bilinearly (float32 at a working scale, as computed otherwise).

    Examples
    --------
    >>> lab, lev, conf = results_to_input_size(np.array([[0, 1]]), None, np.array([[0.0, 1.0]]), None, None, (1, 4))
    >>> lab.tolist(), lev, conf.round(2).tolist()
    ([[0, 0, 1, 1]], None, [[0.0, 0.25, 0.75, 1.0]])
    """
    import cv2

    if original is None:
        return labels, levels, confidence
    levels = None if levels is None else [to_input_size(lab, small, raw, original, n_jobs=n_jobs, gain=gain)
                                          for lab in levels]
    if confidence is not None:
        confidence = upsample_map(confidence, original) if raw is not None else cv2.resize(
            confidence, (original[1], original[0]), interpolation=cv2.INTER_LINEAR)
    return to_input_size(labels, small, raw, original, n_jobs=n_jobs, gain=gain), levels, confidence
