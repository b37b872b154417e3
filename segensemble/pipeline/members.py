"""The members of an ensemble: segmenters run on one image (in turn or in threads), and the per-pixel
confidence of what they were fused into.

The image pipeline's lowest step (:mod:`segensemble.pipeline.runner` builds on it);
:mod:`segensemble.pipeline` re-exports these for the functional front end.
"""

from __future__ import annotations

import inspect

import numpy as np

from segensemble.errors import InputError
from segensemble.pipeline import deferred
from segensemble.segmentation import Segmentation
from segensemble.pipeline.specs import check_segmenter_params, parse_segmenter_list, parse_segmenter_spec
from segensemble.threads import available_cores, thread_map
from segensemble.validation import check_image, check_rng

__all__ = ["segment", "run_segmenters", "run_checked_specs", "available_cores",
           "confidence_map", "hierarchy_confidence"]


def segment(image, method: str = "slic", *, rng=None, **params) -> Segmentation:
    """Run one registered segmenter on an image.

    Parameters
    ----------
    image : (H, W[, C]) array
    method : str, default 'slic'
        A name from ``segensemble.segmenters.available()``.
    rng : None, int or numpy Generator
    **params
        Passed to the segmenter (e.g. ``n_segments=300``).

    Returns
    -------
    Segmentation

    Examples
    --------
    >>> img = np.zeros((16, 16, 3)); img[:, 8:] = 1
    >>> segment(img, "felzenszwalb", scale=50, sigma=0, min_size=4).n_segments
    2
    """
    fn = check_segmenter_params(method, params)
    return fn(image, rng=rng, **params)


def run_segmenters(image, segmenters, *, rng=None, n_jobs: int = 1, on_done=None) -> list[Segmentation]:
    """Run several segmenters on one image.

    Parameters
    ----------
    image : (H, W[, C]) array
    segmenters : str, or sequence of str or (str, dict)
        Names (optionally ``'name:key=value,...'``) or (name, params) pairs;
        one string is read as a comma-separated list (:func:`parse_segmenter_list`).
    rng : None, int or numpy Generator
        Seeds every segmenter deterministically (one child seed each).
    n_jobs : int, default 1
        Segmenters run at once, in threads (-1: one per available core); the
        costliest start first, and a segmenter that takes ``n_jobs`` itself
        (``ucm``) is given that many threads. The results do not depend on it.
    on_done : callable, optional
        Called with each segmenter's name as it finishes (e.g. to show progress).

    Returns
    -------
    list of Segmentation

    Examples
    --------
    >>> img = np.random.default_rng(0).random((24, 24, 3))
    >>> [s.name for s in run_segmenters(img, ["slic:n_segments=4", "felzenszwalb"], rng=0, n_jobs=2)]
    ['slic', 'felzenszwalb']
    """
    img = check_image(image)
    if isinstance(segmenters, str):  # one spec, or a comma-separated list, as on the command line
        segmenters = parse_segmenter_list(segmenters)
    specs = [parse_segmenter_spec(s) if isinstance(s, str) else (s[0], dict(s[1])) for s in segmenters]
    for name, params in specs:  # refuse bad specs before running any
        check_segmenter_params(name, params)
    return run_checked_specs(img, specs, rng=rng, n_jobs=n_jobs, on_done=on_done)


def run_checked_specs(img, specs, *, rng, n_jobs: int = 1, on_done=None) -> list[Segmentation]:
    """:func:`run_segmenters` on an image and ``(name, params)`` specs already checked (a recipe's ``members``).

    Examples
    --------
    >>> img = np.random.default_rng(0).random((24, 24, 3))
    >>> [s.n_segments > 0 for s in run_checked_specs(img, [("slic", {"n_segments": 4})], rng=0)]
    [True]
    """
    if not specs:
        raise InputError("segmenters: expected at least one segmenter, got none")
    workers = min(available_cores(n_jobs), len(specs))
    gen = check_rng(rng)
    seeds = gen.integers(0, 2**31 - 1, size=len(specs))
    registry = deferred.segmenters()
    registry.preload(name for name, _ in specs)  # the members' first imports, before they run in threads

    def run(name, params, seed):
        fn = registry.get(name)
        if workers > 1 and "n_jobs" not in params and "n_jobs" in inspect.signature(fn).parameters:
            params = {**params, "n_jobs": workers}  # its threads help once the other members are done
        seg = fn(img, rng=int(seed), **params)
        if on_done is not None:
            on_done(name)
        return seg

    if workers == 1:
        return [run(name, params, seed) for (name, params), seed in zip(specs, seeds)]
    order = sorted(range(len(specs)), key=lambda i: -registry.cost(specs[i][0]))  # the costliest start first
    done = dict(zip(order, thread_map(lambda i: run(specs[i][0], specs[i][1], seeds[i]), order, workers,
                                      name="member")))
    return [done[i] for i in range(len(specs))]


def confidence_map(estimator, ensemble, kind: str = "max") -> np.ndarray:
    """Per-pixel confidence of a fitted soft consensus, in [0, 1].

    Where the segmenters agree the fused memberships are sharp (confidence
    near 1); where they disagree they spread out.

    Parameters
    ----------
    estimator : fitted consensus estimator with ``memberships_``
        E.g. from ``fuse(..., return_estimator=True)``.
    ensemble : Ensemble
        The ensemble it was fit on (maps atoms back to pixels).
    kind : {'max', 'entropy'}, default 'max'
        Largest membership, or one minus the normalised entropy
        (:func:`segensemble.consensus.confidence`).

    Returns
    -------
    (H, W) float64 array

    Examples
    --------
    >>> a = np.array([[0, 0, 1, 1], [0, 0, 1, 1]])
    >>> b = np.array([[0, 0, 0, 1], [0, 0, 0, 1]])
    >>> from segensemble import Ensemble, consensus
    >>> ens = Ensemble.from_segmentations([a, a, b])
    >>> est = consensus.get("vote_sum")(n_clusters=2).fit(ens)
    >>> confidence_map(est, ens).round(2).tolist()
    [[1.0, 1.0, 0.67, 1.0], [1.0, 1.0, 0.67, 1.0]]
    """
    consensus = deferred.consensus()
    mem = getattr(estimator, "memberships_", None) if estimator.capabilities.soft else None
    if mem is None:
        raise InputError(
            f"confidence: method {type(estimator).__name__} gives no memberships; "
            f"use one of {', '.join(consensus.soft_methods())}"
        )
    return ensemble.to_image(consensus.confidence(mem, kind))


def hierarchy_confidence(levels) -> np.ndarray:
    """Share of the hierarchy's levels in which a pixel lies on a region boundary (a sampled UCM).

    Examples
    --------
    >>> hierarchy_confidence([np.array([[0, 0, 1]]), np.array([[0, 0, 0]])]).tolist()
    [[0.0, 0.5, 0.5]]
    """
    acc = np.zeros(levels[0].shape)
    for lab in levels:
        edge = np.zeros(lab.shape, dtype=bool)
        dx, dy = lab[:, 1:] != lab[:, :-1], lab[1:, :] != lab[:-1, :]
        edge[:, 1:] |= dx
        edge[:, :-1] |= dx
        edge[1:, :] |= dy
        edge[:-1, :] |= dy
        acc += edge
    return acc / len(levels)
