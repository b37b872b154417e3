"""Images: sizes from file headers, bounded decoding, reading and writing.

Every reader raises :class:`~segensemble.errors.FileFormatError` naming the
file when it is missing, corrupt or of an unsupported kind, and checks the
size the file declares before decoding it; every writer is atomic.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from segensemble.atomic import atomic_write_bytes
from segensemble.errors import FileFormatError, InputError
from segensemble.validation import check_image

__all__ = ["IMAGE_SUFFIXES", "MAX_PIXELS", "check_pixel_limit", "image_shape", "decode_image", "read_image",
           "write_image"]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".bmp", ".ppm", ".pgm")
#: Largest image, label map or ground truth (pixels) read as is: segmenting takes about 1 GB of memory
#: per megapixel with the default segmenters (measured: 3 MP 3.2 GB, 12 MP 12.7 GB), so 3 MP stays
#: within 4 GB. Every reader checks the size a file *declares* before decoding it.
MAX_PIXELS = 3_000_000


def _existing(path) -> Path:
    path = Path(path)
    if not path.exists():
        raise FileFormatError(f"{path}: file not found")
    if not path.is_file():
        raise FileFormatError(f"{path}: not a regular file")
    return path


def check_pixel_limit(shape, max_pixels, name: str) -> None:
    """Refuse an image or label map of ``shape`` (H, W) above ``max_pixels`` (None: no limit).

    Raises
    ------
    InputError
        Naming ``name``, the size and the options that lift the limit.

    Examples
    --------
    >>> check_pixel_limit((2000, 3000), 1_000_000, "big.png")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: big.png: 3000x2000 = 6,000,000 pixels is above the limit of 1,000,000 ...
    """
    if max_pixels is None:
        return
    h, w = int(shape[0]), int(shape[1])
    if h * w > max_pixels:
        raise InputError(
            f"{name}: {w}x{h} = {h * w:,} pixels is above the limit of {max_pixels:,} "
            f"(about 1 GB of memory per megapixel); downscale it, or use --downscale / --max-pixels"
        )


def image_shape(path) -> tuple[int, int]:
    """(height, width) declared by an image file's header; nothing is decoded.

    Raises
    ------
    FileFormatError
        Missing or empty file, or no readable image header.

    Examples
    --------
    >>> import tempfile, os
    >>> p = write_image(os.path.join(tempfile.mkdtemp(), "a.png"), np.zeros((4, 5, 3)))
    >>> image_shape(p)
    (4, 5)
    """
    from segensemble.io._imageheader import declared_shape

    path = _existing(path)
    if path.stat().st_size == 0:
        raise FileFormatError(f"{path}: the file is empty")
    shape = declared_shape(path)
    if shape is None or min(shape) < 1:
        raise FileFormatError(f"{path}: not a readable image (corrupt or unsupported format)")
    return shape


_REDUCED = {1: cv2.IMREAD_UNCHANGED, 2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
            8: cv2.IMREAD_REDUCED_COLOR_8}


def _quiet_imdecode(data: np.ndarray, flags: int):
    """``cv2.imdecode`` without OpenCV's log lines on stderr (a corrupt file is reported once, by us)."""
    from cv2.utils import logging as cvlog

    level = cvlog.getLogLevel()
    cvlog.setLogLevel(cvlog.LOG_LEVEL_SILENT)
    try:
        return cv2.imdecode(data, flags)
    except cv2.error:
        return None
    finally:
        cvlog.setLogLevel(level)


def decode_image(path, *, max_pixels=None, reduce: int = 1) -> np.ndarray:
    """Decode an image file as stored (uint8/uint16, gray, RGB or RGBA); the size its header declares is checked first.

    ``reduce`` (2, 4 or 8) decodes at that fraction of the size, as 8-bit
    colour (JPEG decodes directly at the reduced size).

    Examples
    --------
    >>> import tempfile, os
    >>> p = write_image(os.path.join(tempfile.mkdtemp(), "a.png"), np.ones((4, 6, 3)))
    >>> decode_image(p).dtype, decode_image(p).shape
    (dtype('uint8'), (4, 6, 3))
    """
    path = _existing(path)
    shape = image_shape(path)
    check_pixel_limit((shape[0] // reduce, shape[1] // reduce), max_pixels, str(path))
    data = np.fromfile(path, dtype=np.uint8)
    img = _quiet_imdecode(data, _REDUCED[reduce])
    if img is None or img.size == 0:
        raise FileFormatError(f"{path}: not a readable image (corrupt or unsupported format)")
    if img.ndim == 3 and img.shape[2] == 3:
        img = img[:, :, ::-1]
    elif img.ndim == 3 and img.shape[2] == 4:
        img = img[:, :, [2, 1, 0, 3]]
    return np.ascontiguousarray(img)


def read_image(path, *, max_pixels=None) -> np.ndarray:
    """Read an image file as float64 RGB in [0, 1], shape (H, W, 3).

    8- and 16-bit, gray, RGB and RGBA files are accepted (alpha is dropped).

    Parameters
    ----------
    path : path
    max_pixels : int, optional
        Refuse a file whose header declares more pixels, before decoding it
        (a decompression bomb never allocates). None: no limit.

    Raises
    ------
    FileFormatError
        Missing, empty, corrupt or unsupported file.
    InputError
        Above ``max_pixels``.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.png")
    >>> _ = write_image(p, np.zeros((4, 5, 3)))
    >>> read_image(p).shape
    (4, 5, 3)
    """
    path = _existing(path)
    raw = decode_image(path, max_pixels=max_pixels)
    try:
        return check_image(raw)
    except InputError as exc:
        raise FileFormatError(f"{path}: {exc}") from exc


def write_image(path, image) -> Path:
    """Write an image (any form accepted by segensemble) as 8-bit RGB, atomically.

    Examples
    --------
    >>> import tempfile, os
    >>> p = write_image(os.path.join(tempfile.mkdtemp(), "x.png"), np.ones((2, 2)))
    >>> read_image(p)[0, 0].tolist()
    [1.0, 1.0, 1.0]
    """
    path = Path(path)
    rgb = np.round(check_image(image) * 255).astype(np.uint8)
    ok, buf = cv2.imencode(path.suffix or ".png", rgb[:, :, ::-1])
    if not ok:
        raise InputError(f"path: cannot encode an image as {path.suffix!r} ({path})")
    return atomic_write_bytes(path, buf.tobytes())
