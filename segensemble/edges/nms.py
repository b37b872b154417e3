"""Deprecated location of :mod:`segensemble.evaluation.nms` (kept for one release)."""

import warnings

from segensemble.evaluation.nms import *  # noqa: F401,F403
from segensemble.evaluation import nms as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.edges.nms moved to segensemble.evaluation.nms; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
