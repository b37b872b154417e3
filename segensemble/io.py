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
    "read_image",
    "read_labels",
    "read_segmentations",
    "read_ucm2",
    "read_ground_truth",
    "write_array",
    "write_labels",
    "write_segmentations",
    "write_image",
    "IMAGE_SUFFIXES",
    "LABEL_SUFFIXES",
]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".bmp", ".ppm", ".pgm")
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


def _decode(path: Path) -> np.ndarray:
    data = np.fromfile(path, dtype=np.uint8)
    if data.size == 0:
        raise FileFormatError(f"{path}: the file is empty")
    img = cv2.imdecode(data, cv2.IMREAD_UNCHANGED)
    if img is None or img.size == 0:
        raise FileFormatError(f"{path}: not a readable image (corrupt or unsupported format)")
    if img.ndim == 3 and img.shape[2] == 3:
        img = img[:, :, ::-1]
    elif img.ndim == 3 and img.shape[2] == 4:
        img = img[:, :, [2, 1, 0, 3]]
    return np.ascontiguousarray(img)


def read_image(path) -> np.ndarray:
    """Read an image file as float64 RGB in [0, 1], shape (H, W, 3).

    8- and 16-bit, gray, RGB and RGBA files are accepted (alpha is dropped).

    Raises
    ------
    FileFormatError
        Missing, empty, corrupt or unsupported file.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.png")
    >>> _ = write_image(p, np.zeros((4, 5, 3)))
    >>> read_image(p).shape
    (4, 5, 3)
    """
    path = _existing(path)
    try:
        return check_image(_decode(path))
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


def _load_mat(path: Path) -> dict:
    try:
        return scipy.io.loadmat(str(path))
    except NotImplementedError as exc:  # MATLAB v7.3 (HDF5)
        raise FileFormatError(f"{path}: MATLAB v7.3 files are not supported; save with -v7") from exc
    except Exception as exc:  # scipy raises many types on corrupt input
        raise FileFormatError(f"{path}: not a readable MATLAB .mat file ({type(exc).__name__}: {exc})") from exc


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


def read_segmentations(path) -> list:
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
        return [read_labels(path)]
    data = _load_mat(path)
    if "segs" not in data:
        found = sorted(k for k in data if not k.startswith("__"))
        raise FileFormatError(f"{path}: expected a variable 'segs' (cell of segmentations), found {found}")
    segs = _cell_arrays(data["segs"], path, "segs")
    if not segs:
        raise FileFormatError(f"{path}: 'segs' is empty")
    out = [_as_labels(s, path, f"segs[{i}]") for i, s in enumerate(segs)]
    for i, s in enumerate(out):
        if s.shape != out[0].shape:
            raise FileFormatError(f"{path}: segs[{i}] has shape {s.shape}, segs[0] has {out[0].shape}")
    return out


def read_labels(path) -> np.ndarray:
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
        try:
            arr = np.load(path, allow_pickle=False)
        except ValueError as exc:
            raise FileFormatError(f"{path}: refused: the .npy file holds Python objects (pickle)") from exc
        except Exception as exc:
            raise FileFormatError(f"{path}: not a readable .npy file ({type(exc).__name__}: {exc})") from exc
        if arr.ndim == 3 and arr.shape[2] == 1:
            arr = arr[:, :, 0]
        return _as_labels(arr, path, "labels")
    if suffix == ".mat":
        return read_segmentations(path)[0]
    if suffix not in LABEL_SUFFIXES:
        raise FileFormatError(f"{path}: unsupported label file type {suffix!r}; expected one of {LABEL_SUFFIXES}")
    img = _decode(path)
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


def read_ucm2(path) -> np.ndarray:
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
    data = _load_mat(path)
    if "ucm2" not in data:
        found = sorted(k for k in data if not k.startswith("__"))
        raise FileFormatError(f"{path}: expected a variable 'ucm2', found {found}")
    ucm = np.asarray(data["ucm2"], dtype=np.float64)
    if ucm.ndim != 2 or ucm.size == 0 or not np.all(np.isfinite(ucm)):
        raise FileFormatError(f"{path}: 'ucm2' must be a finite 2-D array, got shape {ucm.shape}")
    return ucm


def read_ground_truth(path) -> GroundTruth:
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
    data = _load_mat(path)
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
        if segs[-1].shape != segs[0].shape or bd.shape != segs[0].shape:
            raise FileFormatError(f"{path}: annotation {i + 1} has shape {segs[-1].shape}, annotation 1 has {segs[0].shape}")
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
    buf = _io.BytesIO()
    scipy.io.savemat(buf, {"segs": cell}, do_compression=True)
    return atomic_write_bytes(path, _fixed_mat_header(buf.getvalue()))


def _fixed_mat_header(data: bytes) -> bytes:
    """Replace the MAT-file text header (it carries the creation time) by a fixed one: same input, same bytes."""
    text = b"MATLAB 5.0 MAT-file, written by segensemble"
    return text.ljust(116, b" ") + data[116:]
