"""Boundary maps: a learned boundary detector and non-maximum suppression.

- :func:`detect_boundaries` — soft boundary map of an image from the model
  that ships in the package (gradient-boosted trees on oriented gradients,
  trained on BSDS500 train; ``benchmarks/train_boundary_detector.py``).
- :func:`non_maximum_suppression` — thin any soft boundary map (this
  detector's, or HED/RCF/SE output) before the Berkeley boundary benchmark.
"""

from segensemble.edges.detector import (RECOMMENDED_MODEL, BoundaryModel, boundary_models, detect_boundaries,
                                        load_boundary_model)
from segensemble.evaluation.nms import boundary_normal, non_maximum_suppression

__all__ = ["BoundaryModel", "RECOMMENDED_MODEL", "boundary_models", "detect_boundaries",
           "load_boundary_model", "boundary_normal", "non_maximum_suppression"]
