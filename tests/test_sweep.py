"""The threshold sweep's boundary counts equal the per-threshold matcher's, pixel for pixel."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from segensemble.evaluation.boundaries import boundary_counts
from segensemble.evaluation.correspond import _solve, assign, candidate_edges, match_radius
from segensemble.evaluation.sweep import boundary_counts_sweep


def _soft_map(rng, shape, density):
    """Blurred random lines and blobs: a soft map whose thresholds give nested, contour-like maps with ties."""
    m = np.zeros(shape)
    for _ in range(rng.integers(2, 8)):
        y0, x0, y1, x1 = rng.integers(0, shape[0]), rng.integers(0, shape[1]), rng.integers(0, shape[0]), \
            rng.integers(0, shape[1])
        n = max(abs(y1 - y0), abs(x1 - x0)) + 1
        m[np.linspace(y0, y1, n).round().astype(int), np.linspace(x0, x1, n).round().astype(int)] += rng.random()
    m += density * rng.random(shape)
    return ndimage.gaussian_filter(m, rng.uniform(0.5, 2.0))


def _annotation(rng, shape):
    seg = np.zeros(shape, int)
    for _ in range(rng.integers(1, 5)):
        seg[rng.integers(0, shape[0]):, rng.integers(0, shape[1]):] += 1
    b = np.zeros(shape, bool)
    b[:-1] |= seg[:-1] != seg[1:]
    b[:, :-1] |= seg[:, :-1] != seg[:, 1:]
    return b


@pytest.mark.parametrize("seed", range(30))
def test_sweep_equals_threshold_by_threshold_on_random_maps(seed):
    """30 random soft maps x 12 thresholds (360 maps), two or three annotators, two radii."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(20, 60)), int(rng.integers(20, 60)))
    soft = _soft_map(rng, shape, rng.choice([0.05, 0.3, 1.0]))
    gts = [_annotation(rng, shape) for _ in range(int(rng.integers(2, 4)))]
    maps = [soft >= t for t in np.quantile(soft, np.linspace(0.5, 0.98, 12))]
    for max_dist in (0.0075, 0.03):
        assert boundary_counts_sweep(maps, gts, max_dist=max_dist) == \
            [boundary_counts(m, gts, max_dist=max_dist) for m in maps]
        assert boundary_counts_sweep(maps[::-1], gts, max_dist=max_dist, thin=False) == \
            [boundary_counts(m, gts, max_dist=max_dist, thin=False) for m in maps[::-1]]


def test_a_graph_solved_by_components_is_the_graph_solved_whole():
    """With the same row side and order, components solved apart give the whole-graph matching (ties included:
    integer offsets give many equal costs): each row's search stays inside its component."""
    rng = np.random.default_rng(7)
    a, b = rng.random((40, 40)) < 0.15, rng.random((40, 40)) < 0.15
    i, j, c = candidate_edges(a, b, 2.5)
    n1, n2 = int(a.sum()), int(b.sum())
    whole = set(zip(*(x.tolist() for x in assign(i, j, c, n1, n2, 250))))
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    _, label = connected_components(coo_matrix((np.ones(len(i)), (i, n1 + j)), shape=(n1 + n2,) * 2), directed=False)
    parts = set()
    for comp in np.unique(label[i]):
        e = label[i] == comp
        rows, ri = np.unique(i[e], return_inverse=True)
        cols, rj = np.unique(j[e], return_inverse=True)
        x, y = assign(ri, rj, c[e], len(rows), len(cols), 250)
        parts |= set(zip(rows[x].tolist(), cols[y].tolist()))
    assert parts == whole and len(np.unique(label[i])) > 5
    if n1 <= n2:  # the matcher's own choice of row side is this one
        assert set(zip(*(x.tolist() for x in _solve(i, j, c, n1, n2, 250)))) == whole


def test_sweep_equals_threshold_by_threshold_on_real_maps(bsds_root):
    """A BSDS500 val image: the learned detector's thinned map at 99 thresholds, and one annotator's boundaries
    scored against the others."""
    from segensemble.datasets import BSDS500
    from segensemble.edges import detect_boundaries

    ds = BSDS500(bsds_root)
    image_id = ds.ids("val")[0]
    gt = ds.ground_truth("val", image_id)
    soft = detect_boundaries(ds.image("val", image_id), model="boundary-v2")
    maps = [soft >= t for t in np.linspace(0.01, 0.99, 99)]
    assert boundary_counts_sweep(maps, gt.boundaries) == [boundary_counts(m, gt.boundaries) for m in maps]
    human = [gt.boundaries[0], gt.boundaries[0] | gt.boundaries[1]]
    assert boundary_counts_sweep(human, gt.boundaries[1:]) == [boundary_counts(m, gt.boundaries[1:]) for m in human]


def test_sweep_checks_its_input():
    from segensemble.errors import InputError

    assert boundary_counts_sweep([], [np.zeros((4, 4), bool)]) == []
    with pytest.raises(InputError, match="bmaps: expected maps of one shape"):
        boundary_counts_sweep([np.zeros((4, 4), bool), np.zeros((5, 4), bool)], [])
    with pytest.raises(InputError, match="gt_boundaries: expected the shape of bmap"):
        boundary_counts_sweep([np.ones((4, 4), bool)], [np.ones((5, 4), bool)])
    assert match_radius((3, 4), 0.1) == pytest.approx(0.5)


def test_only_the_components_that_changed_are_solved_again(monkeypatch):
    """Two contours far apart, each with its annotation; the second map drops a pixel of the left contour only:
    the right contour's component keeps its matching (not passed to the solver again), the counts are the
    per-threshold matcher's."""
    import segensemble.evaluation.sweep as sweep_module

    solved = []
    real = sweep_module.assign_edges
    monkeypatch.setattr(sweep_module, "assign_edges",
                        lambda rows, *a: solved.append(len(np.unique(rows))) or real(rows, *a))
    gt = np.zeros((30, 60), bool)
    gt[10, 2:20] = gt[10, 40:58] = True
    first = np.zeros_like(gt)
    first[11, 3:21] = first[11, 41:57] = True
    second = first.copy()
    second[11, 3] = False
    maps = [first, second]
    assert boundary_counts_sweep(maps, [gt], max_dist=0.03, thin=False) == \
        [boundary_counts(m, [gt], max_dist=0.03, thin=False) for m in maps]
    assert solved == [34, 17]  # rows (the smaller side, the machine pixels): both contours, then the left one
