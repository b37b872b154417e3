"""Deprecated location of :mod:`segensemble.pipeline.imagesize` (kept for one release)."""

import warnings

from segensemble.pipeline.imagesize import *  # noqa: F401,F403
from segensemble.pipeline import imagesize as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.imagesize moved to segensemble.pipeline.imagesize; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
