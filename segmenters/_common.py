"""Helpers shared by the segmenters: parameter checks, seeds, soft memberships."""

from __future__ import annotations

import numbers

import numpy as np

from segensemble.errors import InputError

__all__ = ["check_positive", "check_choice", "softmax_memberships",
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

