"""What :func:`segensemble.pipeline.runner.run_recipe` returns for one image."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from segensemble.pipeline.imagesize import upscale_labels

__all__ = ["FusionResult"]


@dataclass
class FusionResult:
    """Everything :func:`run_recipe` made for one image.

    Attributes
    ----------
    labels : (H, W) int32 array
        The fused, post-processed segmentation at the input's size.
    members : list of Segmentation
        The ensemble's members, at the size that was processed.
    ensemble : Ensemble
        The objects the consensus method saw: the atoms (the agreed ensemble
        after CAP), or in the image-aware frame the superatoms.
    estimator : fitted consensus estimator
    recipe : Recipe
        The recipe that was applied (with any overrides).
    levels : list of (H, W) int32 arrays or None
        The hierarchy (``hierarchy=True``): post-processed segmentations,
        coarser with each level, at the input's size.
    confidence : (H, W) float array or None
        Per-pixel confidence in [0, 1] at the input's size (``confidence=``).
    confidence_kind : str or None
        'max' or 'entropy' (memberships), or 'hierarchy' (boundary persistence).
    downscaled_from : (H, W) or None
        The input's shape when it was processed at a smaller size: at the
        recipe's working scale (``working_pixels``), or above ``max_pixels``
        with ``downscale=True``. ``labels``, ``levels`` and ``confidence``
        are at this shape; ``members`` and ``image`` at the processed size.
    image : (h, w, 3) float array or None
        The processed image (brightened by ``exposure_gain``).
    working_pixels, processed_labels : int or None, (h, w) int32 array
        The recipe's working scale (None when none applies: no scale, or
        the members were given), and ``labels`` at the processed size.
    fusion : SpatialFusion or None
        The image-aware frame's record (superatoms, the method's own
        partition, the final hierarchy) when the method ran in it.
    exposure_gain : float
        The gain the recipe's ``exposure`` applied to a dark image
        (:mod:`segensemble.pipeline.exposure`); 1.0 when none was.
    colourless : bool
        True when the picture had no colour and was cut at the recipe's
        ``colourless_threshold`` (:func:`segensemble.pipeline.colourless.cuts_colourless`).
    """

    labels: np.ndarray
    members: list
    ensemble: object
    estimator: object
    recipe: object
    levels: list | None = None
    confidence: np.ndarray | None = None
    confidence_kind: str | None = None
    downscaled_from: tuple | None = None
    image: np.ndarray | None = field(default=None, repr=False)
    fusion: object = field(default=None, repr=False)
    working_pixels: int | None = None
    processed_labels: np.ndarray | None = field(default=None, repr=False)
    exposure_gain: float = 1.0
    colourless: bool = False

    def at_input_size(self, labels) -> np.ndarray:
        """A label map of the processed size, upscaled (nearest neighbour) to the input's size when downscaled."""
        return labels if self.downscaled_from is None else upscale_labels(labels, self.downscaled_from)
