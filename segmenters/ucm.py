"""Hierarchical segmentation from the learned boundary detector: watershed and ultrametric contour map."""

from __future__ import annotations

from segensemble.segmentation import Segmentation
from segensemble.segmenters._common import check_positive
from segensemble.segmenters._registry import REGISTRY
from segensemble.validation import check_image, check_int, check_rng
from segensemble.edges import detect_boundaries
from segensemble.edges.ucm import UCM_MIN_SIZE, boundary_hierarchy

__all__ = ["ucm", "UCM_THRESHOLD", "UCM_MIN_SIZE"]

#: Default cut of the hierarchy (mean border probability), chosen on BSDS500 val.
UCM_THRESHOLD = 0.3


@REGISTRY.register("ucm", cost=9,
                   imports=("skimage.morphology:local_minima", "skimage.segmentation:watershed"))
def ucm(image, *, n_segments: int | None = None, threshold: float = UCM_THRESHOLD, min_size: int = UCM_MIN_SIZE,
        model=None, rng=None, n_jobs: int = 1) -> Segmentation:
    """Regions of the learned boundary detector's ultrametric contour map.

    The detector's boundary probability (:func:`segensemble.edges.detect_boundaries`, not
    thinned) is flooded from its regional minima (watershed); adjacent regions
    are merged greedily by the mean probability along their border, regions
    under ``min_size`` first (:func:`segensemble.edges.ucm.boundary_hierarchy`),
    and the hierarchy is cut at ``threshold``, or at ``n_segments`` regions.

    Parameters
    ----------
    image : (H, W[, C]) array
    n_segments : int, optional
        Cut at this many regions instead of at ``threshold``.
    threshold : float, default :data:`UCM_THRESHOLD`
        Mean border probability below which regions are merged.
    min_size : int, default :data:`UCM_MIN_SIZE`
    model : BoundaryModel or path, optional
        The detector (default: the one that ships).
    rng : None, int or numpy Generator
        Unused (deterministic); accepted for a uniform signature.
    n_jobs : int, default 1
        Threads of the detector's prediction (-1: every core); the regions do not depend on it. A recipe's
        members in threads give it their number of threads.

    Returns
    -------
    Segmentation

    References
    ----------
    P. Arbeláez, M. Maire, C. Fowlkes, J. Malik, "Contour detection and hierarchical image
    segmentation", IEEE TPAMI 33(5), 2011.

    Examples
    --------
    >>> img = np.zeros((40, 60, 3)); img[:, 30:] = [0.9, 0.2, 0.1]
    >>> ucm(img).n_segments
    2
    """
    img = check_image(image)
    k = None if n_segments is None else check_int(n_segments, "n_segments", minimum=1)
    t = check_positive(threshold, "threshold", allow_zero=True)
    m = check_int(min_size, "min_size", minimum=0)
    check_rng(rng)
    hierarchy = boundary_hierarchy(detect_boundaries(img, model=model, nms=False, n_jobs=n_jobs), min_size=m)
    labels = hierarchy.cut(threshold=t) if k is None else hierarchy.cut(n_segments=k)
    return Segmentation(labels, name="ucm", params={"n_segments": k, "threshold": t, "min_size": m})
