"""The image pipeline's one deliberate deferral: the consensus and segmenter layers (public: the CLI uses it too).

:mod:`segensemble.consensus`, the image-aware frame built on it (:mod:`segensemble.pipeline.frame`) and
:mod:`segensemble.segmenters` are imported by the first recipe that runs, not by ``import segensemble``,
``segensemble --help`` or a recipe's name lookup. They no longer import scikit-learn (the estimators follow its
protocol through :mod:`segensemble.estimator`; k-means members import its clustering when they run), so the first
call costs about 0.05 s; later calls are a dictionary lookup. Every other import of the pipeline is at its module's
top.
"""

from __future__ import annotations

__all__ = ["consensus", "frame", "segmenters"]


def consensus():
    """The :mod:`segensemble.consensus` package, imported on first use.

    Examples
    --------
    >>> consensus().get("vote").__name__
    'Vote'
    """
    import segensemble.consensus as module

    return module


def frame():
    """The image-aware frame :mod:`segensemble.pipeline.frame` (built on the consensus), imported on first use.

    Examples
    --------
    >>> frame().check_spatial({})["threshold"]
    0.45
    """
    import segensemble.pipeline.frame as module

    return module


def segmenters():
    """The :mod:`segensemble.segmenters` package, imported on first use.

    Examples
    --------
    >>> "slic" in segmenters().available()
    True
    """
    import segensemble.segmenters as module

    return module
