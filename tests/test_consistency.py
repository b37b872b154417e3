"""GCE, LCE and BDE: hand-worked cases, brute force from the definitions, invariances, benchmark plumbing."""

import numpy as np
import pytest

from segensemble.evaluation import (
    boundary_displacement_error,
    global_consistency_error,
    local_consistency_error,
    region_scores,
)
from segensemble.evaluation.consistency import label_boundary

COLUMNS = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 1]])  # regions of 6 and 3 pixels
ROWS = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 1]])


def _brute_consistency(a, b):
    """GCE and LCE straight from Martin et al.'s per-pixel refinement error."""
    a, b = a.ravel(), b.ravel()
    e12 = np.array([np.sum((a == a[i]) & (b != b[i])) / np.sum(a == a[i]) for i in range(a.size)])
    e21 = np.array([np.sum((b == b[i]) & (a != a[i])) / np.sum(b == b[i]) for i in range(a.size)])
    return min(e12.sum(), e21.sum()) / a.size, np.minimum(e12, e21).sum() / a.size


def _brute_bde(a, b):
    pa, pb = np.argwhere(label_boundary(a)), np.argwhere(label_boundary(b))
    d = np.sqrt(((pa[:, None, :] - pb[None, :, :]) ** 2).sum(-1))
    return 0.5 * (d.min(axis=1).mean() + d.min(axis=0).mean())


def test_consistency_errors_hand_worked_3x3():
    # cells (A,C)=4, (A,D)=2, (B,C)=2, (B,D)=1; E12 = 1/3, 2/3, 1/3, 2/3; E21 = 1/3, 1/3, 2/3, 2/3
    assert global_consistency_error(COLUMNS, [ROWS]) == pytest.approx(4 / 9)  # both sums are 4
    assert local_consistency_error(COLUMNS, [ROWS]) == pytest.approx(10 / 27)  # (4 + 2 + 2 + 2) / 3 / 9
    # a refinement of the other map has no error in either direction of the min
    assert global_consistency_error(np.zeros((3, 3), int), [ROWS]) == 0.0
    assert local_consistency_error(COLUMNS * 2 + ROWS, [ROWS]) == 0.0


def test_bde_of_a_shifted_boundary_is_the_shift_minus_a_half():
    a = np.zeros((6, 12), int)
    a[:, 5:] = 1
    for k in range(0, 5):
        b = np.zeros_like(a)
        b[:, 5 + k:] = 1
        # boundary columns {4, 5} against {4 + k, 5 + k}: distances k and k - 1 in both directions
        assert boundary_displacement_error(a, [b]) == pytest.approx(max(k - 0.5, 0.0), abs=1e-6)


def test_single_region_has_the_image_frame_as_boundary():
    one = np.zeros((5, 5), int)
    centre = one.copy()
    centre[2, 2] = 1  # central differences: its 4 neighbours are boundary pixels, the lone pixel itself is not
    assert np.argwhere(label_boundary(centre)).tolist() == [[1, 2], [2, 1], [2, 3], [3, 2]]
    assert boundary_displacement_error(one, [one]) == 0.0
    assert boundary_displacement_error(one, [centre]) > 0


def test_match_brute_force_on_random_maps():
    rng = np.random.default_rng(3)
    for _ in range(12):
        a, b = rng.integers(0, 3, (5, 7)), rng.integers(0, 4, (5, 7))
        gce, lce = _brute_consistency(a, b)
        assert global_consistency_error(a, [b]) == pytest.approx(gce, abs=1e-12)
        assert local_consistency_error(a, [b]) == pytest.approx(lce, abs=1e-12)
        assert boundary_displacement_error(a, [b]) == pytest.approx(_brute_bde(a, b), abs=1e-5)


def test_properties_permutation_symmetry_and_annotator_average():
    rng = np.random.default_rng(4)
    a, b, c = rng.integers(0, 4, (8, 9)), rng.integers(0, 3, (8, 9)), rng.integers(0, 5, (8, 9))
    perm = np.array([7, 2, 9, 4, 1])
    for f in (global_consistency_error, local_consistency_error, boundary_displacement_error):
        assert f(perm[a], [perm[b]]) == pytest.approx(f(a, [b]), abs=1e-9)
        assert f(a, [b]) == pytest.approx(f(b, [a]), abs=1e-9)
        assert f(a, [b, c]) == pytest.approx((f(a, [b]) + f(a, [c])) / 2, abs=1e-9)
        assert f(a, [a]) == 0.0
    assert local_consistency_error(a, [b]) <= global_consistency_error(a, [b]) + 1e-12


def test_region_scores_and_benchmark_report_them():
    from segensemble.evaluation.aggregate import collect_regions
    from segensemble.evaluation.benchmark import MachineResult, evaluate_image
    from segensemble.io import GroundTruth
    from segensemble.evaluation import seg2bdry

    a = np.zeros((10, 12), int)
    a[:, 6:] = 1
    b = np.zeros_like(a)
    b[:, 8:] = 1
    s = region_scores(a, [b])
    assert (s["gce"], s["bde"]) == (pytest.approx(global_consistency_error(a, [b])), pytest.approx(1.5, abs=1e-6))
    ev = evaluate_image(MachineResult("segs", [b, a]), GroundTruth([b], [seg2bdry(b)]))
    assert ev.scores(0)["bde"] == 0.0 and ev.scores(1)["bde"] == pytest.approx(1.5, abs=1e-6)
    summary = collect_regions([ev.region]).to_dict()
    assert summary["bde"] == {"ods": 0.0, "ods_threshold": 1.0, "ois": 0.0}
    assert summary["gce"]["ods"] == 0.0 and "lce" in summary


def test_inputs_are_validated():
    from segensemble.errors import InputError

    with pytest.raises(InputError, match="gts\\[0\\]: expected the shape"):
        boundary_displacement_error(np.zeros((3, 3), int), [np.zeros((3, 4), int)])
    with pytest.raises(InputError, match="gts"):
        global_consistency_error(np.zeros((3, 3), int), [])


def test_one_ground_truth_scored_against_many_results_has_its_distances_computed_once(monkeypatch):
    """The ground truth's boundary distances are remembered by content: the bench scores nine segmentations of an
    image against one ground truth; a new ground truth (or one changed in place) is computed afresh."""
    import segensemble.evaluation.benchmark as benchmark
    from segensemble.io import GroundTruth
    from segensemble.evaluation import seg2bdry

    calls, real = [], benchmark.boundary_maps
    monkeypatch.setattr(benchmark, "boundary_maps", lambda segs: calls.append(1) or real(segs))
    benchmark._GT_MAPS.clear()
    gt_seg = np.zeros((10, 12), int)
    gt_seg[:, 5:] = 1
    gt = GroundTruth([gt_seg], [seg2bdry(gt_seg)])
    scores = [benchmark.evaluate_image(benchmark.MachineResult("segs", [s]), gt).scores(0)["bde"]
              for s in (np.arange(120).reshape(10, 12) // 40, gt_seg, 1 - gt_seg)]
    assert len(calls) == 1 and scores[1] == scores[2] == 0.0
    gt_seg[:, 4] = 1  # in place: another ground truth
    assert benchmark.evaluate_image(benchmark.MachineResult("segs", [gt_seg]), GroundTruth([gt_seg], [seg2bdry(
        gt_seg)])).scores(0)["bde"] == 0.0 and len(calls) == 2
