"""Boundary maps of segmentations (Berkeley benchmark conventions)."""

from __future__ import annotations

import numpy as np

from segensemble.errors import InputError

from segensemble.boundarymaps import ground_truth_boundaries, seg2bdry, thin_boundaries
from segensemble.evaluation.correspond import correspond_pixels

__all__ = ["seg2bdry", "thin_boundaries", "boundary_counts", "boundary_matches", "ground_truth_boundaries"]


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
