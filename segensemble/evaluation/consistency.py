"""Region measures of the segmentation-fusion literature: GCE, LCE and BDE.

Beside the Berkeley benchmark's covering, PRI and VOI, the fusion papers
(Mignotte, IEEE TIP 2008–2014; Li, Wu & Chang, CVPR 2012; Yang et al., CVIU
2008) report three more measures, each averaged over the annotations of an
image (lower is better for all three):

- **Global and local consistency error** (Martin et al., ICCV 2001). With
  ``R(S, p)`` the region of ``S`` containing pixel ``p``, the local refinement
  error is ``E(S1, S2, p) = |R(S1, p) \\ R(S2, p)| / |R(S1, p)|``;
  ``GCE = min(sum_p E(S1, S2, p), sum_p E(S2, S1, p)) / N`` and
  ``LCE = sum_p min(E(S1, S2, p), E(S2, S1, p)) / N``. Both are read off the
  contingency table ``n_uv`` in O(pixels): a pixel in cell ``(u, v)`` has
  ``E(S1, S2) = 1 - n_uv / n_u`` and ``E(S2, S1) = 1 - n_uv / n_v``.
- **Boundary displacement error** (Freixenet et al., ECCV 2002; as computed
  by the fusion papers): the mean Euclidean distance from every boundary pixel
  of one map to the nearest boundary pixel of the other, averaged over the
  two directions, in pixels. A pixel is a boundary pixel when its two
  neighbours along a row or along a column carry different labels (at the
  first and last row and column: when it differs from its one neighbour) —
  the pixels where the labels' central differences are non-zero (so the
  pixels around a one-pixel region are boundary pixels, the pixel itself is
  not). A map with a single region has the image frame as its boundary.
"""

from __future__ import annotations

import numpy as np

from segensemble.evaluation.contingency import _check_gts, _contingency

__all__ = [
    "boundary_displacement_error",
    "consistency_errors",
    "global_consistency_error",
    "label_boundary",
    "local_consistency_error",
]


def consistency_errors(n) -> tuple[float, float]:
    """GCE and LCE of two label maps from their contingency table ``n[u, v]``.

    Examples
    --------
    Two columns against two rows of a 2×2 image: every pixel's regions share
    half their area.

    >>> consistency_errors(np.array([[1.0, 1.0], [1.0, 1.0]]))
    (0.5, 0.5)
    """
    if hasattr(n, "tocoo"):
        c = n.tocoo()
        nu = np.asarray(n.sum(axis=1)).ravel()[c.row]
        nv = np.asarray(n.sum(axis=0)).ravel()[c.col]
        nij = c.data
    else:
        n = np.asarray(n, dtype=np.float64)
        u, v = np.nonzero(n)
        nu, nv, nij = n.sum(axis=1)[u], n.sum(axis=0)[v], n[u, v]
    total = float(nij.sum())
    e12, e21 = 1.0 - nij / nu, 1.0 - nij / nv
    gce = min(float(np.sum(nij * e12)), float(np.sum(nij * e21))) / total
    lce = float(np.sum(nij * np.minimum(e12, e21))) / total
    return max(gce, 0.0), max(lce, 0.0)


def label_boundary(labels) -> np.ndarray:
    """Boundary pixels of a label map for the displacement error (see the module docstring).

    Examples
    --------
    >>> label_boundary(np.array([[0, 0, 0, 1, 1, 1]])).astype(int).tolist()
    [[0, 0, 1, 1, 0, 0]]
    >>> label_boundary(np.zeros((3, 3), int)).astype(int).tolist()
    [[1, 1, 1], [1, 0, 1], [1, 1, 1]]
    """
    lab = np.asarray(labels)
    out = np.zeros(lab.shape, dtype=bool)
    for axis in (0, 1):
        if lab.shape[axis] < 2:
            continue
        a = np.moveaxis(lab, axis, 0)
        o = np.moveaxis(out, axis, 0)  # a view: writes land in out
        o[1:-1] |= a[2:] != a[:-2]
        o[0] |= a[0] != a[1]
        o[-1] |= a[-1] != a[-2]
    if not out.any():
        out[0, :] = out[-1, :] = out[:, 0] = out[:, -1] = True
    return out


def _distance_to(boundary: np.ndarray) -> np.ndarray:
    """Euclidean distance of every pixel to the nearest ``True`` pixel (exact, float64).

    SciPy's exact transform, not OpenCV's ``DIST_MASK_PRECISE``: OpenCV's
    float32 result changes in the last bits with the number of threads it
    runs on, so a score would depend on the process that computed it.
    """
    from scipy import ndimage

    return ndimage.distance_transform_edt(~boundary)


def boundary_maps(segs) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(boundary, distance to it)`` of every label map: what :func:`displacement` needs of the ground truth."""
    out = []
    for s in segs:
        b = label_boundary(s)
        out.append((b, _distance_to(b)))
    return out


def displacement(seg_map: tuple[np.ndarray, np.ndarray], gt_map: tuple[np.ndarray, np.ndarray]) -> float:
    """BDE between two maps given as :func:`boundary_maps` entries."""
    (b1, d1), (b2, d2) = seg_map, gt_map
    return 0.5 * (float(d2[b1].mean()) + float(d1[b2].mean()))


def global_consistency_error(seg, gts) -> float:
    """Global consistency error (Martin et al. 2001), averaged over annotations.

    Examples
    --------
    A refinement has no consistency error:

    >>> global_consistency_error(np.array([[0, 0, 1, 1]]), [np.array([[0, 0, 0, 0]])])
    0.0
    """
    s, gl = _check_gts(seg, gts)
    return float(np.mean([consistency_errors(_contingency(s, g))[0] for g in gl]))


def local_consistency_error(seg, gts) -> float:
    """Local consistency error (Martin et al. 2001), averaged over annotations; never above the GCE.

    Examples
    --------
    >>> local_consistency_error(np.array([[0, 0], [1, 1]]), [np.array([[0, 1], [0, 1]])])
    0.5
    """
    s, gl = _check_gts(seg, gts)
    return float(np.mean([consistency_errors(_contingency(s, g))[1] for g in gl]))


def boundary_displacement_error(seg, gts) -> float:
    """Boundary displacement error in pixels, averaged over annotations.

    Parameters
    ----------
    seg : (H, W) int array
    gts : list of (H, W) int arrays, or a :class:`~segensemble.io.GroundTruth`

    References
    ----------
    J. Freixenet, X. Muñoz, D. Raba, J. Martí, X. Cufí, "Yet another survey on
    image segmentation: region and boundary information integration", ECCV 2002.

    Examples
    --------
    A vertical boundary moved three columns to the right:

    >>> a = np.zeros((4, 10), int); a[:, 5:] = 1
    >>> b = np.zeros((4, 10), int); b[:, 8:] = 1
    >>> boundary_displacement_error(a, [b])
    2.5
    """
    s, gl = _check_gts(seg, gts)
    mine = boundary_maps([s])[0]
    return float(np.mean([displacement(mine, g) for g in boundary_maps(gl)]))
