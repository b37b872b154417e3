"""The image pipeline's one deliberate deferral: the layers that import scikit-learn (public: the CLI uses it too).

:mod:`segensemble.consensus` (every estimator is a scikit-learn ``BaseEstimator``), the image-aware frame built on
it (:mod:`segensemble.pipeline.frame`) and :mod:`segensemble.segmenters` (k-means members) import scikit-learn and
SciPy's statistics, about half a second on a laptop core. ``import segensemble``, ``segensemble --help`` and a
recipe's name lookup must not pay it, so the pipeline's modules reach those layers through these functions: the
first call imports, later calls are a dictionary lookup. Every other import of the pipeline is at its module's top.
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
    >>> sorted(frame().check_spatial({}))[:2]
    ['coefficients', 'fine_threshold']
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
