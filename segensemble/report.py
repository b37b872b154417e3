"""Deprecated location of :mod:`segensemble.batch.report` (kept for one release)."""

import warnings

from segensemble.batch.report import *  # noqa: F401,F403
from segensemble.batch import report as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.report moved to segensemble.batch.report; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
