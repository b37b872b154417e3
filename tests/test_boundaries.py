"""Boundary benchmark: seg2bdry, thinning, exact correspondence, aggregation."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import maximum_bipartite_matching

from segensemble.evaluation.aggregate import average_precision, fmeasure, interpolated_max_f
from segensemble.evaluation.boundaries import boundary_counts, ground_truth_boundaries, seg2bdry
from segensemble.evaluation.correspond import candidate_edges, correspond_pixels, match_radius
from segensemble.io import read_ground_truth


def test_seg2bdry_hand_worked_double_size():
    seg = np.array([[0, 1], [0, 1]])
    d = seg2bdry(seg, "doubleSize").astype(int)
    assert d.shape == (5, 5)
    assert d[:, 2].tolist() == [1, 1, 1, 1, 1]  # the vertical edge between the columns, frame copied
    assert d[:, [0, 1, 3, 4]].sum() == 0
    assert seg2bdry(seg).astype(int).tolist() == [[1, 0], [1, 0]]  # the pixel left of the edge


def test_thinned_seg2bdry_reproduces_bsds_ground_truth_boundaries(bsds_root):
    """BSDS500 ships Boundaries = thin(seg2bdry(Segmentation)); both must match exactly."""
    files = sorted((bsds_root / "data" / "groundTruth" / "val").glob("*.mat"))[:15]
    n = 0
    for f in files:
        gt = read_ground_truth(f)
        for seg, bd in zip(gt.segmentations, gt.boundaries):
            assert np.array_equal(ground_truth_boundaries(seg), bd), f.name
            n += 1
    assert n >= 60


def _brute_force_cost(b1, b2, radius, oc):
    """Optimum of sum(cost) + oc * unmatched by a dense assignment (square augmented matrix)."""
    p1, p2 = np.argwhere(b1), np.argwhere(b2)
    n1, n2 = len(p1), len(p2)
    big = 10**9
    C = np.full((n1 + n2, n1 + n2), big, dtype=np.float64)
    d = np.hypot(*(p1[:, None, :] - p2[None, :, :]).transpose(2, 0, 1))
    real = np.where(d <= radius + 1e-9, np.round(d * 100), big)
    C[:n1, :n2] = real
    C[:n1, n2:] = np.where(np.eye(n1) > 0, oc, big)
    C[n1:, :n2] = np.where(np.eye(n2) > 0, oc, big)
    C[n1:, n2:] = np.where(real.T < big, 0, big)
    r, c = linear_sum_assignment(C)
    return C[r, c].sum(), int(np.sum((r < n1) & (c < n2)))


@pytest.mark.parametrize("seed", range(12))
def test_correspondence_is_an_exact_optimum(seed):
    rng = np.random.default_rng(seed)
    b1 = rng.random((12, 14)) < 0.15
    b2 = rng.random((12, 14)) < 0.15
    max_dist = 0.12
    radius = match_radius(b1.shape, max_dist)
    oc = int(round(100 * 100 * radius))
    m1, m2 = correspond_pixels(b1, b2, max_dist)
    assert not (m1 & ~b1).any() and not (m2 & ~b2).any()
    assert m1.sum() == m2.sum()
    best_cost, best_card = _brute_force_cost(b1, b2, radius, oc)
    assert m1.sum() == best_card
    # recompute our matching's cost: solve again restricted to our matched pixels
    i, j, c = candidate_edges(m1, m2, radius)
    n = int(m1.sum())
    if n:
        g = sp.csr_matrix((c.astype(float) + 1, (i, j)), shape=(n, n))
        from scipy.sparse.csgraph import min_weight_full_bipartite_matching

        r, cc = min_weight_full_bipartite_matching(g)
        our_cost_lower = g[r, cc].sum() - n
    else:
        our_cost_lower = 0
    unmatched = b1.sum() + b2.sum() - 2 * n
    assert our_cost_lower + oc * unmatched == best_cost


def test_matching_size_is_maximum_cardinality():
    rng = np.random.default_rng(5)
    b1 = rng.random((60, 80)) < 0.05
    b2 = rng.random((60, 80)) < 0.05
    radius = match_radius(b1.shape)
    i, j, _ = candidate_edges(b1, b2, radius)
    g = sp.csr_matrix((np.ones(len(i)), (i, j)), shape=(b1.sum(), b2.sum()))
    best = int((maximum_bipartite_matching(g, perm_type="column") >= 0).sum())
    m1, m2 = correspond_pixels(b1, b2)
    assert m1.sum() == best == m2.sum()


def test_correspondence_edge_cases():
    z = np.zeros((5, 5), bool)
    one = z.copy()
    one[2, 2] = True
    assert correspond_pixels(z, one)[1].sum() == 0
    m1, m2 = correspond_pixels(one, one)
    assert m1[2, 2] and m2[2, 2]


def test_boundary_counts_accumulate_over_annotations():
    b = np.zeros((100, 100), bool)
    b[50, 10:90] = True
    g1 = np.zeros_like(b)
    g1[51, 10:50] = True  # 1 px away, within 0.0075 x 141 = 1.06 px
    g2 = np.zeros_like(b)
    g2[20, :] = True  # far away
    cntR, sumR, cntP, sumP = boundary_counts(b, [g1, g2])
    assert (cntR, sumR, cntP, sumP) == (40, 140, 40, 80)


def test_fmeasure_interpolation_and_ap():
    assert fmeasure(0.0, 0.0) == 0.0
    t, r, p, f = interpolated_max_f([1, 2, 3], [0.9, 0.6, 0.2], [0.5, 0.7, 0.95])
    assert 1 <= t <= 3 and f == pytest.approx(fmeasure(r, p))
    assert f >= max(fmeasure([0.9, 0.6, 0.2], [0.5, 0.7, 0.95]))
    # a perfect curve: precision 1 at every recall in [0, 1]
    assert average_precision([0.0, 1.0], [1.0, 1.0]) == pytest.approx(1.01)
    assert average_precision([0.5], [1.0]) == 0.0


def test_r50_is_the_recall_where_the_curve_crosses_half_precision():
    """Hand-worked: the curve (R, P) = (1.0, 0.2), (0.8, 0.4), (0.6, 0.6), (0.2, 0.9) crosses P = 0.5 halfway
    between its second and third points, at R = 0.7; a curve above 50% everywhere gives its highest recall; one
    below everywhere has none (NaN, written as null)."""
    import json

    from segensemble.evaluation.aggregate import collect_boundaries, recall_at_precision
    from segensemble.evaluation.benchmark import ImageBoundaryResult

    assert recall_at_precision([1.0, 0.8, 0.6, 0.2], [0.2, 0.4, 0.6, 0.9]) == pytest.approx(0.7)
    assert recall_at_precision([0.2, 0.6, 0.8, 1.0], [0.9, 0.6, 0.4, 0.2]) == pytest.approx(0.7)  # any order
    assert recall_at_precision([0.9, 0.5], [0.7, 0.8]) == pytest.approx(0.9)
    assert np.isnan(recall_at_precision([0.9, 0.5], [0.1, 0.3]))
    r = ImageBoundaryResult(np.array([1.0, 2.0]), np.array([8.0, 6.0]), np.array([10.0, 10.0]),
                            np.array([4.0, 6.0]), np.array([10.0, 10.0]))
    s = collect_boundaries([r])
    assert s.r50 == pytest.approx(0.7) and json.loads(json.dumps(s.to_dict()))["r50"] == pytest.approx(0.7)
    low = ImageBoundaryResult(np.array([1.0]), np.array([8.0]), np.array([10.0]), np.array([1.0]), np.array([10.0]))
    assert collect_boundaries([low]).to_dict()["r50"] is None


def test_thinning_equals_scikit_image_thin_pixel_for_pixel():
    """The compiled thinning is Guo & Hall's A1 as skimage.morphology.thin computes it: 240 seeded random
    maps (sparse to dense, thick blobs, single pixels, one-row and one-column maps)."""
    from scipy import ndimage
    from skimage.morphology import thin

    from segensemble.evaluation.boundaries import thin_boundaries

    rng = np.random.default_rng(2024)
    for k in range(240):
        h, w = (1, int(rng.integers(1, 30))) if k % 40 == 0 else (int(rng.integers(1, 48)), int(rng.integers(1, 48)))
        b = rng.random((h, w)) < rng.uniform(0.02, 0.95)
        if k % 3 == 0:
            b = ndimage.binary_dilation(b, iterations=int(rng.integers(1, 4)))
        np.testing.assert_array_equal(thin_boundaries(b), thin(b), err_msg=f"map {k}")
        np.testing.assert_array_equal(thin_boundaries(b.T), thin(b.T), err_msg=f"map {k} transposed")
