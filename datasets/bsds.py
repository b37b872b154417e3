"""Readers for the Berkeley Segmentation Datasets (BSDS500 layout, BSDS300 ``.seg``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from segensemble.errors import FileFormatError, InputError
from segensemble.io import IMAGE_SUFFIXES, GroundTruth, read_ground_truth, read_image

__all__ = ["BSDS500", "find_bsds_root", "read_bsds300_seg", "ENV_VAR"]

#: Environment variable naming a BSDS500 copy when no path is given.
ENV_VAR = "SEGENSEMBLE_BSDS_ROOT"


def find_bsds_root(root=None) -> Path:
    """Locate the ``data`` folder of a BSDS500-layout dataset.

    ``root`` may point at ``BSDS500/data``, ``BSDS500``, or a folder holding
    ``BSDS500``; when None, the ``SEGENSEMBLE_BSDS_ROOT`` environment variable
    is used.

    Raises
    ------
    InputError
        No root given and no environment variable set, or no
        ``images/`` + ``groundTruth/`` folders found there.

    Examples
    --------
    >>> import tempfile
    >>> from segensemble.datasets import make_synthetic_dataset
    >>> root = make_synthetic_dataset(tempfile.mkdtemp(), n_images=1, shape=(20, 20))
    >>> find_bsds_root(root).name
    'data'
    """
    if root is None:
        root = os.environ.get(ENV_VAR)
        if not root:
            raise InputError(f"bsds: no dataset root given and {ENV_VAR} is not set")
    base = Path(root).expanduser()
    for cand in (base, base / "data", base / "BSDS500" / "data"):
        if (cand / "images").is_dir() and (cand / "groundTruth").is_dir():
            return cand
    raise InputError(
        f"bsds: {base} is not a BSDS500-layout dataset (expected data/images/<split> and data/groundTruth/<split>)"
    )


class BSDS500:
    """A dataset in the BSDS500 layout: ``data/{images,groundTruth}/{split}/<id>.*``.

    Parameters
    ----------
    root : path, optional
        See :func:`find_bsds_root`; defaults to ``$SEGENSEMBLE_BSDS_ROOT``.

    Examples
    --------
    >>> import tempfile
    >>> from segensemble.datasets import make_synthetic_dataset
    >>> ds = BSDS500(make_synthetic_dataset(tempfile.mkdtemp(), n_images=1, shape=(30, 40)))
    >>> img = ds.image("test", ds.ids("test")[0]); gt = ds.ground_truth("test", ds.ids("test")[0])
    >>> img.shape, len(gt) >= 3
    ((30, 40, 3), True)
    """

    def __init__(self, root=None):
        self.data = find_bsds_root(root)

    @property
    def splits(self) -> list[str]:
        """Splits present (folders of ``groundTruth/``)."""
        return sorted(p.name for p in (self.data / "groundTruth").iterdir() if p.is_dir())

    def _split_dir(self, kind: str, split: str) -> Path:
        d = self.data / kind / split
        if not d.is_dir():
            raise InputError(f"split: {split!r} not found in {self.data / kind}; available: {self.splits}")
        return d

    def ids(self, split: str = "test") -> list[str]:
        """Image ids of a split that have both an image and a ground truth, sorted."""
        gts = {p.stem for p in self._split_dir("groundTruth", split).glob("*.mat")}
        imgs = {
            p.stem for p in self._split_dir("images", split).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES
        }
        return sorted(gts & imgs, key=lambda s: (len(s), s))

    def image_path(self, split: str, image_id: str) -> Path:
        """Path of an image file."""
        d = self._split_dir("images", split)
        for suffix in IMAGE_SUFFIXES:
            p = d / f"{image_id}{suffix}"
            if p.is_file():
                return p
        raise FileFormatError(f"{d / image_id}.*: no image file for id {image_id!r}")

    def ground_truth_path(self, split: str, image_id: str) -> Path:
        """Path of a ground-truth ``.mat`` file."""
        return self._split_dir("groundTruth", split) / f"{image_id}.mat"

    def image(self, split: str, image_id: str) -> np.ndarray:
        """The image as float64 RGB in [0, 1]."""
        return read_image(self.image_path(split, image_id))

    def ground_truth(self, split: str, image_id: str) -> GroundTruth:
        """The human annotations."""
        return read_ground_truth(self.ground_truth_path(split, image_id))


def read_bsds300_seg(path) -> np.ndarray:
    """Read a BSDS300 ``.seg`` file as an (H, W) int32 label map (labels from 0).

    The format is a text header ending with ``data`` and run-length lines
    ``segment row col_start col_end`` (0-based, inclusive).

    Raises
    ------
    FileFormatError
        Missing file, missing ``width``/``height``/``data``, or runs outside
        the image.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.seg")
    >>> _ = open(p, "w").write("format ascii cr\\nwidth 3\\nheight 1\\nsegments 2\\ndata\\n0 0 0 1\\n1 0 2 2\\n")
    >>> read_bsds300_seg(p).tolist()
    [[0, 0, 1]]
    """
    path = Path(path)
    if not path.is_file():
        raise FileFormatError(f"{path}: file not found")
    try:
        lines = path.read_text(encoding="ascii", errors="strict").splitlines()
    except (UnicodeDecodeError, OSError) as exc:
        raise FileFormatError(f"{path}: not a BSDS300 .seg text file ({exc})") from exc
    header: dict = {}
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "data") + 1
    except StopIteration:
        raise FileFormatError(f"{path}: no 'data' line (not a BSDS300 .seg file)") from None
    for line in lines[: start - 1]:
        parts = line.split()
        if len(parts) >= 2:
            header[parts[0]] = parts[1]
    try:
        width, height = int(header["width"]), int(header["height"])
    except (KeyError, ValueError):
        raise FileFormatError(f"{path}: header lacks a valid 'width'/'height'") from None
    if width <= 0 or height <= 0:
        raise FileFormatError(f"{path}: invalid size {width}x{height}")
    seg = np.full((height, width), -1, dtype=np.int64)
    for k, line in enumerate(lines[start:], start=start + 1):
        if not line.strip():
            continue
        try:
            s, r, c1, c2 = (int(x) for x in line.split())
        except ValueError:
            raise FileFormatError(f"{path}:{k}: expected 'segment row col_start col_end', got {line!r}") from None
        if not (0 <= r < height and 0 <= c1 <= c2 < width and s >= 0):
            raise FileFormatError(f"{path}:{k}: run outside the {width}x{height} image")
        seg[r, c1 : c2 + 1] = s
    if np.any(seg < 0):
        raise FileFormatError(f"{path}: the runs do not cover every pixel")
    return seg.astype(np.int32)
