"""Objects-and-parts F (Pont-Tuset & Marques, CVPR 2013) on hand-worked cases and properties."""

from __future__ import annotations

import numpy as np
import pytest

from segensemble.evaluation import region_counts
from segensemble.evaluation.aggregate import collect_regions, image_region_result
from segensemble.evaluation.objects_parts import _candidates, objects_and_parts, objects_and_parts_summary

HALVES = np.array([[0] * 10 + [1] * 10] * 10)  # annotation: left half A, right half B (100 pixels each)


def test_identical_partition_is_all_objects():
    assert objects_and_parts(HALVES, [HALVES]) == (1.0, 1.0, 1.0)


def test_a_split_region_gives_two_parts_and_full_fragment_recall():
    # A cut into A1 | A2 (50 px each), B kept. Machine: B object; A1, A2 parts (p = 1, r = 0.5): P = (1 + 0.1*2) / 3.
    # Annotation: B object; A is no object and no part (no machine region holds 90% of it); its fragments lie
    # wholly in it, so its degree of over-segmentation is 0.5 + 0.5: R = (1 + 1.0) / 2.
    seg = HALVES.copy()
    seg[:, 5:10] = 2
    f, p, r = objects_and_parts(seg, [HALVES])
    assert p == pytest.approx(1.2 / 3) and r == 1.0
    assert f == pytest.approx(2 * 0.4 / 1.4)


def test_one_region_over_two_halves():
    # Each half is a part of the one region (r = 1, p = 0.5): recall 0.1 * 2 / 2. The region holds both halves
    # (r >= 0.9, p < 0.9): under-segmentation 0.5 + 0.5, precision 1.
    f, p, r = objects_and_parts(np.zeros((10, 20), int), [HALVES])
    assert (p, r) == (1.0, pytest.approx(0.1)) and f == pytest.approx(0.2 / 1.1)


def test_under_segmentation_is_averaged_over_annotations():
    # Two annotations: the halves, and the whole image as one region. One machine region over everything: for
    # the first it is under-segmented (1.0), for the second an object, so it is an object (precision 1);
    # recall: halves are parts (0.1 + 0.1), the whole is an object (1): (1 + 0.2) / 3.
    f, p, r = objects_and_parts(np.zeros((10, 20), int), [HALVES, np.zeros((10, 20), int)])
    assert p == 1.0 and r == pytest.approx(1.2 / 3)


def test_candidates_leave_out_the_last_percent_of_area():
    # Largest first: 0.75 before nothing, 0.245 after 0.75, the 1-pixel region after 0.995 >= 0.99.
    assert _candidates(np.array([1.0, 150.0, 49.0]), 200.0).tolist() == [False, True, True]
    # a 1-pixel speck in a 200-pixel image is not counted: same scores as without it
    seg = HALVES.copy()
    seg[0, 0] = 7
    assert objects_and_parts(seg, [HALVES]) == pytest.approx(objects_and_parts(HALVES, [HALVES]), abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_label_permutation_invariance(seed):
    rng = np.random.default_rng(seed)
    seg = rng.integers(0, 6, (12, 15)).repeat(2, axis=0)
    gts = [rng.integers(0, 4, (12, 15)).repeat(2, axis=0) for _ in range(2)]
    perm = rng.permutation(50)
    assert objects_and_parts(perm[seg], [perm[g] + 3 for g in gts]) == pytest.approx(objects_and_parts(seg, gts))


def test_region_counts_and_dataset_summary_carry_fop():
    seg = HALVES.copy()
    seg[:, 5:10] = 2
    counts = [region_counts(s, [HALVES]) for s in (seg, HALVES)]
    assert (counts[0].fop_precision, counts[0].fop_recall) == pytest.approx((0.4, 1.0))
    summary = collect_regions([image_region_result([0.3, 0.6], counts)])
    fop = summary.to_dict()["fop"]
    assert fop["ods"] == 1.0 and fop["ods_threshold"] == 0.6 and fop["ois"] == 1.0


def test_summary_means_precision_and_recall_before_f():
    s = objects_and_parts_summary([[1.0, 0.5], [0.4, 0.9]], [[0.5, 1.0], [0.4, 0.6]])
    assert s["ods"] == pytest.approx(2 * 0.7 * 0.8 / 1.5) and s["ods_threshold_index"] == 1
    assert (s["ois_precision"], s["ois_recall"]) == pytest.approx((0.95, 0.55))
