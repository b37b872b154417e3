"""Up-front limits on the dense intermediates of consensus methods.

Most consensus functions work through the sparse incidence matrix H, but
several steps are dense in the number of member clusters (the Gram matrix
HᵀWH of Basic / KCC / MCLA, a member's one-hot memberships in the soft
functions, the overlap matrices of the Hungarian alignment, the Tanimoto
distances of PCE) or cubic in it (eigendecompositions). A member with tens
of thousands of labels (a label map from another tool, a colour PNG read as
one label per colour) would make them allocate tens of gigabytes. Each such
step asks :func:`check_dense` first, so the method refuses with one clear
line naming the size and the methods that scale, before allocating anything.
"""

from __future__ import annotations

from segensemble import limits
from segensemble.errors import InputError

__all__ = ["SCALABLE_METHODS", "OBJECT_SCALABLE_METHODS", "check_dense", "check_eigen"]

#: Methods whose memory is linear in the number of objects and member clusters (named in the errors).
SCALABLE_METHODS = ("hgpa", "kcc", "sccc", "bestofk", "merge")
#: Methods whose memory is linear in the number of objects (named when a pairwise matrix is refused).
OBJECT_SCALABLE_METHODS = ("basic", "kcc", "mcla", "vote", "hbgf", "hgpa", "cspa")


def _advice() -> str:
    return (f"give the members fewer labels (coarser segmentations, or relabel a colour PNG), or use a method "
            f"that scales to many labels: {', '.join(SCALABLE_METHODS)} (bestofk with n_clusters='auto')")


def check_dense(rows: int, cols: int, what: str, *, copies: float = 1.0, pairwise: bool = False,
                advice: str | None = None) -> None:
    """Refuse a dense float64 (rows x cols) intermediate above :data:`segensemble.limits.MEMORY_LIMIT` (``copies``
    working copies).

    ``pairwise``: the matrix is object x object (a co-association), so the
    advice names the methods that work through the incidence matrix instead;
    ``advice``: what to say instead (a step that is not a consensus method).

    Examples
    --------
    >>> check_dense(1000, 1000, "x")
    >>> check_dense(70000, 70000, "one-hot memberships of member 0")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: one-hot memberships of member 0: a dense 70,000 x 70,000 matrix needs about 36.5 GiB, ...
    """
    if not limits.dense_fits(rows, cols, copies=copies):
        if advice is None:
            advice = (f"fewer distinct objects, or a method that works through the incidence matrix: "
                      f"{', '.join(OBJECT_SCALABLE_METHODS)}") if pairwise else _advice()
        raise InputError(f"{what}: a dense {rows:,} x {cols:,} matrix needs about "
                         f"{limits.dense_gib(rows, cols, copies=copies):.1f} GiB, above the limit of "
                         f"{limits.MEMORY_LIMIT / 2**30:.0f} GiB; {advice}")


def check_eigen(d: int, what: str) -> None:
    """Refuse a dense d x d eigendecomposition above :data:`segensemble.limits.EIGEN_LIMIT` (time grows as d³).

    Examples
    --------
    >>> check_eigen(20000, "spectral embedding of the member clusters")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: spectral embedding of the member clusters: a dense eigendecomposition of ...
    """
    if d > limits.EIGEN_LIMIT:
        raise InputError(f"{what}: a dense eigendecomposition of {d:,} member clusters (at most "
                         f"{limits.EIGEN_LIMIT:,}; about {limits.eigen_seconds(d):,.0f} s on one core); {_advice()}")
    check_dense(d, d, what, copies=3)
