"""Deprecated location of :mod:`segensemble.graph.adjacency` (kept for one release)."""

import warnings

from segensemble.graph.adjacency import *  # noqa: F401,F403
from segensemble.graph.adjacency import __all__  # noqa: F401

warnings.warn("segensemble.adjacency moved to segensemble.graph.adjacency; the old name goes in the next release",
              DeprecationWarning, stacklevel=2)
