"""Deprecated location of :mod:`segensemble.pipeline.recipes` (kept for one release)."""

import warnings

from segensemble.pipeline.recipes import *  # noqa: F401,F403
from segensemble.pipeline import recipes as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.recipes moved to segensemble.pipeline.recipes; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
