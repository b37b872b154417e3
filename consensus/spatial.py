"""Deprecated location of :mod:`segensemble.pipeline.frame` (kept for one release)."""

import warnings

from segensemble.pipeline.frame import *  # noqa: F401,F403
from segensemble.pipeline import frame as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.consensus.spatial moved to segensemble.pipeline.frame; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
