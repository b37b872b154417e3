"""Deprecated location of :mod:`segensemble.batch.compare` (kept for one release)."""

import warnings

from segensemble.batch.compare import *  # noqa: F401,F403
from segensemble.batch import compare as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.compare moved to segensemble.batch.compare; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
