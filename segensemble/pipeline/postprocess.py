"""Post-processing of fused segmentations: connected regions, small-region merging.

A consensus labels atoms, so one fused label can cover several disconnected
pieces of the image. :func:`connected_regions` gives every 4-connected piece
its own label; :func:`merge_small` then merges every region below a minimum
size into its most similar neighbour (mean CIE Lab colour).
:func:`cut_to_regions` cuts a hierarchy so that the post-processed result
has the number of regions a user asked for.
"""

from __future__ import annotations

import numpy as np
from skimage.measure import label as _label

from segensemble.validation import check_image, check_int, check_label_map
from segensemble.errors import InputError
from segensemble.features import lab_colour
from segensemble.graph.adjacency import merge_small_regions

__all__ = ["connected_regions", "merge_small", "postprocess", "postprocess_levels", "cut_to_regions"]


def connected_regions(labels) -> np.ndarray:
    """Relabel so that every 4-connected region has its own label (0..k-1).

    Examples
    --------
    >>> connected_regions(np.array([[0, 1, 0], [0, 1, 0]])).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    lab = check_label_map(labels, "labels")
    return (_label(lab, background=-1, connectivity=1) - 1).astype(np.int32)


def merge_small(labels, image, min_size: int, *, lab=None) -> np.ndarray:
    """Merge every region smaller than ``min_size`` pixels into its most similar adjacent region.

    Similarity is the distance between the regions' mean CIE Lab colours;
    small regions merge pass by pass until none is left (or one region).
    ``lab``: :func:`~segensemble.features.lab_colour` of the image when the
    caller has it already (a hierarchy's levels share it).

    Examples
    --------
    >>> lab = np.array([[0, 0, 1, 1], [0, 0, 1, 2]])
    >>> img = np.zeros((2, 4, 3)); img[:, 2:] = 1
    >>> merge_small(lab, img, 2).tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1]]
    """
    regions = check_label_map(labels, "labels")
    img = check_image(image)
    if img.shape[:2] != regions.shape:
        raise InputError(f"image: expected shape {regions.shape} like the labels, got {img.shape[:2]}")
    size = check_int(min_size, "min_size", minimum=0)
    if size <= 1:
        return regions.astype(np.int32)
    colour = lab_colour(img) if lab is None else np.asarray(lab, dtype=np.float64)
    if colour.shape != regions.shape + (3,):
        raise InputError(f"lab: expected shape {regions.shape + (3,)} like the image, got {colour.shape}")
    return merge_small_regions(regions, colour, size)


def postprocess(labels, image=None, *, connected: bool = True, min_size: int = 0, lab=None) -> np.ndarray:
    """Connected relabelling, then small-region merging (each optional; ``lab`` as in :func:`merge_small`).

    Examples
    --------
    >>> postprocess(np.array([[0, 1, 0]]), connected=True).tolist()
    [[0, 1, 2]]
    """
    regions = check_label_map(labels, "labels")
    if connected:
        regions = connected_regions(regions)
    if min_size and min_size > 1:
        if image is None:
            raise InputError("image: merging small regions needs the image")
        regions = merge_small(regions, image, min_size, lab=lab)
    return regions.astype(np.int32)


def postprocess_levels(levels, image=None, *, connected: bool = True, min_size: int = 0) -> list:
    """:func:`postprocess` of every label map of ``levels`` (a hierarchy's cuts), the image's Lab colour computed once.

    Examples
    --------
    >>> img = np.zeros((2, 4, 3)); img[:, 2:] = 1
    >>> [m.tolist() for m in postprocess_levels([np.array([[0, 0, 1, 1], [0, 0, 1, 2]])] * 2, img, min_size=2)]
    [[[0, 0, 1, 1], [0, 0, 1, 1]], [[0, 0, 1, 1], [0, 0, 1, 1]]]
    """
    lab = lab_colour(image) if image is not None and min_size and min_size > 1 else None
    return [postprocess(level, image, connected=connected, min_size=min_size, lab=lab) for level in levels]


def cut_to_regions(n_segments: int, cut, paint, n_levels: int, merge) -> np.ndarray:
    """A post-processed segmentation with ``n_segments`` regions from a hierarchy's cuts.

    A cut of a merge hierarchy into ``c`` clusters of atoms paints ``c``
    regions only when every cluster is one connected piece of at least the
    minimum size. Atoms that are not connected (a colour cluster, a
    Chan-Vese phase, the specks an atom is left with) can join distant
    regions into one cluster, which connected relabelling splits again; a
    cluster of small pieces disappears into its neighbours. So: the cut at
    K clusters when it paints K regions (one painting, the common case);
    when it paints more, its regions merged down to K (``merge``); when
    fewer, the cut at the first ``c`` found by doubling and bisection that
    paints K, else the finest one painted above K merged down to K. The
    result has K regions unless even the finest cut paints fewer.

    Parameters
    ----------
    n_segments : int
        K, the number of regions wanted.
    cut : callable
        ``cut(c)``: the hierarchy's labels of the atoms at ``c`` clusters (1 <= c <= ``n_levels``).
    paint : callable
        ``paint(atom_labels)``: the post-processed (connected) label image.
    n_levels : int
        The number of atoms (the finest cut).
    merge : callable
        ``merge(label_image, k)``: adjacent regions merged down to ``k``.

    Examples
    --------
    Atom 0 is the two ends of a colour. At two clusters the hierarchy joins
    atom 2 to atom 0, which paints three connected regions; they are merged
    down to two:

    >>> atoms = np.array([[0, 1, 0, 2]])
    >>> tree = {3: np.array([0, 1, 2]), 2: np.array([0, 1, 0]), 1: np.array([0, 0, 0])}
    >>> paint = lambda lab: connected_regions(lab[atoms])
    >>> int(paint(tree[2]).max()) + 1
    3
    >>> merge = lambda lab, k: np.minimum(lab, k - 1)
    >>> cut_to_regions(2, tree.get, paint, 3, merge).tolist()
    [[0, 1, 1, 1]]
    """
    def count(lab):
        return int(lab.max()) + 1

    k, n = int(n_segments), int(n_levels)
    lo = min(k, n)
    painted = paint(cut(lo))
    if count(painted) >= k or lo == n:
        return painted if count(painted) <= k else merge(painted, k)
    hi = lo
    while count(painted) < k and hi < n:  # too few: double c until the painting has K or more
        lo, hi = hi, min(2 * hi, n)
        painted = paint(cut(hi))
    while count(painted) > k and hi - lo > 1:  # bisect for a cut that paints exactly K
        mid = (lo + hi) // 2
        trial = paint(cut(mid))
        if count(trial) < k:
            lo = mid
        else:
            hi, painted = mid, trial
    return painted if count(painted) <= k else merge(painted, k)
