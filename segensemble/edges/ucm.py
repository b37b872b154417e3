"""Ultrametric contour maps from a soft boundary map.

Arbeláez, Maire, Fowlkes & Malik (TPAMI 2011, Sec. 4) turn a boundary map
into a hierarchy of regions: the watershed of the map from its regional
minima gives the finest regions; adjacent regions are merged greedily,
weakest border first, the strength of a border being the mean of the map
along it; the height at which two regions join is their ultrametric
distance, drawn on every boundary element of the ultrametric contour map
(UCM). Thresholding the UCM at ``t`` gives the regions of the hierarchy at
``t``; the BSDS ``ucm2`` format draws it on the double-size grid.

Where we had to choose: the paper's *oriented* watershed re-weights each
watershed arc by the oriented gradient along the arc's direction. Our map is
the learned detector's probability, which has no orientation channel, so an
arc's strength is the mean of the probability over the pixel pairs it
separates (the larger of the two pixels' values), before merging.
"""

from __future__ import annotations

import numpy as np

from segensemble.graph.adjacency import adjacent_pairs, pair_pixel_values
from segensemble.errors import InputError
from segensemble.validation import check_label_map, check_soft_map
from segensemble.graph.hierarchy import Hierarchy, merge_hierarchy, ultrametric_distances

__all__ = ["watershed_regions", "boundary_hierarchy", "ultrametric_distances", "ucm2_map", "UCMHierarchy",
           "UCM_MIN_SIZE"]

#: Regions under this many pixels are merged first (their borders carry little evidence); the ``ucm`` segmenter's
#: and ``segensemble edges --ucm``'s default.
UCM_MIN_SIZE = 100


def watershed_regions(probability) -> np.ndarray:
    """Watershed of a soft boundary map from its regional minima (4-connected), labels 0..n-1.

    Examples
    --------
    >>> p = np.zeros((5, 7)); p[:, 3] = 1
    >>> watershed_regions(p)[:, [0, 6]].tolist()[0]
    [0, 1]
    """
    from scipy import ndimage
    from skimage.morphology import local_minima
    from skimage.segmentation import watershed

    p = check_soft_map(probability, "probability")
    # quantise to 1/1000 so that flat noise does not seed a region per pixel
    q = np.round(p * 1000)
    markers, _ = ndimage.label(local_minima(q, connectivity=1))
    labels = watershed(q, markers=markers, connectivity=1)
    return np.unique(labels, return_inverse=True)[1].reshape(p.shape).astype(np.int32)


class UCMHierarchy:
    """The merge hierarchy of a boundary map's watershed regions.

    Attributes
    ----------
    regions : (H, W) int32 array
        The finest regions (the watershed).
    tree : :class:`~segensemble.graph.hierarchy.Hierarchy`
        The merge tree over the regions; ``merges`` and ``heights`` are its.
    merges : (n - 1, 2) int array
        Merged region pairs in order (the smaller index survives).
    heights : (n - 1,) float array
        Non-decreasing height of every merge (mean border probability).

    Examples
    --------
    >>> h = UCMHierarchy(np.array([[0, 1, 2]]), np.array([[0, 1], [0, 2]]), np.array([0.2, 0.7]))
    >>> h.cut(threshold=0.5).tolist(), h.cut(n_segments=3).tolist()
    ([[0, 0, 1]], [[0, 1, 2]])
    >>> h.ucm2()[1].tolist()
    [0.0, 0.0, 0.2, 0.0, 0.7, 0.0, 0.0]
    """

    def __init__(self, regions, merges, heights):
        self.regions = regions
        self.tree = Hierarchy(int(regions.max()) + 1, merges, heights)

    @property
    def n_regions(self) -> int:
        return self.tree.n_leaves

    @property
    def merges(self) -> np.ndarray:
        return self.tree.merges

    @property
    def heights(self) -> np.ndarray:
        return self.tree.heights

    def cut(self, *, threshold=None, n_segments=None) -> np.ndarray:
        """(H, W) labels of the hierarchy below ``threshold`` (or at ``n_segments`` regions)."""
        if (threshold is None) == (n_segments is None):
            raise InputError("cut: give exactly one of threshold and n_segments")
        return self.tree.cut(threshold=threshold, n_regions=n_segments)[self.regions].astype(np.int32)

    def ucm2(self) -> np.ndarray:
        """The hierarchy as a BSDS ``ucm2`` map, (2H + 1, 2W + 1) (see :func:`ucm2_map`)."""
        return ucm2_map(self.regions, self.tree.persistence(adjacent_pairs(self.regions)[0]))


def boundary_hierarchy(probability, *, min_size: int = 0) -> UCMHierarchy:
    """Watershed regions of a soft boundary map merged greedily by their mean border probability.

    Parameters
    ----------
    probability : (H, W) array
        Soft boundary map (not thinned), values in [0, 1].
    min_size : int, default 0
        Regions smaller than this (pixels) are merged first, each along its weakest border.

    Returns
    -------
    UCMHierarchy

    References
    ----------
    P. Arbeláez, M. Maire, C. Fowlkes, J. Malik, "Contour detection and hierarchical image segmentation",
    IEEE TPAMI 33(5), 2011, Sec. 4.1-4.2 (watershed and ultrametric contour map).

    Examples
    --------
    >>> p = np.zeros((6, 9)); p[:, 3] = 0.9; p[:, 6] = 0.3
    >>> h = boundary_hierarchy(p)
    >>> h.n_regions, h.heights.round(2).tolist()
    (3, [0.3, 0.9])
    >>> h.cut(threshold=0.5)[0].tolist()
    [0, 0, 0, 1, 1, 1, 1, 1, 1]
    """
    p = check_soft_map(probability, "probability")
    regions = watershed_regions(p)
    n = int(regions.max()) + 1
    if n == 1:
        return UCMHierarchy(regions, np.zeros((0, 2), dtype=np.int64), np.zeros(0))
    pairs, length, straddle, inverse = adjacent_pairs(regions, return_inverse=True)
    pa, pb = pair_pixel_values(p, straddle)
    strength = np.bincount(inverse, weights=np.maximum(pa, pb), minlength=len(pairs)) / length
    sizes = np.bincount(regions.ravel(), minlength=n)
    merges, heights = merge_hierarchy(n, pairs, length, strength, sizes=sizes, min_size=min_size)
    # the min_size pass keys small regions 1 lower: those merges sit at the bottom of the hierarchy
    return UCMHierarchy(regions, merges, np.maximum(heights, 0.0))


def ucm2_map(regions, distances) -> np.ndarray:
    """Draw ultrametric distances on the BSDS double-size grid, (2H + 1, 2W + 1).

    Pixel (y, x) sits at (2y + 1, 2x + 1); the boundary element between two
    horizontally adjacent pixels at (2y + 1, 2x + 2), between two vertically
    adjacent ones at (2y + 2, 2x + 1); a corner (even, even) takes the
    largest of the elements around it, and the frame repeats the elements
    next to it (a contour that meets the image border cuts the frame too,
    as in the BSDS files). ``distances`` are those of
    :func:`segensemble.graph.adjacency.adjacent_pairs` of ``regions``, in its order.

    Examples
    --------
    >>> regions = np.array([[0, 0, 1]])
    >>> ucm2_map(regions, np.array([0.7]))[[0, 1]].tolist()
    [[0.0, 0.0, 0.0, 0.0, 0.7, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.7, 0.0, 0.0]]
    """
    lab = check_label_map(regions, "regions")
    h, w = lab.shape
    pairs, length, straddle, inverse = adjacent_pairs(lab, return_inverse=True)
    d = np.asarray(distances, dtype=np.float64)
    if d.shape != (len(pairs),):
        raise InputError(f"distances: expected one per adjacent pair ({len(pairs)}), got shape {d.shape}")
    value = np.zeros(straddle.shape)
    value[straddle] = d[inverse]
    n_h = h * (w - 1)
    out = np.zeros((2 * h + 1, 2 * w + 1))
    out[1::2, 2:-1:2] = value[:n_h].reshape(h, w - 1)
    out[2:-1:2, 1::2] = value[n_h:].reshape(h - 1, w)
    corners = np.maximum.reduce([out[1:-1:2, 2:-1:2][:-1], out[1:-1:2, 2:-1:2][1:],
                                 out[2:-1:2, 1:-1:2][:, :-1], out[2:-1:2, 1:-1:2][:, 1:]]) if h > 1 and w > 1 else None
    if corners is not None:
        out[2:-1:2, 2:-1:2] = corners
    # the frame continues every contour that meets the image border (else regions would connect along it)
    out[0], out[-1] = out[1], out[-2]
    out[:, 0], out[:, -1] = out[:, 1], out[:, -2]
    return out
