"""The contingency table of two label maps, computed in O(pixels): what every region measure is made of.

Every label, including 0, is an ordinary region (as in the BSDS500
benchmark). Shared by :mod:`segensemble.evaluation.regions` (PRI, VOI,
covering) and :mod:`segensemble.evaluation.consistency` (GCE, LCE, BDE).
"""

from __future__ import annotations

import numpy as np

from segensemble.errors import InputError
from segensemble.segmentation import canonical_codes
from segensemble.validation import check_label_map

__all__ = ["contingency_table"]

_DENSE_CELLS = 20_000_000


def _codes(labels) -> tuple[np.ndarray, int]:
    lab = labels.ravel()
    top = int(lab.max()) + 1
    if top <= 4 * lab.size + 1024:
        present = np.zeros(top, dtype=bool)
        present[lab] = True
        remap = np.cumsum(present) - 1
        return remap[lab], int(present.sum())
    codes, old = canonical_codes(lab)
    return codes.astype(np.int64), len(old)


def contingency_table(seg, gt) -> np.ndarray:
    """Contingency table n(u, v) between two label maps of the same shape.

    Labels are compacted first (absent labels have no row/column), so the
    table has one row per region of ``seg`` and one column per region of ``gt``.

    Returns
    -------
    (k_seg, k_gt) float64 array
        Pixel counts of every pair of regions.

    Examples
    --------
    >>> contingency_table(np.array([[0, 0, 1]]), np.array([[5, 7, 7]])).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    a = check_label_map(seg, "seg")
    b = check_label_map(gt, "gt")
    if a.shape != b.shape:
        raise InputError(f"gt: expected the shape of seg {a.shape}, got {b.shape}")
    return _contingency(a, b)


def _contingency(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _code_table(_codes(a), _codes(b))


def _code_table(a_codes: tuple, b_codes: tuple) -> np.ndarray:
    """The table of two label maps given as their :func:`_codes` (a map's codes serve against many maps)."""
    (ca, ka), (cb, kb) = a_codes, b_codes
    if ka * kb <= _DENSE_CELLS:
        return np.bincount(ca * kb + cb, minlength=ka * kb).reshape(ka, kb).astype(np.float64)
    import scipy.sparse as sp

    m = sp.coo_matrix((np.ones(ca.size), (ca, cb)), shape=(ka, kb)).tocsr()
    return m  # sparse for huge label counts; callers use only sums and .multiply


def _check_gts(seg, gts) -> tuple[np.ndarray, list]:
    s = check_label_map(seg, "seg")
    if hasattr(gts, "segmentations"):
        gts = gts.segmentations
    if isinstance(gts, np.ndarray) and gts.ndim == 2:
        gts = [gts]
    gts = list(gts)
    if not gts:
        raise InputError("gts: expected at least one ground-truth segmentation, got none")
    out = []
    for i, g in enumerate(gts):
        g = check_label_map(g, f"gts[{i}]")
        if g.shape != s.shape:
            raise InputError(f"gts[{i}]: expected the shape of seg {s.shape}, got {g.shape}")
        out.append(g)
    return s, out
