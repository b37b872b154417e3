"""Deprecated location of :mod:`segensemble.pipeline.runner` (kept for one release)."""

import warnings

from segensemble.pipeline.runner import *  # noqa: F401,F403
from segensemble.pipeline import runner as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.runner moved to segensemble.pipeline.runner; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
