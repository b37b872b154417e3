"""The image pipeline, written once: apply a recipe to one image and return everything it made.

Every caller — ``segensemble fuse``, ``segensemble bench`` (local and Dask), :func:`segensemble.fuse` and vision
pipelines — goes through :func:`run_recipe`: pixel limit (refuse or downscale) and working scale → members (segmenters,
or label maps given) → optional agreement (CAP) → consensus → post-processing
→ hierarchy → confidence → back to the input's size.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from segensemble.edges import detect_boundaries
from segensemble.ensemble import Ensemble
from segensemble.errors import InputError, renamed_keywords
from segensemble.graph.hierarchy import cut_hierarchy
from segensemble.pipeline import deferred
from segensemble.pipeline.postprocess import cut_to_regions, postprocess as apply_postprocess, postprocess_levels
from segensemble.pipeline.imagesize import MAX_PIXELS, prepare_image, results_to_input_size, to_input_size
from segensemble.pipeline.workscale import WORKING_PIXELS, check_working_pixels
from segensemble.pipeline.members import (available_cores, confidence_map, hierarchy_confidence, run_checked_specs,
                                          segment)
from segensemble.pipeline.colourless import colourless_spatial, cuts_colourless
from segensemble.pipeline.exposure import apply_gain, exposure_gain
from segensemble.pipeline.recipes import Recipe, learned_boundaries, load_recipe
from segensemble.pipeline.result import FusionResult
from segensemble.validation import check_n_segments, check_soft_map

__all__ = ["FusionResult", "run_recipe", "segment_image", "hierarchy_levels", "hierarchy_confidence",
           "HIERARCHY_THRESHOLDS", "HIERARCHY_K", "CONFIDENCE_KINDS"]

#: Cut heights of a merge-tree hierarchy (methods with ``capabilities.hierarchy``), coarser with each level.
HIERARCHY_THRESHOLDS = tuple(np.round(np.arange(0.05, 0.951, 0.05), 2))
#: Numbers of regions of the hierarchy of the other consensus methods (one fit per level).
HIERARCHY_K = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50)
#: ``confidence=``: a soft method's largest membership or 1 - normalised entropy; 'auto': the largest membership
#: for soft methods, else the share of hierarchy levels in which a pixel is a boundary.
CONFIDENCE_KINDS = ("max", "entropy", "auto")


def hierarchy_levels(estimator, ensemble, *, method: str, params: dict, random_state=None) -> list:
    """The sweep of fused object labellings written as the hierarchy, coarser with each level.

    A merge tree (``capabilities.hierarchy``) is cut at :data:`HIERARCHY_THRESHOLDS`;
    other methods are refit for every K in :data:`HIERARCHY_K` (capped by the
    number of atoms).

    Examples
    --------
    >>> from segensemble import Ensemble, consensus
    >>> a = np.array([[0, 0, 1, 1]] * 2); b = np.array([[0, 0, 0, 1]] * 2)
    >>> ens = Ensemble.from_segmentations([a, a, b])
    >>> est = consensus.get("merge")().fit(ens)
    >>> len(hierarchy_levels(est, ens, method="merge", params={}))
    19
    """
    if estimator.capabilities.hierarchy:
        n = ensemble.n_objects
        return [cut_hierarchy(n, estimator.merges_, estimator.heights_, threshold=t) for t in HIERARCHY_THRESHOLDS]
    make = deferred.consensus().make
    return [make(method, min(k, ensemble.n_objects), random_state=random_state, **params).fit(ensemble).labels_
            for k in HIERARCHY_K]


def _members(img, recipe, members, segmenter_rng, n_jobs, say=None):
    available_cores(n_jobs)  # checked whether or not there are segmenters to run
    if members is None:
        if img is None:
            raise InputError("image: give an image to segment, or the members (segmentations) to fuse")
        return run_checked_specs(img, recipe.members, rng=segmenter_rng, n_jobs=n_jobs,
                                 on_done=None if say is None else lambda name: say(f"member {name} done"))
    members = list(members)
    if not members:
        raise InputError("members: expected at least one segmentation, got none")
    return members


def _consensus(segs, recipe, img, random_state, agree, image_aware, boundary=None):
    """Atoms of the members, optional agreement (CAP), the consensus; (atom labels, estimator, ensemble, fusion).

    On an image (and ``image_aware``) every method but ``merge``, which is the
    frame itself, runs in the image-aware frame
    (:func:`segensemble.pipeline.frame.image_aware_fit`): ``fusion`` is its
    :class:`~segensemble.pipeline.frame.SpatialFusion`, the estimator is fit
    on the superatoms and ``ensemble`` is theirs. Otherwise ``fusion`` is None.
    """
    consensus = deferred.consensus()
    k = check_n_segments(recipe.n_segments)
    spatial = image_aware and recipe.image_aware and img is not None
    est = consensus.make(recipe.method, k, random_state=random_state, **recipe.method_params(image=img is not None))
    ens = Ensemble.from_segmentations(segs, image=img)
    if agree is not False and agree is not None:
        cap = agree if isinstance(agree, consensus.CAP) else consensus.CAP(random_state=random_state)
        ens = cap.fit_transform(ens, image=img)
    if spatial and not est.capabilities.hierarchy:  # merge is the frame's learned hierarchy itself, on the atoms
        fusion = deferred.frame().image_aware_fit(est, ens, n_segments=k, gradient=boundary, **recipe.spatial)
        return fusion.labels, fusion.estimator, fusion.ensemble, fusion, fusion.atoms
    if k != "auto" and k > ens.n_objects:  # at most K regions: one per atom when there are fewer, as in the frame
        est.set_params(n_clusters=ens.n_objects)
    if boundary is not None and est.capabilities.hierarchy:  # merge: the map is its boundary evidence
        est.fit(ens, gradient=boundary)
    else:
        est.fit(ens)
    return est.labels_, est, ens, None, ens


def _merge_tree(est, ens, fusion, recipe, boundary=None):
    """(``cut(c)``, number of atoms, ``merge(labels, k)``) of the result's merge hierarchy, or None without one."""
    frame = deferred.frame()
    check_spatial, merge_regions = frame.check_spatial, frame.merge_regions
    if fusion is not None:
        s = check_spatial(recipe.spatial)
        cut, n, atoms = fusion.cut, fusion.ensemble.n_objects, fusion.atoms
    elif est.capabilities.hierarchy:
        s = {"member_weights": est.member_weights, "coefficients": getattr(est, "coefficients", None),
             "engine": getattr(est, "engine", "numpy")}
        n, atoms = ens.n_objects, ens

        def cut(c):
            return cut_hierarchy(n, est.merges_, est.heights_, n_clusters=c)
    else:
        return None

    def merge(labels, k):
        return merge_regions(labels, atoms, k, gradient=boundary, member_weights=s["member_weights"],
                             coefficients=s["coefficients"], engine=s["engine"])

    return cut, n, merge


def _boundary_map(boundary, img, segs, original):
    """The boundary evidence at the working size: None, the learned detector's map, or a given soft map checked."""
    import cv2

    if boundary is None:
        return None
    if isinstance(boundary, str):
        if boundary not in learned_boundaries():
            raise InputError(f"boundary: expected a soft boundary map, 'learned', 'learned:NAME' (one of "
                             f"{', '.join(learned_boundaries())}), 'recipe' or None, got {boundary!r}")
        if img is None:
            raise InputError("boundary: 'learned' runs the boundary detector on the image; give the image")
        return detect_boundaries(img, model=boundary.partition(":")[2] or None, nms=False).astype(np.float64)
    b = check_soft_map(boundary, "boundary", unit_range=True)
    shape = img.shape[:2] if img is not None else np.shape(getattr(segs[0], "labels", segs[0]))
    expected = original if original is not None else shape
    if b.shape != tuple(expected):
        raise InputError(f"boundary: expected shape {tuple(expected)} like the image, got {b.shape}")
    if original is not None:  # the image was downscaled for processing: so is its boundary map
        b = cv2.resize(b, (shape[1], shape[0]), interpolation=cv2.INTER_AREA)
    return b


@renamed_keywords(random_state="rng", segmenter_rng="member_rng")
def run_recipe(
    image=None,
    recipe="default",
    *,
    members=None,
    rng=0,
    member_rng=None,
    hierarchy: bool = False,
    confidence: str | None = None,
    agree=False,
    postprocess: bool = True,
    max_pixels: int | None = MAX_PIXELS,
    downscale: bool = False,
    image_aware: bool = True,
    boundary="recipe",
    n_jobs: int = 1,
    working_pixels="recipe",
    progress=None,
) -> FusionResult:
    """Apply a recipe (members, consensus method, parameters, post-processing) to one image.

    Parameters
    ----------
    image : path, (H, W[, C]) array, or None
        The image: read (header-checked first) when a path. None only with
        ``members`` (label maps made by other tools), in which case methods
        that use the image do without it and small regions are not merged.
    recipe : str or Recipe, default 'default'
        A built-in recipe (``'default'``, pinned ``'default@3'``), a recipe
        file, or a :class:`~segensemble.pipeline.recipes.Recipe` (e.g. with
        overrides from :meth:`Recipe.with_overrides`).
    members : sequence of Segmentation or (H, W) int arrays, optional
        Segmentations to fuse instead of running the recipe's segmenters.
    rng : int or None, default 0
        Seed of the consensus method (passed on as its scikit-learn
        ``random_state``) and of the segmenters unless ``member_rng`` is given.
        (``random_state``: its deprecated name.)
    member_rng : int or None, optional
        Seed of the segmenters (``bench`` derives one per image).
        (``segmenter_rng``: its deprecated name.)
    hierarchy : bool, default False
        Also compute the hierarchy (``levels``).
    confidence : {'max', 'entropy', 'auto'} or None
        Also compute a confidence map ('max'/'entropy' need a soft method).
    agree : bool or CAP, default False
        First make the members agree (Clustering Agreement Process); needs the image.
    postprocess : bool, default True
        Apply the recipe's post-processing.
    max_pixels : int or None, default :data:`segensemble.pipeline.imagesize.MAX_PIXELS`
    downscale : bool, default False
        Process an image above ``max_pixels`` downscaled and upscale the
        results back (otherwise it is refused).
    image_aware : bool, default True
        On an image, run the method in the image-aware frame
        (:mod:`segensemble.pipeline.frame`: superatoms of the learned
        boundary hierarchy, the method's partition as a vote, image-aware
        ``'auto'``; the result is always post-processed into connected
        regions of at least the frame's ``min_size`` pixels). False: the
        method of its paper on the atoms (``fuse --plain``).
    boundary : (H, W) array, 'learned', 'recipe' or None
        The boundary evidence of ``merge`` and of the image-aware frame (the
        ``gradient`` feature of the learned criterion, and of ``merge``'s
        ``'mean'`` criterion with ``gradient_weight``): a soft boundary map
        in [0, 1] of the image's size — from any detector (HED, RCF,
        Structured Edges …; see :func:`segensemble.io.read_boundary_map`) —
        or ``'learned'`` for :func:`segensemble.edges.detect_boundaries`
        (not thinned; ``'learned:NAME'``: with the shipped model NAME). None: the image's colour gradient
        (:func:`segensemble.features.boundary_strength`). 'recipe' (default):
        the recipe's ``boundary`` (``default`` from version 5: 'learned'),
        the colour gradient when there is no image.
    n_jobs : int, default 1
        Members run at once, in threads (-1: every core; see
        :func:`segensemble.pipeline.run_segmenters`), and threads that bring a
        photo's labels back to full resolution; the results do not depend on it.
    working_pixels : int, None or 'recipe', default 'recipe'
        The working scale (:mod:`segensemble.pipeline.workscale`): an image of more
        pixels is processed area-averaged to this many, and its labels,
        hierarchy and confidence come back at the input's full resolution,
        boundaries refined against the full-resolution image. 'recipe': the
        recipe's (154 401 for ``default`` from version 6; None for older
        versions); None: every image at its own size.
    progress : callable, optional
        Called with a short description of each stage as it starts
        (``'members'``, ``'member slic done'``, ``'fusing'``, ``'full resolution'``), e.g. to show it.

    With a number of regions (the recipe's ``n_segments``, ``-k K``) and
    connected post-processing, a result cut from a merge hierarchy (every
    method in the image-aware frame, and ``merge``) has at most K regions
    after post-processing — exactly K unless even the finest cut paints
    fewer: atoms that are not connected can make a cluster of several
    regions, so the cut's regions are merged down to K by the learned
    criterion when it paints more
    (:func:`segensemble.pipeline.postprocess.cut_to_regions`,
    :func:`segensemble.pipeline.frame.merge_regions`).

    Returns
    -------
    FusionResult

    Examples
    --------
    >>> img = np.zeros((24, 32, 3)); img[:, 16:] = 1
    >>> from segensemble.pipeline.recipes import Recipe
    >>> r = Recipe("mine", "1", ("slic:n_segments=4", "felzenszwalb:scale=50"), "eac", 2)
    >>> result = run_recipe(img, r)
    >>> result.labels.shape, int(result.labels.max()) + 1, len(result.members)
    ((24, 32), 2, 2)
    """
    consensus = deferred.consensus()
    recipe = recipe if isinstance(recipe, Recipe) else load_recipe(recipe)
    working_pixels = check_working_pixels(recipe.working_pixels if isinstance(working_pixels, str)
                                          and working_pixels == "recipe" else working_pixels)
    say = progress or (lambda stage: None)
    if confidence is not None and confidence not in CONFIDENCE_KINDS:
        raise InputError(f"confidence: expected one of {', '.join(CONFIDENCE_KINDS)} or None, got {confidence!r}")
    if confidence in ("max", "entropy") and not consensus.get(recipe.method).capabilities.soft:
        raise InputError(f"confidence: method {recipe.method!r} gives no memberships; use one of "
                         f"{', '.join(consensus.soft_methods())}")
    if members is not None:  # label maps made elsewhere are fused at their own size
        working_pixels = None
    say("reading")
    img, original, raw = prepare_image(image, max_pixels, downscale, working_pixels)
    gain = 1.0 if img is None else exposure_gain(img, recipe.exposure)
    img = None if img is None else apply_gain(img, gain)
    given = recipe
    colourless = img is not None and cuts_colourless(recipe, img)
    if colourless:  # its own cut of the learned hierarchy
        recipe = replace(recipe, spatial=colourless_spatial(recipe.spatial))
    say("members")
    segs = _members(img, recipe, members, rng if member_rng is None else member_rng, n_jobs, say)
    if agree and img is None:
        raise InputError("agree: needs the image for its visual words")
    if isinstance(boundary, str) and boundary == "recipe":
        boundary = recipe.boundary if img is not None else None
    say("fusing")
    boundary = _boundary_map(boundary, img, segs, original)
    atom_labels, est, ens, fusion, atoms = _consensus(segs, recipe, img, rng, agree, image_aware, boundary)
    post = dict(recipe.postprocess) if postprocess else {"connected": False, "min_size": 0}
    if img is None:
        post["min_size"] = 0  # no colours to merge small regions by
    elif fusion is not None:  # image-aware: connected regions, none below the frame's minimum size
        post = {"connected": True, "min_size": max(int(post.get("min_size", 0)), fusion.min_size)}
    labels = apply_postprocess(atoms.to_image(atom_labels), img, **post)
    k, tree = check_n_segments(recipe.n_segments), _merge_tree(est, ens, fusion, recipe, boundary)
    if k != "auto" and post["connected"] and img is not None and tree is not None:  # K regions painted, not K clusters
        cut, n, merge = tree
        labels = cut_to_regions(k, cut, lambda a: apply_postprocess(atoms.to_image(a), img, **post), n, merge)
    levels = None
    if hierarchy:
        if fusion is not None:
            cuts = [fusion.cut(k) for k in HIERARCHY_K]
        else:
            cuts = hierarchy_levels(est, ens, method=recipe.method, params=recipe.method_params(image=img is not None),
                                    random_state=rng)
        levels = postprocess_levels((atoms.to_image(c) for c in cuts), img, **post)
    conf, kind = None, None
    if confidence is not None and est.capabilities.soft:  # 'max'/'entropy' were refused above for hard methods
        conf = confidence_map(est, ens, "max" if confidence == "auto" else confidence)
        kind = "memberships" if confidence == "auto" else confidence
    elif confidence == "auto" and levels:
        conf, kind = hierarchy_confidence(levels), "hierarchy"
    say("full resolution" if original is not None else "done")
    full, levels, conf = results_to_input_size(labels, levels, conf, img, raw, original, n_jobs=n_jobs, gain=gain)
    return FusionResult(full, segs, ens, est, given, levels, conf, kind, original, img, fusion, working_pixels, labels,
                        gain, colourless)


@renamed_keywords(random_state="rng")
def segment_image(image, method: str = "slic", *, rng=0, max_pixels: int | None = MAX_PIXELS,
                  downscale: bool = False, working_pixels: int | None = WORKING_PIXELS, n_jobs: int = 1, **params):
    """One segmenter on one image, with the pipeline's pixel limit: the ``segment`` command's library call.

    Parameters
    ----------
    image : path or (H, W[, C]) array
    method : str, default 'slic'
        A registered segmenter, given ``**params``.
    rng, max_pixels, downscale
        As :func:`run_recipe` takes them.
    working_pixels : int or None, default :data:`~segensemble.pipeline.workscale.WORKING_PIXELS`
        Images of more pixels are segmented area-averaged to this many (None: at their own size).
    n_jobs : int, default 1
        Threads that bring the labels back to full resolution (-1: every core); the labels do not depend on it.

    Returns
    -------
    segmentation : Segmentation
        At the processed size.
    labels : (H, W) int32 array
        Its labels at the input's size (upscaled when processed downscaled).
    image : (h, w, 3) float array
        The processed image: an image above ``working_pixels`` is segmented
        area-averaged to that many pixels and its labels are brought back to
        full resolution, refined against it (:mod:`segensemble.pipeline.workscale`;
        None: every image at its own size).
    downscaled_from : (H, W) or None

    Examples
    --------
    >>> img = np.zeros((16, 16, 3)); img[:, 8:] = 1
    >>> seg, labels, _, _ = segment_image(img, "felzenszwalb", scale=50, sigma=0, min_size=4)
    >>> seg.n_segments, labels.shape
    (2, (16, 16))
    """
    img, original, raw = prepare_image(image, max_pixels, downscale, check_working_pixels(working_pixels))
    seg = segment(img, method, rng=rng, **params)
    labels = seg.labels if original is None else to_input_size(seg.labels, img, raw, original, n_jobs=n_jobs)
    return seg, labels, img, original
