"""Ground truth of the boundary benchmark in the layouts edge-detection datasets use.

Per image ``<id>``, a ground-truth folder holds one of

- ``<id>.mat``: BSDS ground truth (segmentations and boundaries of every
  annotator; :func:`segensemble.io.read_ground_truth`);
- ``<id>.png`` (or ``.bmp``, ``.tif``, ``.tiff``, ``.npy``): one annotator's
  edge map, as BIPED and the NYUDv2 conversions ship it;
- ``<id>/``: a folder of such edge maps, one per annotator (read in name order).

An edge map's pixel is a boundary pixel where its value reaches half the
full scale (128 of 255; 0.5 for a float ``.npy``): binary 0/255 maps are read
exactly, grey values left by resizing fall to the nearer side. Edge-only
ground truth has no regions, so it supports the boundary benchmark only.
"""

from __future__ import annotations

from pathlib import Path

from segensemble.errors import FileFormatError
from segensemble.io.images import MAX_PIXELS
from segensemble.io.labels import read_boundary_map
from segensemble.io.matfiles import GroundTruth, read_ground_truth

__all__ = ["EDGE_SUFFIXES", "edge_map_files", "ground_truth_file", "ground_truth_ids", "read_edge_ground_truth", "read_truth"]

EDGE_SUFFIXES = (".png", ".bmp", ".tif", ".tiff", ".npy")


def _edge_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in EDGE_SUFFIXES)


def edge_map_files(path) -> list[Path]:
    """The files edge-map ground truth ``path`` is read from: the file itself, or a folder's edge maps in name order.

    Raises
    ------
    FileFormatError
        A missing path, or a folder without edge maps.

    Examples
    --------
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> for name in ("b.png", "a.png", "notes.txt"):
    ...     open(os.path.join(folder, name), "w").close()
    >>> [p.name for p in edge_map_files(folder)]
    ['a.png', 'b.png']
    """
    path = Path(path)
    if path.is_dir():
        files = _edge_files(path)
        if not files:
            raise FileFormatError(f"{path}: no edge maps ({', '.join(EDGE_SUFFIXES)}) in this ground-truth folder")
        return files
    if path.is_file():
        return [path]
    raise FileFormatError(f"{path}: file not found")


def read_edge_ground_truth(path, *, max_pixels=MAX_PIXELS) -> GroundTruth:
    """Edge-map ground truth: one edge image, or a folder of them (one per annotator).

    Returns
    -------
    GroundTruth
        ``boundaries`` one bool map per annotator, ``segmentations`` empty.

    Raises
    ------
    FileFormatError
        Unreadable maps, an empty folder, or annotators of different shapes.

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.io import write_image
    >>> folder = tempfile.mkdtemp()
    >>> edge = np.zeros((4, 5), np.uint8); edge[2, :] = 255
    >>> p = write_image(os.path.join(folder, "a.png"), edge)
    >>> gt = read_edge_ground_truth(folder)
    >>> len(gt), gt.shape, int(gt.boundaries[0].sum())
    (1, (4, 5), 5)
    """
    files = edge_map_files(path)
    maps = [read_boundary_map(f, max_pixels=max_pixels) >= 0.5 for f in files]
    for f, m in zip(files, maps):
        if m.shape != maps[0].shape:
            raise FileFormatError(f"{f}: edge map of shape {m.shape}, {files[0].name} has {maps[0].shape}")
    return GroundTruth([], maps)


def ground_truth_file(gt_dir, image_id: str) -> Path | None:
    """The ground truth of ``image_id`` in ``gt_dir``: ``<id>.mat``, an edge map or a folder of them (None if absent).

    Examples
    --------
    >>> import tempfile
    >>> ground_truth_file(tempfile.mkdtemp(), "3096") is None
    True
    """
    gt_dir = Path(gt_dir)
    for suffix in (".mat", *EDGE_SUFFIXES):
        p = gt_dir / f"{image_id}{suffix}"
        if p.is_file():
            return p
    p = gt_dir / image_id
    return p if p.is_dir() else None


def ground_truth_ids(gt_dir) -> list[str]:
    """Image ids of a ground-truth folder, sorted (``.mat`` files, edge maps, and folders of edge maps).

    Examples
    --------
    >>> import tempfile
    >>> ground_truth_ids(tempfile.mkdtemp())
    []
    """
    gt_dir = Path(gt_dir)
    ids = set()
    for p in gt_dir.iterdir():
        if p.is_file() and p.suffix.lower() in (".mat", *EDGE_SUFFIXES):
            ids.add(p.stem)
        elif p.is_dir() and _edge_files(p):
            ids.add(p.name)
    return sorted(ids)


def read_truth(path, *, max_pixels=MAX_PIXELS) -> GroundTruth:
    """Read any ground truth :func:`ground_truth_file` finds: BSDS ``.mat`` or edge maps.

    Examples
    --------
    >>> read_truth("missing.mat")
    Traceback (most recent call last):
    ...
    segensemble.errors.FileFormatError: missing.mat: file not found
    """
    path = Path(path)
    if path.suffix.lower() == ".mat":
        return read_ground_truth(path, max_pixels=max_pixels)
    return read_edge_ground_truth(path, max_pixels=max_pixels)
