"""Evaluation: Berkeley benchmark region and boundary measures, aggregation."""

import importlib
import importlib.util
from typing import TYPE_CHECKING

#: Where each public name lives. The package imports a module when one of its names is first asked for, so that a
#: layer needing one module (the detector needs ``nms``) does not pay for the others (``correspond`` brings SciPy's
#: sparse matrices).
_SOURCES = {
    "aggregate": ("RegionSummary", "collect_regions", "image_region_result"),
    "boundaries": ("seg2bdry",),
    "consistency": ("boundary_displacement_error", "global_consistency_error", "local_consistency_error"),
    "objects_parts": ("objects_and_parts",),
    "projective": ("ensemble_f1", "projective_f1"),
    "stability": ("ensemble_stability", "jaccard_index", "normalized_mutual_information"),
    "regions": ("RegionCounts", "contingency_table", "probabilistic_rand_index", "rand_index", "region_counts",
                "region_scores", "segmentation_covering", "variation_of_information"),
}
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}

if TYPE_CHECKING:  # the same names for type checkers and the import-layer test
    from segensemble.evaluation.aggregate import RegionSummary, collect_regions, image_region_result
    from segensemble.evaluation.boundaries import seg2bdry
    from segensemble.evaluation.consistency import (
        boundary_displacement_error,
        global_consistency_error,
        local_consistency_error,
    )
    from segensemble.evaluation.objects_parts import objects_and_parts
    from segensemble.evaluation.projective import ensemble_f1, projective_f1
    from segensemble.evaluation.stability import ensemble_stability, jaccard_index, normalized_mutual_information
    from segensemble.evaluation.regions import (
        RegionCounts,
        contingency_table,
        probabilistic_rand_index,
        rand_index,
        region_counts,
        region_scores,
        segmentation_covering,
        variation_of_information,
    )

__all__ = [
    "RegionCounts",
    "RegionSummary",
    "collect_regions",
    "boundary_displacement_error",
    "contingency_table",
    "ensemble_f1",
    "ensemble_stability",
    "global_consistency_error",
    "jaccard_index",
    "local_consistency_error",
    "normalized_mutual_information",
    "objects_and_parts",
    "image_region_result",
    "probabilistic_rand_index",
    "projective_f1",
    "rand_index",
    "region_counts",
    "region_scores",
    "seg2bdry",
    "segmentation_covering",
    "variation_of_information",
]


def __getattr__(name):
    module = _MODULE_OF.get(name)
    if module is None:  # a submodule, as ``import segensemble.evaluation`` gave them before
        if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return importlib.import_module(f"{__name__}.{name}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
