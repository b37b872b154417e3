"""Evaluation: Berkeley benchmark region and boundary measures, aggregation."""

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
