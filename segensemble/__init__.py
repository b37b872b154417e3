"""segensemble: fuse image segmentations with consensus clustering.

Several classical segmenters label the same image; consensus-clustering
functions fuse their labellings; the Berkeley (BSDS500) benchmark scores the
result.

Examples
--------
>>> import numpy as np, segensemble
>>> img = np.zeros((24, 24, 3)); img[:, 12:] = 1
>>> segs = segensemble.run_segmenters(img, ["slic:n_segments=4", "felzenszwalb:scale=50"])
>>> fused = segensemble.fuse(segs, method="eac", n_segments=2)
>>> fused.shape, int(fused.max()) + 1
((24, 24), 2)
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING

from segensemble.errors import FileFormatError, InputError

#: Public names imported on first use, and where they live: ``import segensemble`` (and so every CLI start-up)
#: does not import NumPy, SciPy, OpenCV or scikit-image until they are asked for (scikit-image's lazy-loading
#: convention, PEP 562, written out for six names).
_LAZY = {"Ensemble": "segensemble.ensemble", "Segmentation": "segensemble.segmentation",
         "confidence_map": "segensemble.pipeline", "fuse": "segensemble.pipeline",
         "run_segmenters": "segensemble.pipeline", "segment": "segensemble.pipeline"}

if TYPE_CHECKING:  # the same names for type checkers and the import-layer test
    from segensemble.ensemble import Ensemble
    from segensemble.pipeline import confidence_map, fuse, run_segmenters, segment
    from segensemble.segmentation import Segmentation


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'segensemble' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "Ensemble",
    "FileFormatError",
    "InputError",
    "Segmentation",
    "__version__",
    "confidence_map",
    "fuse",
    "run_segmenters",
    "segment",
]
