"""Helpers shared by the segmenters: parameter checks, seeds, soft memberships."""

from __future__ import annotations

import numbers

import numpy as np

from segensemble import limits
from segensemble.errors import InputError

__all__ = ["check_positive", "check_choice", "check_dense_per_pixel", "check_eigen_size", "softmax_memberships",
           "seed_of", "fit_kmeans"]


def check_positive(value, name: str, *, allow_zero: bool = False) -> float:
    """A finite positive (or non-negative) float parameter."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise InputError(f"{name}: expected a number, got {value!r}")
    v = float(value)
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise InputError(f"{name}: expected a {'non-negative' if allow_zero else 'positive'} number, got {value!r}")
    return v


def check_choice(value, name: str, choices) -> str:
    """One of a fixed set of strings."""
    if value not in choices:
        raise InputError(f"{name}: expected one of {', '.join(map(str, choices))}, got {value!r}")
    return value


def check_dense_per_pixel(n_pixels: int, k: int, what: str, *, copies: float) -> None:
    """Refuse ``n_segments`` = ``k`` when the segmenter's dense (pixels x k) float64 arrays (``copies`` of them
    at once) would exceed :data:`segensemble.limits.MEMORY_LIMIT`, before any is allocated.

    A segmenter with soft memberships holds a column per region for every
    pixel: a hundred thousand regions of a 0.15-megapixel image are 115 GiB,
    and the process would be killed by the system without a word.

    Examples
    --------
    >>> check_dense_per_pixel(154401, 10, "k-means memberships", copies=4)
    >>> check_dense_per_pixel(154401, 100000, "k-means memberships", copies=4)
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: n_segments: expected at most 434 on an image of 154,401 pixels, or a smaller ...
    """
    if limits.dense_fits(n_pixels, k, copies=copies):
        return
    most = int(limits.MEMORY_LIMIT // (8 * n_pixels * copies))
    expected = f"at most {most:,} on an image of {n_pixels:,} pixels, or a smaller image" if most >= 1 else \
        f"a smaller image than {n_pixels:,} pixels"
    raise InputError(f"n_segments: expected {expected} ({what} for {k:,} regions need about "
                     f"{limits.dense_gib(n_pixels, k, copies=copies):.1f} GiB, above the limit of "
                     f"{limits.MEMORY_LIMIT / 2**30:.0f} GiB), got {k}")


def check_eigen_size(d: int, name: str, what: str) -> None:
    """Refuse a dense d x d eigenproblem above :data:`segensemble.limits.EIGEN_LIMIT` (its time grows as d³), naming
    the parameter ``name`` that sets d.

    Examples
    --------
    >>> check_eigen_size(20000, "n_segments", "normalized cuts solves a dense eigenproblem over the superpixels")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: n_segments: expected at most 8,000 (normalized cuts solves a dense eigenproblem ...
    """
    if d > limits.EIGEN_LIMIT:
        raise InputError(f"{name}: expected at most {limits.EIGEN_LIMIT:,} ({what}, about "
                         f"{limits.eigen_seconds(d):,.0f} s on one core for {d:,}), got {d}")


def seed_of(gen: np.random.Generator) -> int:
    """An int seed for libraries that take one (scikit-learn, scikit-image)."""
    return int(gen.integers(0, 2**31 - 1))


def fit_kmeans(X: np.ndarray, k: int, gen: np.random.Generator):
    """scikit-learn's ``KMeans(n_clusters=k, n_init=2)`` fitted on the rows of ``X``, seeded from ``gen``.

    scikit-learn's clustering module is imported here, on the first k-means member, not when the segmenters are
    registered: a recipe without one (every built-in ``default``) does not pay for it.

    Examples
    --------
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> sorted(fit_kmeans(X, 2, np.random.default_rng(0)).cluster_centers_.ravel().round(2).tolist())
    [0.05, 5.05]
    """
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, n_init=2, random_state=seed_of(gen)).fit(X)


def softmax_memberships(cost: np.ndarray, temperature: float) -> np.ndarray:
    """Row-wise softmax of ``-cost / temperature`` (float32 rows summing to 1).

    Examples
    --------
    >>> softmax_memberships(np.array([[0.0, np.log(3.0)]]), 1.0).round(3).tolist()
    [[0.75, 0.25]]
    """
    z = -cost / max(float(temperature), 1e-12)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)

