"""The compiled region merger: bit for bit the Python walk for the border-mean key, the batched walk's merges for the
learned key, the Python walk wherever the compiled one does not apply, and the recipes that use it."""

import numpy as np
import pytest

from segensemble import Ensemble
from segensemble.consensus.merging import (LEARNED_COEFFICIENTS, BoundaryMerge, learned_key, learned_merges,
                                           region_merger)
from segensemble.graph.adjacency import adjacent_pairs
from segensemble.graph.hierarchy import merge_hierarchy
from segensemble.graph.merger import RegionMerger


def _regions(h, w, seed):
    """A Voronoi partition of an h x w grid into about h * w / 20 regions (labels 0..n-1)."""
    rng = np.random.default_rng(seed)
    seeds = rng.random((h * w // 20, 2)) * [h, w]
    yy, xx = np.mgrid[:h, :w]
    d = (yy.ravel()[:, None] - seeds[:, 0]) ** 2 + (xx.ravel()[:, None] - seeds[:, 1]) ** 2
    return np.unique(d.argmin(axis=1), return_inverse=True)[1].reshape(h, w)


def _graph(seed, levels=None):
    regions = _regions(30, 40, seed)
    pairs, length = adjacent_pairs(regions)
    rng = np.random.default_rng(seed + 100)
    strength = rng.random(len(pairs))
    if levels:  # few distinct values: many exact ties between borders
        strength = np.round(strength * levels) / levels
    return int(regions.max()) + 1, pairs, length.astype(np.float64), strength, \
        np.bincount(regions.ravel()).astype(np.float64)


def _python_mean_walk(n, pairs, length, strength, sizes, min_size, penalty):
    ref = sizes.sum() / 1000.0

    def key(m, u, v):
        return m.border_mean(u, v)[0] - penalty * np.sqrt(ref / min(m.size[u], m.size[v]))

    return RegionMerger(n, pairs, length, strength, sizes=sizes).run(key, min_size=min_size)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("levels, min_size, penalty", [(None, 0, 0.0), (4, 0, 0.0), (10, 60, 0.0), (None, 60, 0.3)])
def test_the_border_mean_walk_is_the_python_walk_bit_for_bit(seed, levels, min_size, penalty):
    n, pairs, length, strength, sizes = _graph(seed, levels)
    want = _python_mean_walk(n, pairs, length, strength, sizes, min_size, penalty)
    got = merge_hierarchy(n, pairs, length, strength, sizes=sizes, min_size=min_size, size_penalty=penalty)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert len(got[0]) == n - 1  # one connected grid: everything merged


def test_the_border_mean_walk_on_a_hand_worked_graph():
    """A chain 0-1-2-3 with strengths 0.5, 0.2, 0.5: (1, 2) first at 0.2; then (0, 1) with mean 0.5 and
    (1, 3) with mean 0.5 tie, and the smaller pair (0, 1) goes first."""
    m, h = merge_hierarchy(4, np.array([[0, 1], [1, 2], [2, 3]]), np.ones(3), np.array([0.5, 0.2, 0.5]))
    assert m.tolist() == [[1, 2], [0, 1], [0, 3]] and h.tolist() == [0.2, 0.5, 0.5]


def test_a_graph_the_compiled_walk_does_not_take_goes_the_python_way():
    pairs, sizes = np.array([[0, 1], [1, 2], [0, 1]]), np.ones(3)  # a pair given twice: its last border row counts
    length, strength = np.ones(len(pairs)), np.array([0.1, 0.5, 0.9])
    merger = RegionMerger(3, pairs, length, strength, sizes=sizes)
    assert not merger._compilable()
    got = merger.run_border_mean()
    want = _python_mean_walk(3, pairs, length, strength, sizes, 0, 0.0)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert got[0].tolist() == [[1, 2], [0, 1]] and got[1].tolist() == [0.5, 0.9]


def test_a_single_region_and_a_graph_without_borders_merge_nothing():
    for n, pairs in ((1, np.zeros((0, 2), int)), (3, np.zeros((0, 2), int))):
        m, h = merge_hierarchy(n, pairs, np.zeros(0), np.zeros(0))
        assert m.shape == (0, 2) and h.shape == (0,)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("partition_weight, min_size", [(0.0, 0), (0.0, 60), (0.4, 0)])
def test_the_learned_walk_makes_the_batched_walks_merges(seed, partition_weight, min_size):
    n, pairs, length, strength, sizes = _graph(seed)
    rng = np.random.default_rng(seed + 200)
    border = np.column_stack([strength, rng.random(len(pairs)), rng.random(len(pairs)) < 0.5])
    sums = rng.random((n, 9)) * sizes[:, None] * 30  # Lab colour and six texture energies, summed per region

    def merger():
        return RegionMerger(n, pairs, length, border, sizes=sizes, region_sums=sums)

    want = merger().run(learned_key(LEARNED_COEFFICIENTS, partition_weight), min_size=min_size, batched=True)
    got = merger().run_learned(LEARNED_COEFFICIENTS, partition_weight=partition_weight, min_size=min_size)
    assert np.array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=0, atol=1e-14)
    numpy = learned_merges(merger(), LEARNED_COEFFICIENTS, partition_weight=partition_weight, min_size=min_size)
    assert np.array_equal(numpy[0], want[0]) and np.array_equal(numpy[1], want[1])  # 'numpy': the batched walk


def test_boundary_merge_gives_the_same_segmentation_with_either_engine():
    rng = np.random.default_rng(7)
    img = rng.random((40, 50, 3)) * 0.1
    img[:, 25:] += 0.8
    img[20:, :, 2] += 0.5
    members = [_regions(40, 50, s) for s in range(3)] + [(np.arange(50) >= 25)[None].repeat(40, 0).astype(int)]
    ens = Ensemble.from_segmentations(members, image=img)
    a = BoundaryMerge(n_clusters=4, engine="numpy").fit(ens)
    b = BoundaryMerge(n_clusters=4, engine="compiled").fit(ens)
    assert np.array_equal(a.merges_, b.merges_) and np.allclose(a.heights_, b.heights_, rtol=0, atol=1e-14)
    assert np.array_equal(a.labels_, b.labels_)
    with pytest.raises(Exception, match="engine"):
        BoundaryMerge(engine="fast").fit(ens)


def test_the_learned_walk_needs_the_regions_colour():
    merger = RegionMerger(2, np.array([[0, 1]]), np.ones(1), np.array([[0.5, 0.5]]))
    with pytest.raises(ValueError, match="Lab colour"):
        merger.run_learned(LEARNED_COEFFICIENTS)
    img = np.zeros((4, 4, 3))
    ens = Ensemble.from_segmentations([np.array([[0, 0, 1, 1]] * 4)], image=img)
    m, h = region_merger(ens, np.zeros((4, 4))).run_learned(LEARNED_COEFFICIENTS)
    assert m.tolist() == [[0, 1]] and 0 < h[0] < 1


@pytest.mark.parametrize("numpy_version, compiled_version", [("default@6", "default@7"), ("fast@1", "fast@2")])
def test_compiled_recipe_fuses_a_bsds_image_as_its_numpy_version_does(bsds_root, numpy_version, compiled_version):
    """The compiled merges change no segmentation of the default and fast recipes on a real image (val/3096)."""
    from segensemble.datasets import BSDS500
    from segensemble.pipeline.runner import run_recipe

    img = BSDS500(bsds_root).image("val", "3096")
    before = run_recipe(img, numpy_version)
    after = run_recipe(img, compiled_version, members=before.members)
    assert np.array_equal(after.labels, before.labels)
