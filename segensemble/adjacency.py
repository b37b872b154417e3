"""Deprecated location of :mod:`segensemble.graph.adjacency` (kept for one release)."""

import warnings

from segensemble.graph.adjacency import *  # noqa: F401,F403
from segensemble.graph import adjacency as _target

__all__ = list(_target.__all__)

warnings.warn(
    "segensemble.adjacency moved to segensemble.graph.adjacency; the old name goes in the next release",
    DeprecationWarning, stacklevel=2)
