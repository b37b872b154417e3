"""Functional front end: segment an image, fuse segmentations."""

from __future__ import annotations

import numpy as np

from segensemble._validation import check_image, check_n_segments
from segensemble.ensemble import Ensemble
from segensemble.errors import InputError
from segensemble.io import MAX_PIXELS, check_pixel_limit
from segensemble.segmentation import Segmentation

__all__ = ["segment", "fuse", "confidence_map", "run_segmenters", "parse_segmenter_spec", "parse_segmenter_list",
           "limit_image_size", "load_image", "check_image_file", "check_segmenter_params", "upscale_labels", "MAX_PIXELS", "DECODE_LIMIT"]

#: Largest image decoded at full size for ``--downscale`` (8-bit: 3 bytes a pixel). JPEG files decode
#: directly at 1/2, 1/4 or 1/8 of their size, so they may declare up to 64 times this.
DECODE_LIMIT = 64_000_000


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


def check_segmenter_params(method: str, params: dict):
    """The registered segmenter ``method``, after checking that it takes every parameter named in ``params``.

    Examples
    --------
    >>> check_segmenter_params("slic", {"foo": 1})
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: params: slic has no parameter 'foo'; expected one of ...
    """
    import inspect

    from segensemble import segmenters

    fn = segmenters.get(method)
    valid = [p for p, v in inspect.signature(fn).parameters.items() if v.kind == v.KEYWORD_ONLY and p != "rng"]
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise InputError(f"params: {method} has no parameter {unknown[0]!r}; expected one of {', '.join(valid)}")
    return fn


def parse_segmenter_spec(spec: str) -> tuple[str, dict]:
    """Parse ``'name'`` or ``'name:key=value,key=value'`` into (name, params).

    Values are read as int, then float, then kept as strings.

    Examples
    --------
    >>> parse_segmenter_spec("felzenszwalb:scale=500,min_size=40")
    ('felzenszwalb', {'scale': 500, 'min_size': 40})
    """
    name, _, rest = spec.strip().partition(":")
    params: dict = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise InputError(f"segmenters: expected 'name:key=value,...', got {spec!r}")
            params[key.strip()] = _parse_value(value.strip())
    return name.strip(), params


def parse_segmenter_list(text: str) -> list[str]:
    """Split a comma-separated list of segmenter specs.

    A comma-separated item holding ``=`` but no ``:`` continues the parameters
    of the previous segmenter, so parameters may be separated by commas too.

    Examples
    --------
    >>> parse_segmenter_list("slic,felzenszwalb:scale=500,min_size=40,slic:n_segments=50")
    ['slic', 'felzenszwalb:scale=500,min_size=40', 'slic:n_segments=50']
    """
    specs: list[str] = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        if "=" in item and ":" not in item:
            if not specs:
                raise InputError(f"segmenters: parameter {item!r} comes before any segmenter name")
            sep = "," if ":" in specs[-1] else ":"
            specs[-1] = f"{specs[-1]}{sep}{item}"
        else:
            specs.append(item)
    if not specs:
        raise InputError(f"segmenters: expected at least one segmenter name, got {text!r}")
    return specs


def _parse_value(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def run_segmenters(image, segmenters, *, rng=None) -> list[Segmentation]:
    """Run several segmenters on one image.

    Parameters
    ----------
    image : (H, W[, C]) array
    segmenters : str, or sequence of str or (str, dict)
        Names (optionally ``'name:key=value,...'``) or (name, params) pairs;
        one string is read as a comma-separated list (:func:`parse_segmenter_list`).
    rng : None, int or numpy Generator
        Seeds every segmenter deterministically (one child seed each).

    Returns
    -------
    list of Segmentation

    Examples
    --------
    >>> img = np.random.default_rng(0).random((24, 24, 3))
    >>> [s.name for s in run_segmenters(img, ["slic:n_segments=4", "felzenszwalb"], rng=0)]
    ['slic', 'felzenszwalb']
    """
    from segensemble._validation import check_random_state

    img = check_image(image)
    if isinstance(segmenters, str):  # one spec, or a comma-separated list, as on the command line
        segmenters = parse_segmenter_list(segmenters)
    specs = [parse_segmenter_spec(s) if isinstance(s, str) else (s[0], dict(s[1])) for s in segmenters]
    if not specs:
        raise InputError("segmenters: expected at least one segmenter, got none")
    gen = check_random_state(rng)
    seeds = gen.integers(0, 2**31 - 1, size=len(specs))
    return [segment(img, name, rng=int(seed), **params) for (name, params), seed in zip(specs, seeds)]


def fuse(
    segmentations,
    method: str = "eac",
    n_segments="auto",
    *,
    image=None,
    random_state=None,
    return_estimator: bool = False,
    agree=False,
    **params,
):
    """Fuse several segmentations of one image into one.

    The segmentations are reduced to atoms (exact, see
    :meth:`Ensemble.from_segmentations`), the registered consensus method is fit
    on them, and the consensus is painted back on the image grid.

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
    random_state : None or int
        Seed of the consensus method, where it is randomised.
    return_estimator : bool, default False
        Also return the fitted estimator and the ensemble (the agreed one with
        ``agree``).
    agree : bool or CAP, default False
        First make the members agree with the Clustering Agreement Process
        (:class:`segensemble.consensus.agreement.CAP`; ``True`` uses its
        defaults, seeded by ``random_state``). Needs ``image`` (visual words).
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
    from segensemble import consensus

    segs = list(segmentations)
    if not segs:
        raise InputError("segmentations: expected at least one segmentation, got none")
    k = check_n_segments(n_segments)
    est = consensus.make(method, k, random_state=random_state, **params)
    ens = Ensemble.from_segmentations(segs, image=image)
    if agree is not False and agree is not None:
        from segensemble.consensus.agreement import CAP

        cap = agree if isinstance(agree, CAP) else CAP(random_state=random_state)
        ens = cap.fit_transform(ens, image=image)
    est.fit(ens)
    labels = ens.to_image(est.labels_)
    if return_estimator:
        return labels, est, ens
    return labels


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
    >>> labels, est, ens = fuse([a, a, b], method="vote_sum", n_segments=2, return_estimator=True)
    >>> confidence_map(est, ens).round(2).tolist()
    [[1.0, 1.0, 0.67, 1.0], [1.0, 1.0, 0.67, 1.0]]
    """
    from segensemble import consensus

    mem = getattr(estimator, "memberships_", None) if estimator.capabilities.soft else None
    if mem is None:
        raise InputError(
            f"confidence: method {type(estimator).__name__} gives no memberships; "
            f"use one of {', '.join(consensus.soft_methods())}"
        )
    return ensemble.to_image(consensus.confidence(mem, kind))


def limit_image_size(image, max_pixels: int = MAX_PIXELS, *, downscale: bool = False, name: str = "image"):
    """Refuse an image above ``max_pixels``, or downscale it to fit.

    Returns
    -------
    image : array
        The image, downscaled (area averaging) when needed and allowed.
    shape : (H, W) or None
        The original shape when it was downscaled (upscale results to it with
        nearest neighbours), else None.

    Examples
    --------
    >>> small, orig = limit_image_size(np.zeros((100, 200, 3)), 5000, downscale=True)
    >>> small.shape[:2], orig
    ((50, 100), (100, 200))
    """
    import cv2

    img = check_image(image)
    h, w = img.shape[:2]
    if h * w <= max_pixels:
        return img, None
    if not downscale:
        check_pixel_limit((h, w), max_pixels, name)
    return cv2.resize(img, _target_size(h, w, max_pixels), interpolation=cv2.INTER_AREA), (h, w)


def _target_size(h: int, w: int, max_pixels: int) -> tuple[int, int]:
    """(width, height) of the downscaled copy: the aspect ratio kept, at most ``max_pixels``."""
    f = (max_pixels / (h * w)) ** 0.5
    return max(1, int(w * f)), max(1, int(h * f))


def check_image_file(path, max_pixels: int = MAX_PIXELS, *, downscale: bool = False):
    """The shape an image file declares and the decoder reduction :func:`load_image` will use; refusals first.

    Reads the header only, so a command can refuse a file before it imports
    or computes anything else.

    Returns
    -------
    shape : (H, W)
    reduce : int
        1, or 2 / 4 / 8 for a JPEG decoded at reduced size with ``downscale``.

    Raises
    ------
    InputError
        Above ``max_pixels`` without ``downscale``; too large to decode even with it.

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.io import write_image
    >>> p = write_image(os.path.join(tempfile.mkdtemp(), "a.png"), np.zeros((100, 200, 3)))
    >>> check_image_file(p, 5000, downscale=True)
    ((100, 200), 1)
    """
    from segensemble.io import image_shape

    h, w = image_shape(path)
    if h * w <= max_pixels:
        return (h, w), 1
    if not downscale:
        check_pixel_limit((h, w), max_pixels, str(path))
    with open(path, "rb") as fh:
        jpeg = fh.read(2) == b"\xff\xd8"
    reduce = max([r for r in (1, 2, 4, 8) if jpeg and h * w >= max_pixels * r * r] or [1])
    if h * w > DECODE_LIMIT * reduce * reduce:
        raise InputError(
            f"{path}: {w}x{h} = {h * w:,} pixels is too large to decode even with --downscale (at most "
            f"{DECODE_LIMIT:,} pixels, JPEG {64 * DECODE_LIMIT:,}); downscale it with an image tool first"
        )
    return (h, w), reduce


def load_image(path, max_pixels: int = MAX_PIXELS, *, downscale: bool = False):
    """Read an image file within a pixel limit, checking the size its header declares before decoding.

    A file above ``max_pixels`` is refused before anything is decoded (a
    decompression bomb never allocates), or with ``downscale`` decoded at
    reduced size (JPEG: directly at 1/2, 1/4 or 1/8 by the decoder; other
    formats: 8-bit at full size, up to :data:`DECODE_LIMIT` pixels) and
    area-averaged down to the limit.

    Returns
    -------
    image : (h, w, 3) float64 array
    shape : (H, W) or None
        The original shape when it was downscaled (upscale results to it
        with :func:`upscale_labels`), else None.

    Raises
    ------
    InputError
        Above the limit without ``downscale``, or too large to decode.

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.io import write_image
    >>> p = write_image(os.path.join(tempfile.mkdtemp(), "a.png"), np.zeros((100, 200, 3)))
    >>> img, orig = load_image(p, 5000, downscale=True)
    >>> img.shape, orig
    ((50, 100, 3), (100, 200))
    """
    import cv2

    from segensemble.io import _decode, read_image

    (h, w), reduce = check_image_file(path, max_pixels, downscale=downscale)
    if h * w <= max_pixels:
        return read_image(path, max_pixels=max_pixels), None
    raw = _decode(path, reduce=reduce)
    small = cv2.resize(raw, _target_size(h, w, max_pixels), interpolation=cv2.INTER_AREA)
    return check_image(small), (h, w)


def upscale_labels(labels, shape) -> np.ndarray:
    """Nearest-neighbour upscaling of a label map to ``shape`` (H, W).

    Examples
    --------
    >>> upscale_labels(np.array([[0, 1]]), (2, 4)).tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1]]
    """
    import cv2

    return cv2.resize(np.asarray(labels, dtype=np.int32), (shape[1], shape[0]),
                      interpolation=cv2.INTER_NEAREST).astype(np.int32)
