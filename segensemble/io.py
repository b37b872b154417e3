"""Reading and writing images, label maps and BSDS ``.mat`` files.

Every reader raises :class:`~segensemble.errors.FileFormatError` naming the file
when it is missing, corrupt or of an unsupported kind; every writer is atomic.
Label maps are never unpickled (``np.load(..., allow_pickle=False)``).
"""

from __future__ import annotations

import io as _io
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import scipy.io

from segensemble._atomic import atomic_write_bytes
from segensemble._validation import check_image, check_label_map
from segensemble.errors import FileFormatError, InputError
from segensemble.segmentation import canonical_codes

__all__ = [
    "GroundTruth",
    "MAX_PIXELS",
    "image_shape",
    "check_pixel_limit",
    "check_mat_limit",
    "check_label_file",
    "read_image",
    "decode_image",
    "mat_variable_names",
    "read_labels",
    "read_segmentations",
    "read_ucm2",
    "read_ground_truth",
    "write_array",
    "write_labels",
    "write_segmentations",
    "mat_bytes",
    "write_image",
    "IMAGE_SUFFIXES",
    "LABEL_SUFFIXES",
]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".bmp", ".ppm", ".pgm")
#: Largest image, label map or ground truth (pixels) read as is: segmenting takes about 1 GB of memory
#: per megapixel with the default segmenters (measured: 3 MP 3.2 GB, 12 MP 12.7 GB), so 3 MP stays
#: within 4 GB. Every reader checks the size a file *declares* before decoding it.
MAX_PIXELS = 3_000_000
LABEL_SUFFIXES = (".png", ".npy", ".mat", ".tif", ".tiff", ".pgm")


@dataclass
class GroundTruth:
    """Human annotations of one image (BSDS ground truth).

    Attributes
    ----------
    segmentations : list of (H, W) int32 arrays
        One region labelling per annotator (BSDS numbers regions from 1).
    boundaries : list of (H, W) bool arrays
        One boundary map per annotator.
    """

    segmentations: list
    boundaries: list

    def __len__(self) -> int:
        return len(self.segmentations)


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


def check_label_file(path, max_pixels=MAX_PIXELS) -> None:
    """Refuse a label file (``.png``/``.tif``/``.npy``/``.mat``) that declares more than ``max_pixels``, reading headers only.

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
    from segensemble._imageheader import declared_shape

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


#: A ``.mat`` array may hold this many times ``max_pixels`` elements (a double-size ``ucm2`` is about 4x the
#: image), and all its arrays together this many times (a 99-level ``segs`` hierarchy, five annotators).
MAT_ARRAY_FACTOR, MAT_TOTAL_FACTOR = 5, 128


def check_mat_limit(path, max_pixels=MAX_PIXELS) -> None:
    """Refuse a ``.mat`` file whose declared arrays are too large for ``max_pixels``, without loading it.

    Every array may hold :data:`MAT_ARRAY_FACTOR` x ``max_pixels`` elements,
    all together :data:`MAT_TOTAL_FACTOR` x ``max_pixels``; the element
    headers are read (compressed ones streamed through a bounded buffer), the
    data never kept. None: no limit.

    Examples
    --------
    >>> import tempfile, os, scipy.io
    >>> p = os.path.join(tempfile.mkdtemp(), "s.mat")
    >>> scipy.io.savemat(p, {"segs": np.zeros((300, 400))}, do_compression=True)
    >>> check_mat_limit(p, 10_000)
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: ...s.mat: segs (300x400) declares 120,000 elements, above the limit of 50,000 ...
    """
    if max_pixels is not None:
        from segensemble._matscan import MatSizeError, scan_mat

        try:
            scan_mat(path, MAT_ARRAY_FACTOR * max_pixels, MAT_TOTAL_FACTOR * max_pixels)
        except MatSizeError as exc:
            n, limit, what = exc.args
            raise InputError(
                f"{path}: {what} declares {n:,} elements, above the limit of {limit:,} for --max-pixels "
                f"{max_pixels:,}; raise --max-pixels if the file is genuine"
            ) from exc


def _load_mat(path: Path, max_pixels=MAX_PIXELS) -> dict:
    """``scipy.io.loadmat``, after the sizes the file declares were checked against ``max_pixels``."""
    check_mat_limit(path, max_pixels)
    try:
        return scipy.io.loadmat(str(path))
    except NotImplementedError as exc:  # MATLAB v7.3 (HDF5)
        raise FileFormatError(f"{path}: MATLAB v7.3 files are not supported; save with -v7") from exc
    except Exception as exc:  # scipy raises many types on corrupt input
        raise FileFormatError(f"{path}: not a readable MATLAB .mat file ({type(exc).__name__}: {exc})") from exc


def mat_variable_names(path, max_pixels=MAX_PIXELS) -> set:
    """Names of the variables in a ``.mat`` file, after its declared sizes were checked; nothing is loaded.

    Examples
    --------
    >>> import tempfile, os, scipy.io
    >>> p = os.path.join(tempfile.mkdtemp(), "u.mat"); scipy.io.savemat(p, {"ucm2": np.zeros((5, 7))})
    >>> mat_variable_names(p)
    {'ucm2'}
    """
    path = _existing(path)
    check_mat_limit(path, max_pixels)
    try:
        return {name for name, _, _ in scipy.io.whosmat(str(path))}
    except Exception:
        _load_mat(path, None)  # raises a FileFormatError naming the file
        raise


def _cell_arrays(value, path: Path, key: str) -> list:
    arr = np.asarray(value)
    if arr.dtype != object:
        return [arr]
    return [np.asarray(x) for x in arr.ravel()]


def _as_labels(arr, path: Path, what: str) -> np.ndarray:
    try:
        return check_label_map(arr, what).astype(np.int32)
    except InputError as exc:
        raise FileFormatError(f"{path}: {exc}") from exc


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
    if path.suffix.lower() != ".mat":
        return [read_labels(path, max_pixels=max_pixels)]
    data = _load_mat(path, max_pixels)
    if "segs" not in data:
        found = sorted(k for k in data if not k.startswith("__"))
        raise FileFormatError(f"{path}: expected a variable 'segs' (cell of segmentations), found {found}")
    segs = _cell_arrays(data["segs"], path, "segs")
    if not segs:
        raise FileFormatError(f"{path}: 'segs' is empty")
    out = [_as_labels(s, path, f"segs[{i}]") for i, s in enumerate(segs)]
    check_pixel_limit(out[0].shape, max_pixels, str(path))
    for i, s in enumerate(out):
        if s.shape != out[0].shape:
            raise FileFormatError(f"{path}: segs[{i}] has shape {s.shape}, segs[0] has {out[0].shape}")
    return out


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
        shape = _npy_header(path)
        if len(shape) >= 2:
            check_pixel_limit(shape[:2], max_pixels, str(path))
        try:
            arr = np.load(path, allow_pickle=False)
        except Exception as exc:
            raise FileFormatError(f"{path}: not a readable .npy file ({type(exc).__name__}: {exc})") from exc
        if arr.ndim == 3 and arr.shape[2] == 1:
            arr = arr[:, :, 0]
        return _as_labels(arr, path, "labels")
    if suffix == ".mat":
        return read_segmentations(path, max_pixels=max_pixels)[0]
    if suffix not in LABEL_SUFFIXES:
        raise FileFormatError(f"{path}: unsupported label file type {suffix!r}; expected one of {LABEL_SUFFIXES}")
    img = decode_image(path, max_pixels=max_pixels)
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


def read_ucm2(path, *, max_pixels=MAX_PIXELS) -> np.ndarray:
    """Read a BSDS ``.mat`` file holding ``ucm2`` (double-size contour map) as float64.

    Examples
    --------
    >>> import tempfile, os, scipy.io
    >>> p = os.path.join(tempfile.mkdtemp(), "u.mat")
    >>> scipy.io.savemat(p, {"ucm2": np.zeros((5, 7))})
    >>> read_ucm2(p).shape
    (5, 7)
    """
    path = _existing(path)
    data = _load_mat(path, max_pixels)
    if "ucm2" not in data:
        found = sorted(k for k in data if not k.startswith("__"))
        raise FileFormatError(f"{path}: expected a variable 'ucm2', found {found}")
    ucm = np.asarray(data["ucm2"], dtype=np.float64)
    if ucm.ndim != 2 or ucm.size == 0 or not np.all(np.isfinite(ucm)):
        raise FileFormatError(f"{path}: 'ucm2' must be a finite 2-D array, got shape {ucm.shape}")
    check_pixel_limit(((ucm.shape[0] - 1) // 2, (ucm.shape[1] - 1) // 2), max_pixels, str(path))
    return ucm


def read_ground_truth(path, *, max_pixels=MAX_PIXELS) -> GroundTruth:
    """Read a BSDS ground-truth ``.mat`` (``groundTruth`` cell of structs).

    Raises
    ------
    FileFormatError
        The file is unreadable, has no ``groundTruth``, holds zero annotations,
        or annotations of different shapes.

    Examples
    --------
    >>> import os
    >>> root = os.environ.get("SEGENSEMBLE_BSDS_ROOT")
    >>> gt = read_ground_truth(f"{root}/data/groundTruth/val/3096.mat") if root else None
    """
    path = _existing(path)
    data = _load_mat(path, max_pixels)
    if "groundTruth" not in data:
        found = sorted(k for k in data if not k.startswith("__"))
        raise FileFormatError(f"{path}: expected a variable 'groundTruth', found {found}")
    cells = np.asarray(data["groundTruth"]).ravel()
    if cells.size == 0:
        raise FileFormatError(f"{path}: the ground truth holds zero annotations")
    segs, bdrys = [], []
    for i, cell in enumerate(cells):
        try:
            seg = np.asarray(cell["Segmentation"][0, 0])
        except Exception as exc:
            raise FileFormatError(f"{path}: groundTruth{{{i + 1}}} has no 'Segmentation' field") from exc
        segs.append(_as_labels(seg, path, f"groundTruth{{{i + 1}}}.Segmentation"))
        try:
            bd = np.asarray(cell["Boundaries"][0, 0]).astype(bool)
        except Exception:  # no Boundaries field: derive them as BSDS did
            from segensemble.evaluation.boundaries import ground_truth_boundaries

            bd = ground_truth_boundaries(segs[-1])
        bdrys.append(bd)
        if segs[-1].shape != segs[0].shape:
            raise FileFormatError(f"{path}: annotation {i + 1} has shape {segs[-1].shape}, annotation 1 has {segs[0].shape}")
        if bd.shape != segs[-1].shape:
            raise FileFormatError(f"{path}: annotation {i + 1}: Boundaries has shape {bd.shape}, its Segmentation "
                                  f"{segs[-1].shape}")
    check_pixel_limit(segs[0].shape, max_pixels, str(path))
    return GroundTruth(segs, bdrys)


def _png_bytes(labels: np.ndarray, path: Path) -> bytes:
    top = int(labels.max())
    if top > 65535:
        raise InputError(f"labels: {top + 1} labels do not fit a 16-bit PNG ({path}); write .npy instead")
    arr = labels.astype(np.uint8 if top <= 255 else np.uint16)
    ok, buf = cv2.imencode(".png", arr)
    if not ok:  # pragma: no cover - OpenCV failure
        raise InputError(f"path: could not encode PNG for {path}")
    return buf.tobytes()


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


def write_segmentations(path, segmentations) -> Path:
    """Write a BSDS ``.mat`` with ``segs``: a cell of label maps numbered from 1.

    This is the input format of the Berkeley benchmark for a hierarchy of
    segmentations (threshold i = segmentation i). The file's text header is
    fixed, so the same segmentations always give the same bytes.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "segs.mat")
    >>> _ = write_segmentations(p, [np.zeros((2, 3), int), np.arange(6).reshape(2, 3)])
    >>> len(read_segmentations(p))
    2
    """
    path = Path(path)
    segs = [check_label_map(s, f"segmentations[{i}]") for i, s in enumerate(segmentations)]
    if not segs:
        raise InputError("segmentations: expected at least one segmentation")
    cell = np.empty((1, len(segs)), dtype=object)
    for i, s in enumerate(segs):
        cell[0, i] = (s + 1).astype(np.uint16 if s.max() < 65535 else np.uint32)
    return atomic_write_bytes(path, mat_bytes({"segs": cell}))


def mat_bytes(variables: dict) -> bytes:
    """A compressed MAT-file (level 5) of ``variables`` with a fixed text header: same input, same bytes.

    ``scipy.io.savemat`` writes the creation time into the header; here it is
    replaced, so identical content always gives identical files (and file
    digests).

    Examples
    --------
    >>> mat_bytes({"a": np.zeros(3)}) == mat_bytes({"a": np.zeros(3)})
    True
    """
    buf = _io.BytesIO()
    scipy.io.savemat(buf, variables, do_compression=True)
    text = b"MATLAB 5.0 MAT-file, written by segensemble"
    return text.ljust(116, b" ") + buf.getvalue()[116:]
