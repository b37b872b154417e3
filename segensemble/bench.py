"""Deprecated location of :mod:`segensemble.batch.bench` (kept for one release)."""

import warnings

from segensemble.batch.bench import *  # noqa: F401,F403
from segensemble.batch import bench as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.bench moved to segensemble.batch.bench; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
