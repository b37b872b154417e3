"""Boundary maps of segmentations (Berkeley benchmark conventions)."""

from __future__ import annotations

import numpy as np

from segensemble.validation import check_label_map
from segensemble.errors import InputError

__all__ = ["seg2bdry", "thin_boundaries", "boundary_counts", "boundary_matches", "ground_truth_boundaries"]


def seg2bdry(labels, fmt: str = "imageSize") -> np.ndarray:
    """Boundary map of a segmentation, as the BSDS benchmark's ``seg2bdry``.

    The double-size map has one cell per pixel, per pair of 4-adjacent pixels
    (set when their labels differ) and per corner (set when any of its four
    incident edges is set); its outer frame copies the adjacent row/column.

    Parameters
    ----------
    labels : (H, W) int array
    fmt : {'imageSize', 'doubleSize'}
        ``'doubleSize'`` returns the (2H+1, 2W+1) map; ``'imageSize'`` (default)
        samples it at the pixels' lower-right edge positions, giving (H, W):
        pixel (i, j) is boundary when it differs from its lower or right
        neighbour (or a corner rule applies), as in the benchmark.

    Returns
    -------
    bool array

    References
    ----------
    D. Martin, C. Fowlkes, J. Malik, "Learning to detect natural image
    boundaries using local brightness, color, and texture cues", TPAMI 2004;
    BSDS500 benchmark code (``seg2bdry.m``), Arbelaez et al., TPAMI 2011.

    Examples
    --------
    >>> seg2bdry(np.array([[0, 0, 1], [0, 0, 1]])).astype(int).tolist()
    [[0, 1, 0], [0, 1, 0]]
    """
    seg = check_label_map(labels, "labels")
    if fmt not in ("imageSize", "doubleSize"):
        raise InputError(f"fmt: expected 'imageSize' or 'doubleSize', got {fmt!r}")
    tx, ty = seg.shape
    ev = np.zeros((tx, ty), dtype=bool)
    ev[:-1, :] = seg[:-1, :] != seg[1:, :]
    eh = np.zeros((tx, ty), dtype=bool)
    eh[:, :-1] = seg[:, :-1] != seg[:, 1:]
    b = np.zeros((2 * tx + 1, 2 * ty + 1), dtype=bool)
    b[2::2, 1::2] = ev
    b[1::2, 2::2] = eh
    b[2:-1:2, 2:-1:2] = (eh[:-1, :-1] | eh[1:, :-1]) | (ev[:-1, :-1] | ev[:-1, 1:])
    b[0, :] = b[1, :]
    b[:, 0] = b[:, 1]
    b[-1, :] = b[-2, :]
    b[:, -1] = b[:, -2]
    if fmt == "imageSize":
        return b[2::2, 2::2].copy()
    return b


def thin_boundaries(bmap) -> np.ndarray:
    """Thin a boundary map to one-pixel width (MATLAB ``bwmorph(bmap, 'thin', inf)``).

    Uses :func:`skimage.morphology.thin`, which implements the same two-subiteration
    lookup tables, repeated until a whole pass changes nothing.

    Examples
    --------
    >>> b = np.zeros((5, 7), bool); b[1:4, 1:6] = True
    >>> thin_boundaries(b).sum()
    np.int64(3)
    """
    from skimage.morphology import thin

    b = np.asarray(bmap, dtype=bool)
    if not b.any():
        return b.copy()
    return thin(b)


def ground_truth_boundaries(labels) -> np.ndarray:
    """Boundaries as stored in BSDS500 ground truth: ``thin(seg2bdry(seg))``.

    Reproduces the ``Boundaries`` field of the BSDS500 ``.mat`` files pixel for
    pixel (tested).

    Examples
    --------
    >>> ground_truth_boundaries(np.array([[0, 0, 1], [0, 0, 1]])).astype(int).tolist()
    [[0, 1, 0], [0, 1, 0]]
    """
    return thin_boundaries(seg2bdry(labels))


def boundary_counts(bmap, gt_boundaries, *, max_dist: float = 0.0075, thin: bool = True) -> tuple:
    """Precision/recall counts of one machine boundary map (``evaluation_bdry_image.m``).

    Parameters
    ----------
    bmap : (H, W) bool array
        Machine boundaries (thinned first unless ``thin=False``).
    gt_boundaries : list of (H, W) bool arrays
        Human boundary maps, one per annotator (used as they are).
    max_dist : float, default 0.0075
        Matching radius as a fraction of the image diagonal.
    thin : bool, default True

    Returns
    -------
    cntR, sumR, cntP, sumP : int
        Matched human pixels and human pixels, summed over annotators; machine
        pixels matched to any annotator, and machine pixels.

    Examples
    --------
    >>> b = np.zeros((20, 20), bool); b[10, :] = True
    >>> g = np.zeros((20, 20), bool); g[11, :10] = True
    >>> boundary_counts(b, [g, b])  # radius 0.0075 x 28.3 px: the offset row is too far
    (20, 30, 20, 20)
    >>> boundary_counts(b, [g, b], max_dist=0.1)  # radius 2.8 px
    (30, 30, 20, 20)
    """
    b = thin_boundaries(bmap) if thin else np.asarray(bmap, dtype=bool)
    acc = np.zeros(b.shape, dtype=bool)
    cntR = sumR = 0
    for g, m1, m2 in _correspondences(b, gt_boundaries, max_dist):
        acc |= m1
        sumR += int(g.sum())
        cntR += int(m2.sum())
    return cntR, sumR, int(acc.sum()), int(b.sum())


def _correspondences(b: np.ndarray, gt_boundaries, max_dist: float):
    """``(annotation, matched machine pixels, matched annotation pixels)`` for every annotator, shapes checked."""
    from segensemble.evaluation.correspond import correspond_pixels

    for g in gt_boundaries:
        g = np.asarray(g, dtype=bool)
        if g.shape != b.shape:
            raise InputError(f"gt_boundaries: expected the shape of bmap {b.shape}, got {g.shape}")
        yield (g, *correspond_pixels(b, g, max_dist))


def boundary_matches(bmap, gt_boundaries, *, max_dist: float = 0.0075, thin: bool = True) -> tuple:
    """Which boundary pixels the benchmark matched: true positives, false positives, false negatives.

    The pixels behind :func:`boundary_counts`: machine pixels matched to
    some annotator (TP) or to none (FP), and human pixels (of any annotator)
    left unmatched (FN) — what the Structured Edge toolbox's evaluation draws
    green, blue and red.

    Returns
    -------
    tp, fp, fn : (H, W) bool arrays

    Examples
    --------
    >>> b = np.zeros((20, 20), bool); b[10, :12] = True
    >>> g = np.zeros((20, 20), bool); g[10, 5:] = True
    >>> tp, fp, fn = boundary_matches(b, [g])
    >>> int(tp.sum()), int(fp.sum()), int(fn.sum())
    (7, 5, 8)
    """
    b = thin_boundaries(bmap) if thin else np.asarray(bmap, dtype=bool)
    tp = np.zeros(b.shape, dtype=bool)
    fn = np.zeros(b.shape, dtype=bool)
    for g, m1, m2 in _correspondences(b, gt_boundaries, max_dist):
        tp |= m1
        fn |= g & ~m2
    return tp, b & ~tp, fn
