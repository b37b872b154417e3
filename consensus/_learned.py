"""The learned merge criterion of boundary merging: the pair features of two adjacent regions, their logistic
probability of a ground-truth boundary, and the merges it gives (see
:class:`segensemble.consensus.merging.BoundaryMerge`, whose module re-exports every name here)."""

from __future__ import annotations

from numbers import Real

import numpy as np

from segensemble.errors import InputError
from segensemble.graph.merger import LEARNED_FEATURES, LEARNED_SCALES, RegionMerger

__all__ = ["PAIR_FEATURES", "LEARNED_COEFFICIENTS", "pair_features", "pair_features_many", "boundary_probability",
           "learned_key", "learned_merges", "check_coefficients"]

#: What the learned criterion sees of two adjacent regions (see :func:`pair_features`).
PAIR_FEATURES = LEARNED_FEATURES

#: Logistic coefficients of the learned criterion for an unweighted member vote, fitted on the
#: 200 BSDS500 train images only by ``benchmarks/train_merge_model.py``.
LEARNED_COEFFICIENTS = {
    "vote": 3.251, "gradient": 1.545, "colour": 1.508, "texture": 0.601, "size": 2.233, "length": -0.499,
    "bias": -3.973,
}

#: Feature scales (:data:`segensemble.graph.merger.LEARNED_SCALES`, which the compiled walk reads too).
_COLOUR_SCALE, _TEXTURE_SCALE, _CAP = (LEARNED_SCALES[k] for k in ("colour_scale", "texture_scale", "cap"))


def pair_features(merger: RegionMerger, u: int, v: int) -> np.ndarray:
    """The :data:`PAIR_FEATURES` of two adjacent regions of a merger built by
    :class:`~segensemble.consensus.merging.BoundaryMerge`.

    ``vote`` and ``gradient`` are means along the shared border (border
    quantities 0 and 1); ``colour`` and ``texture`` the distances between
    the regions' mean Lab colour (region sums 0-2, over 50) and mean
    standardised texture energy (the remaining sums, over 2.5), capped at 2;
    ``size`` is ``log10(smaller size / image size) / 4 + 1`` and ``length``
    ``log10(border length) / 3``.

    Examples
    --------
    >>> m = RegionMerger(2, np.array([[0, 1]]), np.array([10.0]), np.array([[1.0, 0.5]]), sizes=np.array([100, 900]),
    ...                  region_sums=np.zeros((2, 9)))
    >>> pair_features(m, 0, 1).round(3).tolist()
    [1.0, 0.5, 0.0, 0.0, 0.75, 0.333]
    """
    su, sv = merger.size[u], merger.size[v]
    d = merger.region_mean(u) - merger.region_mean(v)
    return np.array([
        *merger.border_mean(u, v)[:2],
        min(np.sqrt(d[:3] @ d[:3]) / _COLOUR_SCALE, _CAP),
        min(np.sqrt(d[3:] @ d[3:]) / _TEXTURE_SCALE, _CAP),
        np.log10(min(su, sv) / merger.total) / 4 + 1,
        np.log10(merger.border_length(u, v)) / 3,
    ])


def pair_features_many(merger: RegionMerger, u: int, vs) -> np.ndarray:
    """:func:`pair_features` of region ``u`` with each region of the int array ``vs`` at once, (len(vs), 6).

    ``u`` may also be an int array, one region per entry of ``vs`` (any set of adjacent pairs).

    The same quantities computed as arrays (equal to :func:`pair_features` up to rounding); the image-aware frame
    keys its merges with it.

    Examples
    --------
    >>> m = RegionMerger(2, np.array([[0, 1]]), np.array([10.0]), np.array([[1.0, 0.5]]), sizes=np.array([100, 900]),
    ...                  region_sums=np.zeros((2, 9)))
    >>> pair_features_many(m, 0, np.array([1])).round(3).tolist()
    [[1.0, 0.5, 0.0, 0.0, 0.75, 0.333]]
    """
    vs = np.asarray(vs, dtype=np.int64)
    d = merger.means[u] - merger.means[vs]
    acc = merger.border_sums(u, vs)
    out = np.empty((len(vs), len(PAIR_FEATURES)))
    np.divide(acc[:, 1:3], acc[:, :1], out=out[:, :2])
    out[:, 2] = np.minimum(np.sqrt(np.einsum("ij,ij->i", d[:, :3], d[:, :3])) / _COLOUR_SCALE, _CAP)
    out[:, 3] = np.minimum(np.sqrt(np.einsum("ij,ij->i", d[:, 3:], d[:, 3:])) / _TEXTURE_SCALE, _CAP)
    out[:, 4] = np.log10(np.minimum(merger.size[u], merger.size[vs]) / merger.total) / 4 + 1
    out[:, 5] = np.log10(acc[:, 0]) / 3
    return out


def boundary_probability(features, coefficients):
    """Logistic probability that a border separates two ground-truth segments.

    ``features``: one row of :data:`PAIR_FEATURES` (a float is returned) or an (n, 6) array (n probabilities).

    Examples
    --------
    >>> round(boundary_probability(np.zeros(6), LEARNED_COEFFICIENTS), 3)
    0.018
    """
    f = np.asarray(features, dtype=np.float64)
    if f.ndim == 2:
        z = coefficients["bias"] + f @ np.array([coefficients[k] for k in PAIR_FEATURES])
        return 1.0 / (1.0 + np.exp(-z))
    z = coefficients["bias"] + sum(coefficients[k] * x for k, x in zip(PAIR_FEATURES, f))
    return float(1.0 / (1.0 + np.exp(-z)))


def learned_key(coefficients, partition_weight: float = 0.0):
    """Batched learned merge key: :func:`boundary_probability` of :func:`pair_features_many` (coefficients read once),
    plus ``partition_weight`` times the mean of border quantity 2 (a partition's separation) when it is not 0.

    Examples
    --------
    >>> m = RegionMerger(2, np.array([[0, 1]]), np.array([10.0]), np.array([[1.0, 0.5]]), sizes=np.array([100, 900]),
    ...                  region_sums=np.zeros((2, 9)))
    >>> key, c = learned_key(LEARNED_COEFFICIENTS), LEARNED_COEFFICIENTS
    >>> bool(np.isclose(key(m, 0, np.array([1]))[0], boundary_probability(pair_features(m, 0, 1), c)))
    True
    """
    bias, w, pw = coefficients["bias"], np.array([coefficients[k] for k in PAIR_FEATURES]), float(partition_weight)

    def key(merger, u, vs):
        z = bias + pair_features_many(merger, u, vs) @ w
        p = 1.0 / (1.0 + np.exp(-z))
        return p if pw == 0 else p + pw * merger.border_means(u, vs)[:, 2]

    return key


def learned_merges(merger: RegionMerger, coefficients, *, engine: str = "numpy", partition_weight: float = 0.0,
                   min_size: float = 0):
    """Merges and heights of a merger built like :func:`~segensemble.consensus.merging.region_merger`, by
    :func:`learned_key`.

    ``engine='numpy'``: the batched Python walk with NumPy's keys (bit-identical to every release);
    ``'compiled'``: :meth:`~segensemble.graph.merger.RegionMerger.run_learned`, the same merges about twenty times
    faster, keys equal to a few ulps (two borders within 1e-15 of each other may merge in the other order).
    """
    if engine == "compiled":
        return merger.run_learned(coefficients, partition_weight=partition_weight, min_size=min_size)
    return merger.run(learned_key(coefficients, partition_weight), min_size=min_size, batched=True)


def check_coefficients(coefficients) -> dict:
    """The learned criterion's coefficients checked (one finite number per pair feature and the bias); None:
    the defaults fitted on BSDS500 train.

    Examples
    --------
    >>> check_coefficients(None) is LEARNED_COEFFICIENTS
    True
    >>> check_coefficients({"vote": 1})
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: coefficients: expected exactly the keys [...], got ['vote']
    """
    if coefficients is None:
        return LEARNED_COEFFICIENTS
    if not isinstance(coefficients, dict):
        raise InputError(f"coefficients: expected a mapping of {PAIR_FEATURES + ('bias',)} to numbers, got "
                         f"{type(coefficients).__name__}")
    want = set(PAIR_FEATURES) | {"bias"}
    if set(coefficients) != want:
        raise InputError(f"coefficients: expected exactly the keys {sorted(want)}, got {sorted(coefficients)}")
    out = {}
    for k, v in coefficients.items():
        if isinstance(v, bool) or not isinstance(v, Real) or not np.isfinite(v):
            raise InputError(f"coefficients: {k!r} must be a finite number, got {v!r}")
        out[k] = float(v)
    return out
