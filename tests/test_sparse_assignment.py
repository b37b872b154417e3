"""The benchmark's sparse assignment solver makes SciPy's choices: the same assignment on random graphs full of
ties, and so the same boundary counts as the matcher built on SciPy's solver, on random and real maps."""

from __future__ import annotations

import numpy as np
import pytest

import segensemble.evaluation.correspond as correspond
from segensemble.evaluation._sparse_assignment import assign_rows
from segensemble.evaluation.boundaries import boundary_counts
from segensemble.evaluation.correspond import scipy_assign_rows
from segensemble.evaluation.sweep import boundary_counts_sweep


def _random_graph(rng):
    n_rows, n_real = int(rng.integers(0, 30)), int(rng.integers(0, 30))
    mask = rng.random((n_rows, n_real)) < rng.uniform(0.02, 0.7)
    i, j = np.nonzero(mask)  # row by row, columns increasing
    cost = rng.integers(1, int(rng.choice([2, 3, 5, 1000])) + 1, len(i)).astype(np.float64)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(i, minlength=n_rows))]).astype(np.int64)
    return indptr, j.astype(np.int64), cost, n_real, float(rng.choice([1.5, 3.0, 7.0, 2001.0]))


@pytest.mark.parametrize("seed", range(6))
def test_the_same_assignment_as_scipy_on_random_graphs_with_ties(seed):
    """100 graphs per seed: small integer costs (many equal optima), private costs below, between and above the
    edge costs, empty rows and columns."""
    rng = np.random.default_rng(seed)
    for _ in range(100):
        graph = _random_graph(rng)
        got = assign_rows(*graph)
        assert np.array_equal(got, scipy_assign_rows(*graph))
        assert len(np.unique(got)) == len(got)



@pytest.mark.parametrize("seed", range(3))
def test_the_same_assignment_as_scipy_when_many_columns_tie(seed):
    """Dense graphs of 120-200 rows and columns with two weights: the searches' minimum sets hold dozens of columns
    (sorted by the solver's large-set path)."""
    rng = np.random.default_rng(200 + seed)
    for _ in range(5):
        n_rows, n_real = int(rng.integers(120, 200)), int(rng.integers(120, 200))
        i, j = np.nonzero(rng.random((n_rows, n_real)) < 0.5)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(i, minlength=n_rows))]).astype(np.int64)
        graph = indptr, j.astype(np.int64), rng.integers(1, 3, len(i)).astype(np.float64), n_real, 5.0
        assert np.array_equal(assign_rows(*graph), scipy_assign_rows(*graph))


@pytest.mark.parametrize("seed", range(3))
def test_the_same_assignment_as_scipy_with_weights_of_both_signs_and_every_magnitude(seed):
    """Weights from -2**39 to 2**39 (a search's distances then fall in every bucket of the solver's radix heap,
    its keys of both signs), with ties kept by drawing them from a few values per graph."""
    rng = np.random.default_rng(100 + seed)
    for _ in range(100):
        indptr, indices, _, n_real, _ = _random_graph(rng)
        levels = np.round(rng.uniform(-1, 1, 6) * 2.0 ** rng.integers(0, 40, 6))
        levels[levels == 0] = 1.0  # SciPy's solver reads a zero weight as no edge
        cost = rng.choice(levels, len(indices))
        graph = indptr, indices, cost, n_real, float(rng.choice(levels))
        got = assign_rows(*graph)
        assert np.array_equal(got, scipy_assign_rows(*graph))

def test_a_hand_worked_assignment():
    """Row 0 reaches column 0 at 1; row 1 column 0 at 2 and column 1 at 4; row 2 nothing (its private column).
    Private cost 5: (0, 1) costs 1 + 4 = 5 against 1 + 5 and 5 + 2; private cost 2.5: row 1 on its private
    column, 1 + 2.5, against 1 + 4 and 2.5 + 2."""
    indptr = np.array([0, 1, 3, 3], dtype=np.int64)
    indices = np.array([0, 0, 1], dtype=np.int64)
    cost = np.array([1.0, 2.0, 4.0])
    assert assign_rows(indptr, indices, cost, 2, 5.0).tolist() == [0, 1, 2 + 2]
    assert assign_rows(indptr, indices, cost, 2, 2.5).tolist() == [0, 2 + 1, 2 + 2]
    assert assign_rows(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0), 3, 1.0).tolist() == []


def _soft_map(rng, shape):
    from scipy import ndimage

    m = np.zeros(shape)
    for _ in range(int(rng.integers(3, 9))):
        y0, y1 = rng.integers(0, shape[0], 2)
        x0, x1 = rng.integers(0, shape[1], 2)
        n = max(abs(y1 - y0), abs(x1 - x0)) + 1
        m[np.linspace(y0, y1, n).round().astype(int), np.linspace(x0, x1, n).round().astype(int)] += rng.random()
    return ndimage.gaussian_filter(m + 0.3 * rng.random(shape), rng.uniform(0.5, 2.0))


def _counts_with_scipy(monkeypatch, maps, gts, **kw):
    with monkeypatch.context() as m:
        m.setattr(correspond, "assign_integer_rows", scipy_assign_rows)
        return [boundary_counts(b, gts, **kw) for b in maps]


def test_counts_equal_the_scipy_matcher_on_random_maps(monkeypatch):
    """20 random soft maps x 12 thresholds (240 maps), two or three annotators, two radii."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        shape = (int(rng.integers(30, 70)), int(rng.integers(30, 70)))
        soft = _soft_map(rng, shape)
        gts = [rng.random(shape) < 0.04 for _ in range(int(rng.integers(2, 4)))]
        maps = [soft >= t for t in np.quantile(soft, np.linspace(0.4, 0.98, 12))]
        for max_dist in (0.0075, 0.03):
            assert boundary_counts_sweep(maps, gts, max_dist=max_dist) == \
                _counts_with_scipy(monkeypatch, maps, gts, max_dist=max_dist)


def test_counts_equal_the_scipy_matcher_on_real_dense_maps(bsds_root, monkeypatch):
    """A BSDS500 val image at 99 thresholds: the learned detector's thinned map (dense) and its raw probability
    quantised to 8 bits with non-maximum suppression (a deep edge detector's kind of map)."""
    from segensemble.datasets import BSDS500
    from segensemble.edges import detect_boundaries
    from segensemble.evaluation.nms import edge_map_nms

    ds = BSDS500(bsds_root)
    image_id = ds.ids("val")[1]
    image, gt = ds.image("val", image_id), ds.ground_truth("val", image_id)
    raw = detect_boundaries(image, nms=False)
    for soft in (detect_boundaries(image), edge_map_nms(np.round(raw * 255) / 255)):
        maps = [soft >= t for t in np.linspace(0.01, 0.99, 99)]
        assert boundary_counts_sweep(maps, gt.boundaries) == _counts_with_scipy(monkeypatch, maps, gt.boundaries)


def test_weights_are_scaled_to_integers_or_refused():
    """The search runs on integers: weights with a power-of-two denominator are scaled (the hand-worked case
    above divided by 4 gives the same assignment); others, NaN, infinities and weights too large are refused."""
    indptr = np.array([0, 1, 3, 3], dtype=np.int64)
    indices = np.array([0, 0, 1], dtype=np.int64)
    assert assign_rows(indptr, indices, np.array([0.25, 0.5, 1.0]), 2, 1.25).tolist() == [0, 1, 2 + 2]
    assert assign_rows(indptr, indices, np.array([0.25, 0.5, 1.0]), 2, 0.625).tolist() == [0, 2 + 1, 2 + 2]
    for cost, private in (([0.1, 0.2, 0.4], 1.0), ([1.0, np.nan, 4.0], 5.0), ([1.0, 2.0, 4.0], np.inf),
                          ([1.0, 2.0, 2.0 ** 41], 5.0)):
        with pytest.raises(ValueError, match="power-of-two denominator"):
            assign_rows(indptr, indices, np.array(cost), 2, private)
