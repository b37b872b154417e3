"""Boundary consensus by hierarchical merging: adjacency, hierarchy, cuts, small regions."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from segensemble import Ensemble, InputError, consensus
from segensemble.consensus.merging import atom_adjacency, cut_hierarchy, merge_hierarchy


def test_adjacency_counts_borders_votes_and_gradient():
    index = np.array([[0, 0, 1], [2, 2, 1], [2, 2, 1]])
    labels = np.array([[0, 0, 0], [1, 0, 1], [1, 1, 1]])  # 3 atoms x 3 members
    grad = np.zeros((3, 3))
    grad[:, 2] = 1.0
    pairs, length, vote, g = atom_adjacency(index, labels, grad)
    assert pairs.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert length.tolist() == [1.0, 2.0, 2.0]
    assert vote.tolist() == pytest.approx([2 / 3, 1.0, 1 / 3])
    assert g.tolist() == pytest.approx([0.5, 0.0, 0.5])


def test_hierarchy_merges_the_weakest_mean_border_first_and_is_monotone():
    rng = np.random.default_rng(0)
    n = 30
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.2])
    length = rng.integers(1, 5, len(pairs)).astype(float)
    strength = rng.random(len(pairs))
    merges, heights = merge_hierarchy(n, pairs, length, strength)
    assert np.all(np.diff(heights) >= 0)
    # the first merge is the weakest single border
    first = pairs[np.argmin(strength)]
    assert merges[0].tolist() == sorted(first.tolist())
    for k in (1, 5, 12):
        labels = cut_hierarchy(n, merges, heights, n_clusters=max(k, n - len(merges)))
        assert labels.max() + 1 == max(k, n - len(merges))


def test_mean_border_strength_is_length_weighted():
    # region 1 borders 0 with a long weak border and a short strong one: mean (3 * 0.2 + 1 * 0.8) / 4 = 0.35
    pairs = np.array([[0, 1], [0, 1], [1, 2]])
    merges, heights = merge_hierarchy(3, pairs[[0, 2]], np.array([3.0, 1.0]), np.array([0.2, 0.3]))
    assert merges[0].tolist() == [0, 1]


def test_small_regions_merge_first():
    # region 2 is tiny and strongly bounded: without min_size it survives to the end, with it, it goes first
    pairs = np.array([[0, 1], [1, 2]])
    strength = np.array([0.3, 0.9])
    m0, _ = merge_hierarchy(3, pairs, np.ones(2), strength)
    m1, h1 = merge_hierarchy(3, pairs, np.ones(2), strength, sizes=np.array([50, 50, 2]), min_size=10)
    assert m0[0].tolist() == [0, 1] and m1[0].tolist() == [1, 2] and h1[0] < 0
    assert cut_hierarchy(3, m1, h1, threshold=0.2).tolist() == [0, 1, 1]  # the 0.3 border survives


def _image_ensemble():
    rng = np.random.default_rng(1)
    truth = np.zeros((30, 40), int)
    truth[:, 20:] = 1
    truth[15:, :20] = 2
    img = np.stack([truth == 1, truth == 2, np.zeros_like(truth)], axis=2).astype(float)
    img = np.clip(img + rng.normal(0, 0.03, img.shape), 0, 1)
    members = []
    for s in range(4):
        z = truth.copy()
        z[rng.random(z.shape) < 0.02] = 3  # speckle
        z[:, 19 + s % 2] = truth[:, 21]  # jittered border
        members.append(z)
    return truth, Ensemble.from_segmentations(members, img)


@pytest.mark.parametrize("gradient_weight", [0.0, 0.5])
def test_boundary_merge_recovers_regions_from_noisy_members(gradient_weight):
    truth, ens = _image_ensemble()
    est = consensus.get("merge")(threshold=0.5, gradient_weight=gradient_weight, min_size=20).fit(ens)
    fused = ens.to_image(est.labels_)
    assert adjusted_rand_score(truth.ravel(), fused.ravel()) > 0.95
    k3 = consensus.get("merge")(n_clusters=3, min_size=20).fit(ens)
    assert k3.n_clusters_ == 3


def test_without_a_grid_it_is_average_linkage_on_the_coassociation():
    from segensemble.datasets import rpm_ensemble

    L, _ = rpm_ensemble(60, 6, 3, 0.3, rng=4)
    a = consensus.get("merge")(n_clusters=3).fit(L).labels_
    b = consensus.get("eac")(n_clusters=3, linkage="average").fit(L).labels_
    assert adjusted_rand_score(a, b) == 1.0


@pytest.mark.parametrize("abstain", [False, True])
def test_without_a_grid_the_dense_linkage_is_the_all_pairs_merging(abstain):
    """Label arrays are merged by average linkage on the dense 1 - X (seconds where the region graph of all
    pairs took minutes); with many members of continuous weights (no tied keys) both give the same hierarchy, also
    with abstaining members (a pair no member labels on both sides at 0.5)."""
    from segensemble.abstentions import separation_share

    rng = np.random.default_rng(3)
    for _ in range(5):
        n, m = 40, 30
        L = rng.integers(0, 4, (n, m)).astype(float)
        if abstain:
            L[rng.random(L.shape) < 0.3] = np.nan
            L[np.isnan(L).all(axis=1), 0] = 1
        w = rng.random(m) + 0.2
        est = consensus.get("merge")(n_clusters=4, member_weights=w).fit(L)
        ens = Ensemble.from_labels(L)
        u, v = np.triu_indices(ens.n_objects, 1)
        strength = separation_share(ens.labels[u], ens.labels[v], w / w.sum())
        merges, heights = merge_hierarchy(ens.n_objects, np.stack([u, v], 1), ens.weights[u] * ens.weights[v],
                                          strength, sizes=ens.weights)
        assert np.array_equal(est.merges_, merges)
        np.testing.assert_allclose(est.heights_, heights, rtol=0, atol=1e-12)


def test_without_a_grid_the_bound_is_memory_not_a_fixed_count():
    from segensemble.datasets import rpm_ensemble

    L, truth = rpm_ensemble(2500, 8, 4, 0.2, rng=0)  # above the 2 000 objects of the region-graph path
    assert adjusted_rand_score(truth, consensus.get("merge")(n_clusters=4).fit(L).labels_) > 0.9
    with pytest.raises(InputError, match="boundary merging without a pixel grid.*GiB.*basic"):
        consensus.get("merge")().fit(np.random.default_rng(0).integers(0, 1000, (40000, 3)))
    with pytest.raises(InputError, match="at most 2000 objects"):
        consensus.get("merge")(min_size=2).fit(L)


def test_gradient_needs_an_image():
    a = np.array([[0, 0, 1, 1]] * 2)
    with pytest.raises(InputError, match="gradient"):
        consensus.get("merge")(gradient_weight=0.5).fit(Ensemble.from_segmentations([a, a]))


def test_size_penalty_merges_smaller_regions_first():
    # equal borders: the pair with the smaller region goes first once sizes count
    pairs = np.array([[0, 1], [2, 3]])
    strength = np.array([0.40, 0.41])
    sizes = np.array([500.0, 500.0, 10.0, 500.0])
    m0, _ = merge_hierarchy(4, pairs, np.ones(2), strength, sizes=sizes)
    m1, _ = merge_hierarchy(4, pairs, np.ones(2), strength, sizes=sizes, size_penalty=0.1)
    assert m0[0].tolist() == [0, 1] and m1[0].tolist() == [2, 3]


# --- region statistics and the learned criterion -------------------------------------------------------------------

def test_region_merger_keeps_exact_border_and_region_means():
    from segensemble.graph.merger import RegionMerger

    # a path 0 - 1 - 2 and a border 0 - 2: after merging 0 and 1, the border to 2 pools both borders
    pairs = np.array([[0, 1], [1, 2], [0, 2]])
    m = RegionMerger(3, pairs, np.array([1.0, 3.0, 1.0]), np.array([[0.0], [0.5], [0.9]]),
                     sizes=np.array([2.0, 6.0, 4.0]), region_sums=np.array([[2.0], [12.0], [20.0]]))
    seen = []

    def on_merge(mm, keep, gone):
        seen.append((keep, gone, mm.region_mean(keep).tolist(), mm.region_mean(gone).tolist()))

    merges, heights = m.run(lambda mm, u, v: mm.border_mean(u, v)[0], on_merge=on_merge)
    assert merges.tolist() == [[0, 1], [0, 2]]
    assert seen[0] == (0, 1, [1.0], [2.0])  # statistics before the merge
    assert seen[1][2] == [14.0 / 8.0]  # merged region: (2 + 12) / (2 + 6)
    assert heights.tolist() == pytest.approx([0.0, (3 * 0.5 + 1 * 0.9) / 4])  # length-weighted pooled border


def _blocks(colours, width=10):
    """A 10 x (width * len(colours)) image of flat colour blocks, and its block labels."""
    img = np.concatenate([np.broadcast_to(np.array(c, float), (10, width, 3)) for c in colours], axis=1).copy()
    truth = np.repeat(np.arange(len(colours)), width)[None, :].repeat(10, axis=0)
    return img, truth


def test_learned_criterion_pairs_regions_by_mean_colour():
    # four blocks, members that separate everything: only the colour coefficient decides,
    # so the two reddish blocks (0, 1) and the two bluish ones (2, 3) pair up
    img, truth = _blocks([(1, 0, 0), (0.9, 0.1, 0), (0, 0, 1), (0, 0.1, 0.9)])
    ens = Ensemble.from_segmentations([truth, truth], img)
    only_colour = {"vote": 0.0, "gradient": 0.0, "colour": 10.0, "texture": 0.0, "size": 0.0, "length": 0.0,
                   "bias": -2.0}
    est = consensus.get("merge")(n_clusters=2, criterion="learned", coefficients=only_colour).fit(ens)
    assert est.labels_.tolist() == [0, 0, 1, 1]
    assert np.all(np.diff(est.heights_) >= 0) and np.all((est.heights_ > 0) & (est.heights_ < 1))


def test_learned_criterion_recovers_regions_and_ignores_member_relabelling():
    truth, ens = _image_ensemble()
    est = consensus.get("merge")(criterion="learned", threshold=0.5, min_size=20).fit(ens)
    assert adjusted_rand_score(truth.ravel(), ens.to_image(est.labels_).ravel()) > 0.95
    members = [ens.to_image(ens.labels[:, j]) for j in range(ens.n_members)]
    relabelled = Ensemble.from_segmentations([7 - z for z in members[::-1]], ens.image)
    again = consensus.get("merge")(criterion="learned", threshold=0.5, min_size=20).fit(relabelled)
    assert adjusted_rand_score(ens.to_image(est.labels_).ravel(), relabelled.to_image(again.labels_).ravel()) == 1.0


def test_member_weights_are_relative_and_can_silence_a_member():
    img, truth = _blocks([(1, 0, 0), (0, 1, 0), (0, 0, 1)])
    one = np.where(truth == 2, 1, 0)  # separates block 2 only
    two = np.where(truth == 0, 0, 1)  # separates block 0 only
    ens = Ensemble.from_segmentations([one, two], img)
    fit = lambda w: consensus.get("merge")(n_clusters=2, member_weights=w).fit(ens).labels_.tolist()  # noqa: E731
    assert fit([1, 0]) == fit([5, 0]) == [0, 0, 1]
    assert fit([0, 1]) == [0, 1, 1]


@pytest.mark.parametrize("params, match", [
    ({"member_weights": [1, 2, 3]}, "member_weights: expected 2 non-negative"),
    ({"member_weights": [1, -1]}, "member_weights"),
    ({"member_weights": [0, 0]}, "member_weights"),
    ({"criterion": "learned", "coefficients": {"vote": 1.0}}, "coefficients: expected exactly the keys"),
    ({"criterion": "learned", "coefficients": dict(vote=1, gradient=1, colour=1, texture=1, size=1, length=1,
                                                   bias=float("nan"))}, "coefficients: 'bias' must be a finite"),
])
def test_bad_parameters_are_named(params, match):
    img, truth = _blocks([(1, 0, 0), (0, 1, 0)])
    with pytest.raises(InputError, match=match):
        consensus.get("merge")(**params).fit(Ensemble.from_segmentations([truth, truth], img))


def test_learned_criterion_needs_the_image_and_a_grid():
    a = np.array([[0, 0, 1, 1]] * 2)
    with pytest.raises(InputError, match="needs the image"):
        consensus.get("merge")(criterion="learned").fit(Ensemble.from_segmentations([a, a]))
    with pytest.raises(InputError, match="criterion: 'learned' needs an ensemble built from segmentations"):
        consensus.get("merge")(criterion="learned").fit(np.array([[0, 1], [0, 1], [1, 0]]))


def test_cut_hierarchy_equals_replaying_the_merges_one_by_one():
    """The cut (survivors assigned at once, chains resolved by pointer jumping) against a union-find replay of the
    merges below the threshold, on seeded random merge trees whose survivors are the smaller ids."""
    rng = np.random.default_rng(11)
    for _ in range(60):
        n = int(rng.integers(1, 120))
        alive, merges = list(range(n)), []
        while len(alive) > 1 and rng.random() < 0.97:
            a, b = sorted(rng.choice(len(alive), 2, replace=False))
            keep, gone = alive[a], alive[b]
            merges.append((keep, gone))
            alive.remove(gone)
        merges = np.array(merges, dtype=np.int64).reshape(-1, 2)
        heights = np.sort(rng.random(len(merges)))
        for threshold in (0.0, 0.4, 0.9, 2.0):
            root = list(range(n))

            def find(u):
                while root[u] != u:
                    u = root[u]
                return u

            for (keep, gone), h in zip(merges.tolist(), heights):
                if h <= threshold:
                    root[find(gone)] = find(keep)
            expected = np.unique([find(u) for u in range(n)], return_inverse=True)[1]
            assert np.array_equal(cut_hierarchy(n, merges, heights, threshold=threshold), expected)
