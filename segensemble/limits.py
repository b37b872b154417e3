"""Up-front limits on dense intermediates: how large an array a step may allocate before it refuses instead.

A segmenter asked for a hundred thousand regions, or a consensus method given
members with tens of thousands of labels, would allocate dense arrays of
tens or hundreds of gigabytes — and be stopped by the operating system with
no word. Each such step compares the size first (:func:`dense_fits`) and
refuses with one line naming the parameter, what it would need and what to
do instead (the segmenters: which ``n_segments`` fits; the consensus
methods: which methods scale).
"""

from __future__ import annotations

__all__ = ["MEMORY_LIMIT", "EIGEN_LIMIT", "dense_fits", "dense_gib", "eigen_seconds"]

#: Bytes that one dense intermediate (with its working copies) may take.
MEMORY_LIMIT = 2 * 1024**3
#: Largest dense symmetric eigenproblem solved (measured: d = 8 000 takes about 30 s on one core).
EIGEN_LIMIT = 8000


def dense_fits(rows: int, cols: int, *, copies: float = 1.0) -> bool:
    """Whether a dense float64 (rows x cols) intermediate with ``copies`` working copies is within
    :data:`MEMORY_LIMIT`.

    Examples
    --------
    >>> dense_fits(1000, 1000), dense_fits(70000, 70000)
    (True, False)
    """
    return 8.0 * rows * cols * copies <= MEMORY_LIMIT


def dense_gib(rows: int, cols: int, *, copies: float = 1.0) -> float:
    """GiB that a dense float64 (rows x cols) intermediate with ``copies`` working copies takes.

    Examples
    --------
    >>> round(dense_gib(70000, 70000), 2)
    36.51
    """
    return 8.0 * rows * cols * copies / 2**30


def eigen_seconds(d: int) -> float:
    """About how long a dense d x d symmetric eigendecomposition takes on one core (30 s at :data:`EIGEN_LIMIT`,
    growing as d³).

    Examples
    --------
    >>> eigen_seconds(8000), eigen_seconds(16000)
    (30.0, 240.0)
    """
    return 30 * (d / 8000) ** 3
