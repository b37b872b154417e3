"""Deprecated location of :mod:`segensemble.batch.score` (kept for one release)."""

import warnings

from segensemble.batch.score import *  # noqa: F401,F403
from segensemble.batch import score as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.score moved to segensemble.batch.score; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
