"""Region metrics: hand-worked values, brute force, and the official BSDS numbers."""

from itertools import combinations

import numpy as np
import pytest

from segensemble.evaluation import (
    collect_regions,
    contingency_table,
    image_region_result,
    probabilistic_rand_index,
    rand_index,
    region_counts,
    segmentation_covering,
    variation_of_information,
)
from segensemble.io import read_ground_truth, read_segmentations

IDS = ["2018", "3063", "5096", "6046", "8068"]


def _brute_ri(a, b):
    a, b = a.ravel(), b.ravel()
    agree = [(a[i] == a[j]) == (b[i] == b[j]) for i, j in combinations(range(a.size), 2)]
    return float(np.mean(agree))


def test_rand_index_matches_pairwise_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(5):
        a, b = rng.integers(0, 3, (4, 5)), rng.integers(0, 4, (4, 5))
        assert rand_index(a, b) == pytest.approx(_brute_ri(a, b), abs=1e-12)


def test_voi_hand_worked():
    # a splits 4 pixels in halves, b is one region: H(a)=1, H(b)=0, I=0
    assert variation_of_information(np.array([[0, 0, 1, 1]]), np.zeros((1, 4), int)) == pytest.approx(1.0)
    # independent halves: H=1 each, I=0 -> VOI=2
    assert variation_of_information(np.array([[0, 0, 1, 1]]), np.array([[0, 1, 0, 1]])) == pytest.approx(2.0)
    assert variation_of_information(np.array([[4, 4, 7]]), np.array([[0, 0, 1]])) == 0.0


def test_label_zero_is_an_ordinary_region():
    a = np.array([[0, 0, 1, 1]])
    assert rand_index(a, a + 1) == 1.0
    assert segmentation_covering(a, [a + 1]) == 1.0


def test_covering_hand_worked():
    seg = np.array([[0, 0, 1, 1]])
    gt = np.array([[0, 0, 0, 1]])
    # GT region {0,1,2}: best IoU with seg {0,1} = 2/3, area 3 -> 2; GT {3}: IoU with {2,3} = 1/2 -> 0.5
    assert segmentation_covering(seg, [gt]) == pytest.approx((2 + 0.5) / 4)
    c = region_counts(seg, [gt, gt])
    assert c.sumR == 8 and c.cntR == pytest.approx(5)
    # reverse direction: seg {0,1}: best IoU 2/3 (x2 px), seg {2,3}: best 1/2 (x2 px)
    assert c.cntP == pytest.approx(2 * 2 / 3 + 2 * 0.5) and c.sumP == 4


def test_pri_averages_over_annotations():
    s = np.array([[0, 0, 1, 1]])
    assert probabilistic_rand_index(s, [s, np.zeros_like(s)]) == pytest.approx((1 + 2 / 6) / 2)


def test_contingency_table_and_shape_errors():
    assert contingency_table(np.array([[0, 0, 1]]), np.array([[5, 7, 7]])).tolist() == [[1, 1], [0, 1]]
    from segensemble import InputError

    with pytest.raises(InputError, match="shape"):
        rand_index(np.zeros((2, 3), int), np.zeros((3, 2), int))
    with pytest.raises(InputError, match="at least one"):
        probabilistic_rand_index(np.zeros((2, 3), int), [])


def test_permutation_invariance_of_region_metrics():
    rng = np.random.default_rng(4)
    seg, gt = rng.integers(0, 5, (20, 20)), rng.integers(0, 4, (20, 20))
    perm = rng.permutation(50)
    a, b = region_counts(seg, [gt]), region_counts(perm[seg], [gt])
    assert (a.cntR, a.cntP, a.pri, a.voi) == pytest.approx((b.cntR, b.cntP, b.pri, b.voi))


def _read_table(path):
    return [line.split() for line in path.read_text().splitlines() if line.strip()]


def _fmt(*values):
    return [f"{v:g}" if not isinstance(v, (int, np.integer)) else str(v) for v in values]


def _test_5_results(bsds_bench):
    results = []
    for i in IDS:
        segs = read_segmentations(bsds_bench / "segs" / f"{i}.mat")
        gt = read_ground_truth(bsds_bench / "groundTruth" / f"{i}.mat")
        results.append(image_region_result(np.arange(1, len(segs) + 1), [region_counts(s, gt) for s in segs]))
    return results


def test_official_region_numbers_test_5_reproduced_digit_for_digit(bsds_bench):
    s = collect_regions(_test_5_results(bsds_bench))
    exp = bsds_bench / "test_5"
    assert _read_table(exp / "eval_cover.txt") == [
        _fmt(s.covering_ods_t, s.covering_ods, s.covering_ois, s.covering_best)
    ]
    assert _read_table(exp / "eval_RI_VOI.txt") == [
        _fmt(s.pri_ods_t, s.pri_ods, s.pri_ois, s.voi_ods_t, s.voi_ods, s.voi_ois)
    ]
    assert _read_table(exp / "eval_cover_img.txt") == [
        [str(k + 1)] + _fmt(*row) for k, row in enumerate(s.per_image)
    ]
    assert _read_table(exp / "eval_cover_th.txt") == [_fmt(t, r) for t, r in zip(s.thresholds, s.covering_thr)]
    assert _read_table(exp / "eval_RI_VOI_thr.txt") == [
        _fmt(t, p, v) for t, p, v in zip(s.thresholds, s.pri_thr, s.voi_thr)
    ]


def test_full_precision_differs_only_in_last_digit(bsds_bench):
    results = _test_5_results(bsds_bench)
    exact, official = collect_regions(results, official=False), collect_regions(results)
    assert exact.covering_ods == pytest.approx(official.covering_ods, abs=2e-6)
    assert exact.pri_ods == pytest.approx(official.pri_ods, abs=2e-6)
