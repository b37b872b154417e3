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

from segensemble.ensemble import Ensemble
from segensemble.errors import FileFormatError, InputError
from segensemble.pipeline import confidence_map, fuse, run_segmenters, segment
from segensemble.segmentation import Segmentation

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
