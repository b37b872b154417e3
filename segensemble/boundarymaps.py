"""Boundary maps of label maps as the Berkeley benchmark draws them (``seg2bdry``, MATLAB ``bwmorph`` thinning).

A base-layer module: the ``.mat`` readers derive a ground truth's missing
``Boundaries`` with it, the benchmark (:mod:`segensemble.evaluation.boundaries`)
scores with it.
"""

from __future__ import annotations

import numpy as np

from segensemble.errors import InputError
from segensemble.validation import check_label_map

__all__ = ["seg2bdry", "thin_boundaries", "ground_truth_boundaries"]


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
