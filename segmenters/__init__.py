"""Segmenters: one module per algorithm, registered by name.

Every segmenter is a function ``name(image, *, n_segments=..., rng=None, ...)``
returning a :class:`~segensemble.Segmentation`.

Examples
--------
>>> from segensemble import segmenters
>>> "slic" in segmenters.available()
True
>>> seg = segmenters.get("slic")(np.random.default_rng(0).random((32, 32, 3)), n_segments=4)
>>> seg.labels.shape
(32, 32)
"""

from segensemble.segmenters._registry import REGISTRY

get = REGISTRY.get
available = REGISTRY.available
describe = REGISTRY.describe
register = REGISTRY.register
cost = REGISTRY.cost
preload = REGISTRY.preload

# Importing the modules registers them.
from segensemble.segmenters import felzenszwalb as _felzenszwalb  # noqa: E402,F401
from segensemble.segmenters import chanvese as _chanvese  # noqa: E402,F401
from segensemble.segmenters import graphcut as _graphcut  # noqa: E402,F401
from segensemble.segmenters import kmeans as _kmeans  # noqa: E402,F401
from segensemble.segmenters import meanshift as _meanshift  # noqa: E402,F401
from segensemble.segmenters import ncut as _ncut  # noqa: E402,F401
from segensemble.segmenters import quickshift as _quickshift  # noqa: E402,F401
from segensemble.segmenters import slic as _slic  # noqa: E402,F401
from segensemble.segmenters import ucm as _ucm  # noqa: E402,F401
from segensemble.segmenters import watershed as _watershed  # noqa: E402,F401

__all__ = ["get", "available", "describe", "register"]
