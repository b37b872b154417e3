"""The command line's one deliberate deferral: the numeric layers, imported by the command that runs.

``segensemble --version``, ``--help`` and every ``COMMAND --help`` import only Typer, Rich, NumPy and the base
modules; SciPy, OpenCV, scikit-image and scikit-learn (what the layers below import, most of a second) are paid
by the command that uses them, when it runs. Each function imports its layer on the first call; later calls are a
dictionary lookup. Every other import of the CLI is at its module's top.
"""

from __future__ import annotations

__all__ = ["batch", "datasets", "edges", "evaluation", "io", "pipeline"]


def io():
    """:mod:`segensemble.io` (readers and writers).

    Examples
    --------
    >>> io().MAX_PIXELS
    100000000
    """
    import segensemble.io as module

    return module


def pipeline():
    """:mod:`segensemble.pipeline` with its modules (``runner``, ``recipes``, ``specs``, ``imagesize``, ``workscale``,
    and ``deferred`` for the consensus and the segmenters).

    Examples
    --------
    >>> pipeline().recipes.load_recipe("default@5").version
    '5'
    """
    import segensemble.pipeline as module
    import segensemble.pipeline.deferred  # noqa: F401

    return module


def evaluation():
    """:mod:`segensemble.evaluation` with ``aggregate``, ``benchmark``, ``correspond`` and ``plot``.

    Examples
    --------
    >>> evaluation().correspond.check_max_dist(0.0075)
    0.0075
    """
    import segensemble.evaluation as module
    import segensemble.evaluation.aggregate  # noqa: F401
    import segensemble.evaluation.benchmark  # noqa: F401
    import segensemble.evaluation.correspond  # noqa: F401
    import segensemble.evaluation.plot  # noqa: F401

    return module


def edges():
    """:mod:`segensemble.edges` with ``ucm`` (the boundary hierarchy).

    Examples
    --------
    >>> edges().ucm.UCM_MIN_SIZE
    100
    """
    import segensemble.edges as module
    import segensemble.edges.ucm  # noqa: F401

    return module


def batch(part: str):
    """``segensemble.batch.<part>`` alone: ``bench``, ``score``, ``compare``, ``report`` or ``photos``.

    A command imports the part it runs and not its siblings (``fuse`` needs ``photos``, not the dataset bench).

    Examples
    --------
    >>> batch("photos").__name__
    'segensemble.batch.photos'
    """
    if part == "bench":
        import segensemble.batch.bench as module
    elif part == "score":
        import segensemble.batch.score as module
    elif part == "compare":
        import segensemble.batch.compare as module
    elif part == "report":
        import segensemble.batch.report as module
    elif part == "photos":
        import segensemble.batch.photos as module
    else:
        raise ValueError(f"part: expected bench, score, compare, report or photos, got {part!r}")
    return module


def datasets():
    """:mod:`segensemble.datasets` (BSDS500 and its download).

    Examples
    --------
    >>> datasets().fetch.DEFAULT_URL.startswith("http")
    True
    """
    import segensemble.datasets as module
    import segensemble.datasets.fetch  # noqa: F401

    return module
