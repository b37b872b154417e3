"""BSDS ``.mat`` files: ground truth, ``segs`` cells, ``ucm2``; declared sizes checked before loading."""

from __future__ import annotations

import io as _io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segensemble.atomic import atomic_write_bytes
from segensemble.boundarymaps import ground_truth_boundaries
from segensemble.errors import FileFormatError, InputError
from segensemble.io.images import MAX_PIXELS, _existing, check_pixel_limit
from segensemble.validation import check_label_map
from segensemble.io._matscan import MatSizeError, scan_mat

__all__ = ["GroundTruth", "MAT_ARRAY_FACTOR", "MAT_TOTAL_FACTOR", "check_mat_limit", "mat_variable_names",
           "read_mat_segmentations", "read_ucm2", "read_ground_truth", "write_segmentations", "mat_bytes"]


@dataclass
class GroundTruth:
    """Human annotations of one image (BSDS ground truth).

    Attributes
    ----------
    segmentations : list of (H, W) int32 arrays
        One region labelling per annotator (BSDS numbers regions from 1);
        empty for edge-only ground truth (:func:`segensemble.io.read_edge_ground_truth`).
    boundaries : list of (H, W) bool arrays
        One boundary map per annotator.
    """

    segmentations: list
    boundaries: list

    def __len__(self) -> int:
        return len(self.boundaries)

    @property
    def shape(self) -> tuple[int, int]:
        """(H, W) of the annotated image."""
        return tuple((self.segmentations or self.boundaries)[0].shape)


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
    _checked(path, max_pixels)


def _checked(path, max_pixels, *, keep: bool = False):
    """:func:`check_mat_limit`; with ``keep`` also the file's bytes, uncompressed (None: read the file itself)."""
    if max_pixels is None:
        return None
    try:
        return scan_mat(path, MAT_ARRAY_FACTOR * max_pixels, MAT_TOTAL_FACTOR * max_pixels, keep=keep)
    except MatSizeError as exc:
        n, limit, what = exc.args
        if what.startswith("bytes of data"):
            raise FileFormatError(f"{path}: {n:,} {what}, which holds at most {limit:,}: a damaged or hostile file")
        raise InputError(
            f"{path}: {what} declares {n:,} elements, above the limit of {limit:,} for --max-pixels "
            f"{max_pixels:,}; raise --max-pixels if the file is genuine"
        ) from exc


def _scipy_io():
    """:mod:`scipy.io`, imported on the first ``.mat`` file (0.1 s that fusing a photo does not need to pay)."""
    import scipy.io

    return scipy.io


def _load_mat(path: Path, max_pixels=MAX_PIXELS) -> dict:
    """``scipy.io.loadmat``, after the sizes the file declares were checked against ``max_pixels``.

    The check reads (and decompresses) the file once and hands the reader the
    uncompressed bytes, so nothing is decompressed twice.
    """
    data = _checked(path, max_pixels, keep=True)
    try:
        return _scipy_io().loadmat(str(path) if data is None else _io.BytesIO(data))
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
        return {name for name, _, _ in _scipy_io().whosmat(str(path))}
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
        return check_label_map(arr, what).astype(np.int32, order="C")  # MATLAB stores columns first: rows here
    except InputError as exc:
        raise FileFormatError(f"{path}: {exc}") from exc


def read_mat_segmentations(path, *, max_pixels=MAX_PIXELS) -> list:
    """The ``segs`` cell of a BSDS ``.mat`` file, as a list of (H, W) int32 label maps.

    (:func:`segensemble.io.read_segmentations` reads any label file.)

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "s.mat")
    >>> _ = write_segmentations(p, [np.zeros((2, 2), int), np.eye(2, dtype=int)])
    >>> [s.max() for s in read_mat_segmentations(p)]
    [np.int32(1), np.int32(2)]
    """
    path = _existing(path)
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
    A file in the BSDS layout: one struct per annotator with its
    ``Segmentation`` (labels from 1, kept as stored) and ``Boundaries``.

    >>> import os, tempfile
    >>> seg = np.array([[1, 1, 2, 2]] * 3, dtype=np.uint16)
    >>> cell = np.empty((1, 2), dtype=object)
    >>> cell[0, 0] = {"Segmentation": seg, "Boundaries": (np.diff(seg, axis=1, append=2) != 0).astype(np.uint8)}
    >>> cell[0, 1] = {"Segmentation": np.ones_like(seg), "Boundaries": np.zeros(seg.shape, np.uint8)}
    >>> path = os.path.join(tempfile.mkdtemp(), "1.mat")
    >>> _ = open(path, "wb").write(mat_bytes({"groundTruth": cell}))
    >>> gt = read_ground_truth(path)
    >>> len(gt.segmentations), gt.segmentations[0].tolist()[0], int(gt.boundaries[0].sum())
    (2, [1, 1, 2, 2], 3)
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
            bd = np.asarray(cell["Boundaries"][0, 0]).astype(bool, order="C")
        except Exception:  # no Boundaries field: derive them as BSDS did
            bd = ground_truth_boundaries(segs[-1])
        bdrys.append(bd)
        if segs[-1].shape != segs[0].shape:
            raise FileFormatError(f"{path}: annotation {i + 1} has shape {segs[-1].shape}, annotation 1 has {segs[0].shape}")
        if bd.shape != segs[-1].shape:
            raise FileFormatError(f"{path}: annotation {i + 1}: Boundaries has shape {bd.shape}, its Segmentation "
                                  f"{segs[-1].shape}")
    check_pixel_limit(segs[0].shape, max_pixels, str(path))
    return GroundTruth(segs, bdrys)


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
    >>> len(read_mat_segmentations(p))
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


def write_ucm2(path, ucm2) -> Path:
    """Write a BSDS ``.mat`` with ``ucm2``: an ultrametric contour map on the double-size grid, (2H+1, 2W+1).

    The input format of the Berkeley benchmark for a hierarchy of regions
    (``segensemble score --kind ucm2``); the text header is fixed, so the
    same map always gives the same bytes.

    Examples
    --------
    >>> import tempfile, os
    >>> u = np.zeros((5, 7)); u[1:4, 4] = 0.5
    >>> p = write_ucm2(os.path.join(tempfile.mkdtemp(), "u.mat"), u)
    >>> float(read_ucm2(p)[2, 4])
    0.5
    """
    u = np.asarray(ucm2, dtype=np.float64)
    if u.ndim != 2 or u.shape[0] % 2 == 0 or u.shape[1] % 2 == 0 or min(u.shape) < 3 or not np.isfinite(u).all():
        raise InputError(f"ucm2: expected a finite (2H+1, 2W+1) map with odd sides, got shape {u.shape}")
    return atomic_write_bytes(Path(path), mat_bytes({"ucm2": u}))


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
    _scipy_io().savemat(buf, variables, do_compression=True)
    text = b"MATLAB 5.0 MAT-file, written by segensemble"
    return text.ljust(116, b" ") + buf.getvalue()[116:]
