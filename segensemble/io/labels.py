"""Label maps: ``.png``/``.tif``/``.pgm`` (8/16-bit, or one label per colour), ``.npy`` (never unpickled), ``.mat``."""

from __future__ import annotations

import io as _io
from pathlib import Path

import cv2
import numpy as np

from segensemble.atomic import atomic_write_bytes
from segensemble.errors import FileFormatError, InputError
from segensemble.io.images import MAX_PIXELS, _existing, check_pixel_limit, decode_image, image_shape
from segensemble.io.matfiles import _as_labels, check_mat_limit, read_mat_segmentations, write_segmentations
from segensemble.segmentation import canonical_codes
from segensemble.validation import check_label_map, check_real

__all__ = ["LABEL_SUFFIXES", "check_label_file", "read_labels", "read_segmentations", "write_array", "write_labels"]

LABEL_SUFFIXES = (".png", ".npy", ".mat", ".tif", ".tiff", ".pgm")


def check_label_file(path, max_pixels=MAX_PIXELS) -> None:
    """Refuse a label file (``.png``/``.tif``/``.npy``/``.mat``) declaring more than ``max_pixels``; headers only.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "l.npy"); np.save(p, np.zeros((300, 400), np.int32))
    >>> check_label_file(p, 10_000)
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: ...l.npy: 400x300 = 120,000 pixels is above the limit of 10,000 ...
    """
    path = _existing(path)
    suffix = path.suffix.lower()
    if suffix == ".mat":
        check_mat_limit(path, max_pixels)
    elif suffix == ".npy":
        shape = _npy_header(path)
        if len(shape) >= 2:
            check_pixel_limit(shape[:2], max_pixels, str(path))
    else:
        check_pixel_limit(image_shape(path), max_pixels, str(path))


def _npy_header(path: Path) -> tuple:
    """Shape declared by a ``.npy`` header; object (pickled) arrays and unreadable headers are refused."""
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = read(fh)
    except Exception as exc:
        raise FileFormatError(f"{path}: not a readable .npy file ({type(exc).__name__}: {exc})") from exc
    if dtype.hasobject:
        raise FileFormatError(f"{path}: refused: the .npy file holds Python objects (pickle)")
    return shape


def read_labels(path, *, max_pixels=MAX_PIXELS) -> np.ndarray:
    """Read one label map as an (H, W) int32 array.

    ``.png``/``.tif``/``.pgm``: 8- or 16-bit single-channel labels; a colour
    file is read as one label per distinct colour. ``.npy``: an integer array
    (pickled objects are refused). ``.mat``: the first of ``segs``.

    Raises
    ------
    FileFormatError
        Missing, corrupt or unsupported file, or values that are not valid labels
        (NaN, negative, non-integer, beyond int32).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "l.npy")
    >>> np.save(p, np.array([[0, 3], [3, 1]]))
    >>> read_labels(p).tolist()
    [[0, 3], [3, 1]]
    """
    path = _existing(path)
    suffix = path.suffix.lower()
    if suffix == ".npy":
        check_label_file(path, max_pixels)
        try:
            arr = np.load(path, allow_pickle=False)
        except Exception as exc:
            raise FileFormatError(f"{path}: not a readable .npy file ({type(exc).__name__}: {exc})") from exc
        if arr.ndim == 3 and arr.shape[2] == 1:
            arr = arr[:, :, 0]
        return _as_labels(arr, path, "labels")
    if suffix == ".mat":
        return read_mat_segmentations(path, max_pixels=max_pixels)[0]
    if suffix not in LABEL_SUFFIXES:
        raise FileFormatError(f"{path}: unsupported label file type {suffix!r}; expected one of {LABEL_SUFFIXES}")
    img = decode_image(path, max_pixels=max_pixels, depth=False)
    if img.ndim == 3:
        flat = img.reshape(-1, img.shape[2]).astype(np.int64)
        if np.all(flat == flat[:, :1]):
            img = img[:, :, 0]
        else:
            key = np.zeros(len(flat), dtype=np.int64)
            for c in range(flat.shape[1]):
                key = key * 65536 + flat[:, c]
            img = canonical_codes(key)[0].reshape(img.shape[:2])
    return _as_labels(img, path, "labels")


def _png_bytes(labels: np.ndarray, path: Path) -> bytes:
    top = int(labels.max())
    if top > 65535:
        raise InputError(f"labels: {top + 1} labels do not fit a 16-bit PNG ({path}); write .npy instead")
    arr = labels.astype(np.uint8 if top <= 255 else np.uint16)
    ok, buf = cv2.imencode(".png", arr)
    if not ok:  # pragma: no cover - OpenCV failure
        raise InputError(f"path: could not encode PNG for {path}")
    return buf.tobytes()


def read_boundary_map(path, *, max_pixels=MAX_PIXELS) -> np.ndarray:
    """Read a soft boundary map (an edge detector's output) as float64 values in [0, 1].

    ``.npy``: a 2-D float array in [0, 1], booleans (True: 1, a boundary),
    or integers (8-bit scale up to 255, else 16-bit); complex, string and
    structured arrays are refused. Image files (8- or 16-bit PNG, ...): the
    value over 255 or 65535, colour channels averaged. The size the file
    declares is checked against ``max_pixels`` before decoding.

    Raises
    ------
    FileFormatError
        Missing, unreadable, not 2-D, or float values outside [0, 1].

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "edges.npy")
    >>> np.save(p, np.array([[0.0, 0.5], [1.0, 0.25]], np.float32))
    >>> read_boundary_map(p).tolist()
    [[0.0, 0.5], [1.0, 0.25]]
    """
    path = _existing(path)
    if path.suffix.lower() == ".npy":
        check_label_file(path, max_pixels)
        try:
            arr = np.load(path, allow_pickle=False)
        except Exception as exc:
            raise FileFormatError(f"{path}: not a readable .npy file ({type(exc).__name__}: {exc})") from exc
    else:
        arr = decode_image(path, max_pixels=max_pixels, depth=False)
    try:
        check_real(arr, str(path))
    except InputError as exc:
        raise FileFormatError(str(exc)) from exc
    integer = np.issubdtype(arr.dtype, np.integer)
    arr = arr.astype(np.float64)
    if arr.ndim == 3:
        arr = arr[:, :, :3].mean(axis=2)
    if integer:
        arr = arr / (65535.0 if arr.max(initial=0) > 255 else 255.0)
    if arr.ndim != 2:
        raise FileFormatError(f"{path}: expected a 2-D boundary map, got shape {arr.shape}")
    if not np.isfinite(arr).all() or arr.min(initial=0) < 0 or arr.max(initial=0) > 1:
        raise FileFormatError(f"{path}: expected boundary strengths in [0, 1], got values outside")
    return arr


def read_segmentations(path, *, max_pixels=MAX_PIXELS) -> list:
    """Read every segmentation in a file, as a list of (H, W) int32 label maps.

    A ``.mat`` file with ``segs`` (a cell of segmentations, as the BSDS
    benchmark takes) gives all of them; any other label file gives one.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "s.mat")
    >>> _ = write_segmentations(p, [np.zeros((2, 2), int), np.eye(2, dtype=int)])
    >>> [s.max() for s in read_segmentations(p)]
    [np.int32(1), np.int32(2)]
    """
    path = _existing(path)
    if path.suffix.lower() == ".mat":
        return read_mat_segmentations(path, max_pixels=max_pixels)
    return [read_labels(path, max_pixels=max_pixels)]


def write_array(path, array) -> Path:
    """Write a numeric array as ``.npy`` atomically (never pickled).

    Examples
    --------
    >>> import tempfile, os
    >>> p = write_array(os.path.join(tempfile.mkdtemp(), "conf.npy"), np.ones((2, 3), np.float32))
    >>> np.load(p).shape
    (2, 3)
    """
    path = Path(path)
    buf = _io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    return atomic_write_bytes(path, buf.getvalue())


def write_labels(path, labels) -> Path:
    """Write a label map atomically; the format follows the suffix.

    ``.png``: 8-bit when every label is <= 255, 16-bit up to 65535. ``.npy``:
    int32. ``.mat``: a BSDS ``segs`` cell with one segmentation, labels from 1.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "seg.png")
    >>> _ = write_labels(p, np.arange(300).reshape(15, 20))
    >>> int(read_labels(p).max())
    299
    """
    path = Path(path)
    lab = check_label_map(labels, "labels")
    suffix = path.suffix.lower()
    if suffix == ".png":
        data = _png_bytes(lab, path)
    elif suffix == ".npy":
        return write_array(path, lab.astype(np.int32))
    elif suffix == ".mat":
        return write_segmentations(path, [lab])
    else:
        raise InputError(f"path: unsupported label output type {suffix!r} for {path}; use .png, .npy or .mat")
    return atomic_write_bytes(path, data)
