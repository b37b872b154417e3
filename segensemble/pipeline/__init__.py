"""Functional front end: segment an image, fuse segmentations."""

from __future__ import annotations

from segensemble.validation import check_n_segments
from segensemble.errors import renamed_keywords, warn_deprecated
from segensemble.pipeline.imagesize import (DECODE_LIMIT, MAX_PIXELS, check_image_file, limit_image_size, load_image,
                                   upscale_labels)
from segensemble.pipeline.members import available_cores, confidence_map, hierarchy_confidence, run_segmenters, segment
from segensemble.pipeline.recipes import Recipe
from segensemble.pipeline.runner import run_recipe
from segensemble.pipeline.specs import check_segmenter_params, parse_segmenter_list, parse_segmenter_spec, parse_value

__all__ = ["segment", "fuse", "confidence_map", "hierarchy_confidence", "run_segmenters", "available_cores",
           # re-exported from the package's members, specs and imagesize modules, where they live
           "parse_segmenter_spec", "parse_segmenter_list", "parse_value", "check_segmenter_params",
           "limit_image_size", "load_image", "check_image_file", "upscale_labels", "MAX_PIXELS", "DECODE_LIMIT"]


@renamed_keywords(random_state="rng")
def fuse(
    segmentations,
    method: str = "eac",
    n_segments="auto",
    *,
    image=None,
    rng=None,
    return_estimator: bool = False,
    agree=False,
    **params,
):
    """Fuse several segmentations of one image into one.

    The segmentations are reduced to atoms (exact, see
    :meth:`Ensemble.from_segmentations`), the registered consensus method is fit
    on them, and the consensus is painted back on the image grid: the
    recipe runner (:func:`segensemble.pipeline.runner.run_recipe`) with these members
    and method, without the recipe's post-processing. Without ``image`` the
    method is the one of its paper; with it, the method runs image-aware
    (:mod:`segensemble.pipeline.frame`: connected regions of at least 200
    pixels, an image-aware ``'auto'``).

    Parameters
    ----------
    segmentations : sequence of Segmentation or (H, W) int arrays
        The members, all of the same shape.
    method : str, default 'eac'
        A name from ``segensemble.consensus.available()``.
    n_segments : int or 'auto', default 'auto'
        Number of fused regions, or the method's own criterion.
    image : (H, W[, C]) array, optional
        The image, for methods that use per-atom features.
    rng : None or int
        Seed of the consensus method, where it is randomised (``random_state``: its deprecated name).
    return_estimator : bool, default False
        Also return the fitted estimator and the ensemble (the agreed one with
        ``agree``).
    agree : bool or CAP, default False
        First make the members agree with the Clustering Agreement Process
        (:class:`segensemble.consensus.agreement.CAP`; ``True`` uses its
        defaults, seeded by ``rng``). Needs ``image`` (visual words).
    **params
        Further parameters of the consensus method.

    Returns
    -------
    labels : (H, W) int32 array
        Fused segmentation, labels 0..K-1.
    estimator, ensemble : only with ``return_estimator=True``

    Examples
    --------
    >>> a = np.array([[0, 0, 1, 1], [0, 0, 1, 1]])
    >>> b = np.array([[0, 0, 0, 1], [0, 0, 0, 1]])
    >>> fuse([a, a, b], method="eac", n_segments=2).tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1]]
    """
    if "n_clusters" in params:  # the estimators' name for it
        warn_deprecated("fuse(n_clusters=...)", "n_segments")
        n_segments = params.pop("n_clusters")
    recipe = Recipe(name="fuse", version="", segmenters=(), method=method, n_segments=check_n_segments(n_segments),
                    params=params)
    result = run_recipe(image, recipe, members=segmentations, rng=rng, agree=agree,
                        postprocess=False, max_pixels=None)
    if return_estimator:
        return result.labels, result.estimator, result.ensemble
    return result.labels
