"""Deprecated location of :mod:`segensemble.pipeline.postprocess` (kept for one release)."""

import warnings

from segensemble.pipeline.postprocess import *  # noqa: F401,F403
from segensemble.pipeline import postprocess as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.postprocess moved to segensemble.pipeline.postprocess; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
