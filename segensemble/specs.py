"""Deprecated location of :mod:`segensemble.pipeline.specs` (kept for one release)."""

import warnings

from segensemble.pipeline.specs import *  # noqa: F401,F403
from segensemble.pipeline import specs as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.specs moved to segensemble.pipeline.specs; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
