"""Method-specific tests: each would fail on a wrong implementation."""

import itertools

import numpy as np
import pytest

from segensemble import InputError, segment
from segensemble.segmenters.graphcut import _expansion_move, alpha_expansion, potts_energy
from segensemble.segmenters.kmeans import COLOUR_SPACES
from segensemble.segmenters.ncut import discretize_yu_shi


def _same_partition(a, b):
    pairs = set(zip(a.ravel().tolist(), b.ravel().tolist()))
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


def _agreement(a, b):
    """Fraction of pixels labelled alike after the best one-to-one matching of labels."""
    from scipy.optimize import linear_sum_assignment

    C = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(C, (a.ravel(), b.ravel()), 1)
    r, c = linear_sum_assignment(-C)
    return C[r, c].sum() / a.size


def _blocks(noise=0.03, seed=0):
    truth = np.zeros((48, 64), dtype=int)
    truth[:, 32:] = 1
    truth[24:, :20] = 2
    truth[30:, 40:] = 3
    colours = np.array([[0.85, 0.2, 0.2], [0.2, 0.7, 0.25], [0.2, 0.3, 0.85], [0.9, 0.85, 0.3]])
    img = colours[truth] + np.random.default_rng(seed).normal(0, noise, truth.shape + (3,))
    return np.clip(img, 0, 1), truth


# ------------------------------------------------------------------ graph cuts
@pytest.mark.parametrize("seed", range(6))
def test_expansion_move_is_the_optimal_expansion(seed):
    rng = np.random.default_rng(seed)
    h, w, k = 3, 3, 3
    D = rng.random((h, w, k)) * 4
    wr, wd = rng.random((h, w)) * 2, rng.random((h, w)) * 2
    labels = rng.integers(0, k, (h, w))
    for alpha in range(k):
        moved = _expansion_move(labels, alpha, D, wr, wd)
        best = min(
            potts_energy(np.where(np.array(mask).reshape(h, w), alpha, labels), D, wr, wd)
            for mask in itertools.product([False, True], repeat=h * w)
        )
        assert potts_energy(moved, D, wr, wd) == pytest.approx(best)
        assert potts_energy(moved, D, wr, wd) <= potts_energy(labels, D, wr, wd) + 1e-9


def test_alpha_expansion_energy_never_increases():
    rng = np.random.default_rng(1)
    D = rng.random((12, 12, 4)) * 3
    wr, wd = np.full((12, 12), 0.8), np.full((12, 12), 0.8)
    labels, energies = alpha_expansion(D, wr, wd, rng.integers(0, 4, (12, 12)), max_cycles=3)
    assert all(b <= a for a, b in zip(energies, energies[1:]))
    assert energies[-1] == pytest.approx(potts_energy(labels, D, wr, wd))


def test_graphcut_recovers_noisy_blocks():
    img, truth = _blocks(noise=0.06)
    seg = segment(img, "graphcut", n_segments=4, texture_weight=0, rng=0)
    assert _agreement(seg.labels, truth) > 0.99
    assert np.allclose(seg.memberships.sum(axis=2), 1, atol=1e-5)


# ------------------------------------------------------------------ ncut
@pytest.mark.parametrize("k", [2, 3, 4])
def test_ncut_recovers_k_flat_regions_exactly(k):
    img, truth = _blocks(noise=0.0)
    # K spatially connected flat regions: merge adjacent blocks for K < 4
    truth = {4: np.array([0, 1, 2, 3]), 3: np.array([0, 1, 2, 1]), 2: np.array([0, 1, 0, 1])}[k][truth]
    colours = np.array([[0.85, 0.2, 0.2], [0.2, 0.7, 0.25], [0.2, 0.3, 0.85], [0.9, 0.85, 0.3]])
    seg = segment(colours[truth], "ncut", n_segments=k, n_superpixels=120, rng=0)
    assert seg.n_segments == k
    assert _same_partition(seg.labels, truth)


def test_ncut_returns_exactly_k_regions_on_real_texture():
    rng = np.random.default_rng(2)
    img = rng.random((40, 40, 3))
    for k in (2, 5, 9):
        assert segment(img, "ncut", n_segments=k, n_superpixels=60, rng=0).n_segments == k


def test_yu_shi_discretization_fills_every_cluster():
    rng = np.random.default_rng(0)
    V = rng.normal(size=(30, 6))
    V[:, 0] += 10  # one dominant direction would leave clusters empty without the repair
    labels = discretize_yu_shi(V, rng)
    assert sorted(set(labels.tolist())) == list(range(6))


def test_ncut_recursive_mode_runs():
    img, _ = _blocks()
    seg = segment(img, "ncut", mode="recursive", n_superpixels=80, rng=0)
    assert seg.n_segments >= 2


# ------------------------------------------------------------------ chan-vese
@pytest.mark.parametrize("variant", ["morphological", "exact"])
def test_chanvese_separates_two_phase_noisy_image(variant):
    yy, xx = np.mgrid[0:60, 0:60]
    truth = ((yy - 30) ** 2 + (xx - 28) ** 2 < 15**2).astype(int)
    img = np.where(truth[..., None] == 1, [0.8, 0.7, 0.2], [0.2, 0.3, 0.6])
    img = np.clip(img + np.random.default_rng(0).normal(0, 0.12, img.shape), 0, 1)
    seg = segment(img, "chanvese", n_segments=2, variant=variant, n_iter=100, downsample=1)
    agree = max(np.mean(seg.labels == truth), np.mean(seg.labels != truth))
    assert agree > 0.97
    assert np.allclose(seg.memberships.sum(axis=2), 1, atol=1e-5)
    assert np.mean(seg.memberships.argmax(axis=2) == seg.labels) > 0.97


def test_chanvese_multiphase_reaches_k():
    img, truth = _blocks()
    seg = segment(img, "chanvese", n_segments=4, n_iter=60, downsample=1)
    assert seg.n_segments == 4
    assert _agreement(seg.labels, truth) > 0.97  # curvature smoothing rounds the block corners


# ------------------------------------------------------------------ k-means, mean shift, the rest
@pytest.mark.parametrize("space", COLOUR_SPACES)
def test_kmeans_every_colour_space_recovers_blocks(space):
    img, truth = _blocks()
    seg = segment(img, "kmeans", n_segments=4, colour_space=space, texture_weight=0, rng=0)
    assert _agreement(seg.labels, truth) > 0.99, space
    assert np.allclose(seg.memberships.sum(axis=2), 1, atol=1e-5)
    assert np.array_equal(seg.memberships.argmax(axis=2), seg.labels)


def test_meanshift_finds_the_blocks():
    img, truth = _blocks(noise=0.01)
    assert _same_partition(segment(img, "meanshift", min_size=30).labels, truth)


def test_meanshift_at_half_resolution_finds_the_blocks_at_full_size():
    img, truth = _blocks(noise=0.01)  # every block border on an even row or column: exact at half size
    seg = segment(img, "meanshift", min_size=30, resolution=0.5)
    assert seg.labels.shape == truth.shape and _same_partition(seg.labels, truth)
    assert seg.params["resolution"] == 0.5 and "resolution" not in segment(img, "meanshift").params
    odd = segment(img[:47, :63], "meanshift", min_size=30, resolution=0.5)  # odd sizes come back whole
    t = truth[:47, :63]  # averaged across a border, a column of pixels may stay a region: inside one block
    assert odd.labels.shape == t.shape and all(len(np.unique(t[odd.labels == r])) == 1 for r in range(odd.n_segments))
    tiny = np.full((1, 2, 3), 0.5)  # too small to shrink: filtered as it is, radius and smallest region unscaled
    assert segment(tiny, "meanshift", resolution=0.5).labels.tolist() == segment(tiny, "meanshift").labels.tolist()


@pytest.mark.parametrize("bad", [0, -0.5, 1.5, float("nan"), "half"])
def test_meanshift_refuses_a_resolution_outside_zero_one(bad):
    with pytest.raises(InputError, match="resolution"):
        segment(np.zeros((8, 8, 3)), "meanshift", resolution=bad)


@pytest.mark.parametrize("name, params", [("watershed", {"n_segments": 30}), ("quickshift", {}),
                                          ("slic", {"n_segments": 30})])
def test_oversegmenters_respect_the_block_boundaries(name, params):
    img, truth = _blocks(noise=0.01)
    seg = segment(img, name, rng=0, **params)
    # every region lies (almost) inside one block
    purity = sum(np.bincount(truth[seg.labels == r]).max() for r in range(seg.n_segments)) / truth.size
    assert purity > 0.97


def test_slic_memberships_prefer_the_own_superpixel():
    img, _ = _blocks()
    seg = segment(img, "slic", n_segments=12)
    assert seg.memberships.shape[2] == seg.n_segments
    # SLIC's connectivity step moves some pixels off their nearest centre; random memberships give ~1/12
    assert np.mean(seg.memberships.argmax(axis=2) == seg.labels) > 0.85
    assert segment(img, "slic", n_segments=400).memberships is None  # above the soft limit


def test_unknown_parameter_lists_the_valid_ones():
    with pytest.raises(InputError, match="no parameter 'bogus'.*n_segments"):
        segment(np.zeros((8, 8, 3)), "slic", bogus=1)


def _fh_images():
    rng = np.random.default_rng(11)
    yield rng.random((37, 53, 3))
    yield np.round(rng.random((40, 30, 3)) * 3) / 3  # few colours: many equal edge weights
    yield rng.random((25, 41))  # grey
    img = np.zeros((48, 64, 3)); img[:, 32:] = [0.8, 0.3, 0.1]; img[20:30, 10:20] = 1
    yield img + rng.normal(0, 0.02, img.shape)


@pytest.mark.parametrize("scale, sigma, min_size", [(1.0, 0.8, 1), (100.0, 0.8, 5), (300.0, 0.5, 20),
                                                    (1e4, 1.5, 3)])
def test_felzenszwalb_gives_scikit_images_labels(scale, sigma, min_size):
    """The merge pass over edges sorted once is scikit-image's segmentation, label for label."""
    import skimage.segmentation

    from segensemble.segmenters.felzenszwalb import felzenszwalb
    from segensemble.validation import check_image

    for img in _fh_images():  # a grey image is segmented as three equal channels, as every member reads it
        want = skimage.segmentation.felzenszwalb(check_image(img), scale=scale, sigma=sigma, min_size=min_size,
                                                 channel_axis=-1)
        got = felzenszwalb(img, scale=scale, sigma=sigma, min_size=min_size).labels
        np.testing.assert_array_equal(got, want)


def test_felzenszwalb_on_a_bsds_image_at_the_default_recipes_scales(bsds_root):
    import skimage.segmentation

    from segensemble.datasets import BSDS500
    from segensemble.segmenters.felzenszwalb import felzenszwalb
    from segensemble.validation import check_image

    img = check_image(BSDS500(bsds_root).image("val", "3096"))
    for scale in (100, 300, 500, 1000):
        want = skimage.segmentation.felzenszwalb(img, scale=scale, sigma=0.8, min_size=50, channel_axis=-1)
        np.testing.assert_array_equal(felzenszwalb(img, scale=scale).labels, want)


def test_felzenszwalbs_hand_worked_merge_pass():
    """Four pixels in a row with weights 0.1 (0-1), 0.5 (1-2), 0.2 (2-3) and k = 0.3: (0, 1) joins (0.1 < 0.3),
    (2, 3) joins (0.2 < 0.3); (1, 2) at 0.5 is not below min(0.1 + 0.3 / 2, 0.2 + 0.3 / 2) = 0.25."""
    from segensemble.segmenters._graph_fh import segment_sorted

    edges = np.array([[0, 1], [2, 3], [1, 2]], dtype=np.intp)
    assert segment_sorted(edges, np.array([0.1, 0.2, 0.5]), 4, 0.3, 1).tolist() == [0, 0, 1, 1]
    assert segment_sorted(edges, np.array([0.1, 0.2, 0.5]), 4, 0.3, 3).tolist() == [0, 0, 0, 0]  # min_size pass
    assert segment_sorted(edges, np.array([0.1, 0.2, 0.5]), 4, 1.0, 1).tolist() == [0, 0, 0, 0]  # 0.5 < 0.6


def test_felzenszwalb_keeps_the_sorted_graph_of_small_images_only(monkeypatch):
    import importlib

    fh = importlib.import_module("segensemble.segmenters.felzenszwalb")

    img = np.random.default_rng(2).random((20, 30, 3))
    first = fh.felzenszwalb(img, scale=50).labels
    assert len(fh._GRAPHS) == 1  # the next scale of this image reuses it
    np.testing.assert_array_equal(fh.felzenszwalb(img, scale=50).labels, first)
    monkeypatch.setattr(fh._GRAPHS, "max_pixels", 599)  # 20 x 30 = 600 pixels: above the bound
    flipped = fh.felzenszwalb(img[::-1], scale=50).labels
    assert len(fh._GRAPHS) == 0
    np.testing.assert_array_equal(fh.felzenszwalb(img[::-1], scale=50).labels, flipped)


@pytest.mark.parametrize("method, copies", [("kmeans", 4), ("graphcut", 4), ("chanvese", 2)])
def test_more_regions_than_memory_holds_are_refused_before_anything_is_allocated(method, copies, monkeypatch):
    """`segment -m kmeans -k 100000` on a BSDS500 image was killed by the system with no word (its memberships
    alone: 154 401 x 100 000 doubles, 115 GiB). The dense (pixels x regions) arrays are bounded up front."""
    from segensemble import limits

    img = np.random.default_rng(0).random((20, 20, 3))
    monkeypatch.setattr(limits, "MEMORY_LIMIT", 8 * 400 * copies * 3)  # three regions fit, four do not
    assert segment(img, method, n_segments=3, rng=0).n_segments <= 3
    with pytest.raises(InputError, match=r"^n_segments: expected at most 3 on an image of 400 pixels, or a smaller "
                                         r"image \(.* for 4 regions need about 0\.0 GiB, above the limit of 0 GiB\), got 4$"):
        segment(img, method, n_segments=4, rng=0)


def test_normalized_cuts_refuse_an_eigenproblem_beyond_the_limit_naming_the_parameter_that_sets_it():
    """`segment -m ncut -k 100000` asked NumPy for a 154 401 x 154 401 matrix (178 GiB, MemoryError, exit 1)."""
    img = np.random.default_rng(0).random((20, 20, 3))
    with pytest.raises(InputError, match=r"^n_segments: expected at most 8,000 \(normalized cuts .*\), got 8001$"):
        segment(img, "ncut", n_segments=8001, rng=0)
    with pytest.raises(InputError, match=r"^n_superpixels: expected at most 8,000 .*, got 9000$"):
        segment(img, "ncut", n_superpixels=9000, rng=0)
