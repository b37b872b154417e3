"""Segmentation and Ensemble: exact atom reduction, incidence, co-association products."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segensemble import Ensemble, InputError, Segmentation


def _random_segs(rng, shape=(12, 15), m=3, k=(2, 5, 7)):
    return [rng.integers(0, k[j % len(k)], size=shape) for j in range(m)]


def test_segmentation_relabels_contiguously_by_first_occurrence():
    seg = Segmentation(np.array([[9, 9, 4], [4, 100, 9]]))
    assert seg.labels.dtype == np.int32
    assert seg.labels.tolist() == [[0, 0, 1], [1, 2, 0]]
    assert seg.n_segments == 3


@pytest.mark.parametrize("seed", range(3))
def test_canonical_codes_by_a_table_equal_the_codes_by_sorting(seed):
    """Labels of a bounded range are numbered without a sort: the same codes and old labels (and dtypes) as the
    definition through np.unique, for every integer dtype, with and without a declared number of labels."""
    from segensemble.segmentation import canonical_codes

    gen = np.random.default_rng(seed)
    for t in range(400):
        n, hi = int(gen.integers(1, 60)), int(gen.choice([1, 3, 10, 200, 10**7]))
        dtype = [np.int64, np.int32, np.uint8, np.uint16][t % 4] if hi <= 200 else np.int64
        labels = gen.integers(0, hi, size=n).astype(dtype)
        n_labels = int(labels.max()) + 1 + t % 3 if hi <= 200 and t % 2 else None
        uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(uniq), dtype=np.int64)
        rank[order] = np.arange(len(uniq))
        old = uniq[order].astype(np.int64)
        if n_labels is not None and n_labels > len(uniq):
            old = np.concatenate([old, np.setdiff1d(np.arange(n_labels), uniq)])
        codes, old_of_new = canonical_codes(labels, n_labels)
        assert np.array_equal(codes, rank[inverse.ravel()]) and codes.dtype == np.int32
        assert np.array_equal(old_of_new, old) and old_of_new.dtype == np.int64


def test_segmentation_memberships_validated():
    lab = np.array([[0, 1]])
    mem = np.array([[[0.7, 0.3], [0.2, 0.8]]])
    seg = Segmentation(lab, memberships=mem)
    assert seg.memberships.dtype == np.float32 and seg.n_segments == 2
    with pytest.raises(InputError, match="memberships"):
        Segmentation(lab, memberships=mem * 2)
    with pytest.raises(InputError, match="labels"):
        Segmentation(np.array([[0, 2]]), memberships=mem)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.array([[0.5, 1.0]]), "non-integer"),
        (np.array([[-2, 0]]), "non-negative"),  # -1 is "unlabelled" (segensemble.abstentions)
        (np.array([[np.nan, 0]]), "NaN"),
        (np.array([[2**40, 0]]), "int32"),
        (np.zeros((0, 3)), "empty"),
        (np.zeros(3), "2-D"),
    ],
)
def test_bad_label_maps_rejected(bad, match):
    with pytest.raises(InputError, match=match):
        Segmentation(bad)


def test_minus_one_is_an_unlabelled_pixel():
    seg = Segmentation(np.array([[-1, 5], [5, 9]]))
    assert seg.labels.tolist() == [[-1, 0], [0, 1]] and seg.n_segments == 2


def test_atoms_exact_hand_example():
    a = np.array([[0, 0, 1], [0, 0, 1]])
    b = np.array([[0, 1, 1], [0, 1, 1]])
    ens = Ensemble.from_segmentations([a, b])
    assert ens.index.tolist() == [[0, 1, 2], [0, 1, 2]]
    assert ens.weights.tolist() == [2.0, 2.0, 2.0]
    assert ens.labels.tolist() == [[0, 0], [0, 1], [1, 1]]


def test_atoms_weights_sum_to_pixels_and_to_image_round_trips():
    rng = np.random.default_rng(0)
    segs = _random_segs(rng)
    ens = Ensemble.from_segmentations(segs)
    assert ens.weights.sum() == 12 * 15
    for j, s in enumerate(segs):
        back = ens.to_image(ens.labels[:, j])
        # same partition as the member (labels renumbered)
        assert np.array_equal(Segmentation(back).labels, Segmentation(s).labels)
    # pixels of one atom share every member label; distinct atoms differ somewhere
    assert len({tuple(r) for r in ens.labels.tolist()}) == ens.n_objects


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_atoms_invariant_to_relabelling_any_member(seed):
    rng = np.random.default_rng(seed)
    segs = _random_segs(rng, m=4)
    ens = Ensemble.from_segmentations(segs)
    j = int(rng.integers(len(segs)))
    perm = rng.permutation(100)
    relabelled = [s.copy() for s in segs]
    relabelled[j] = perm[segs[j]]
    ens2 = Ensemble.from_segmentations(relabelled)
    assert np.array_equal(ens.index, ens2.index)
    assert np.array_equal(ens.labels, ens2.labels)
    assert np.array_equal(ens.weights, ens2.weights)


def test_many_members_do_not_overflow_signatures():
    rng = np.random.default_rng(1)
    segs = [rng.integers(0, 60000, size=(20, 20)) for _ in range(8)]  # 60000^8 >> 2^63
    ens = Ensemble.from_segmentations(segs)
    assert ens.n_objects == len({tuple(int(s[i, j]) for s in segs) for i in range(20) for j in range(20)})


def test_memberships_and_features_are_weighted_atom_means():
    lab = np.array([[0, 0, 1]])
    mem = np.array([[[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]])
    seg_soft = Segmentation(lab, memberships=mem)
    seg_hard = np.array([[0, 0, 1]])
    feats = np.array([[[1.0], [3.0], [10.0]]])
    ens = Ensemble.from_segmentations([seg_soft, seg_hard], features=feats)
    assert ens.weights.tolist() == [2.0, 1.0]
    np.testing.assert_allclose(ens.memberships[0], [[0.75, 0.25], [0.0, 1.0]])
    assert ens.memberships[1] is None
    np.testing.assert_allclose(ens.features, [[2.0], [10.0]])


def test_image_features_are_atom_means_of_the_pixel_features(blocks_image):
    from segensemble.features import pixel_feature_names, pixel_features

    image, truth = blocks_image
    ens = Ensemble.from_segmentations([truth], image=image)
    f = pixel_features(image)
    assert ens.features.shape == (4, f.shape[2]) and ens.feature_names == pixel_feature_names()
    for atom in range(4):
        np.testing.assert_allclose(ens.features[atom], f[ens.index == atom].mean(axis=0), atol=1e-9)


def test_shape_mismatch_rejected():
    with pytest.raises(InputError, match="same shape"):
        Ensemble.from_segmentations([np.zeros((3, 4), int), np.zeros((4, 3), int)])


def test_canonical_codes_of_a_wide_range_by_hashing_equal_the_codes_by_sorting():
    """Labels of a wide range (several members' signatures) are numbered through a hash table that grows with
    the distinct labels: the codes and old labels of the definition through np.unique, across many growths of the
    table, heavy repetition, keys up to 2^62, uint64 (above 2^63 through np.unique) and a declared label count."""
    from segensemble._first_occurrence import first_occurrence_codes
    from segensemble.segmentation import canonical_codes

    gen = np.random.default_rng(4)
    for t in range(30):
        n = int(gen.integers(1, 40000))
        labels = gen.integers(0, 2**62 if t % 2 else 10**9, size=int(gen.integers(1, n + 1)))
        labels = labels[gen.integers(0, len(labels), n)]  # every distinct label repeated
        if t % 5 == 4:
            labels = labels.astype(np.uint64) + (np.uint64(2**63) if t % 10 == 9 else np.uint64(0))
        uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(uniq), dtype=np.int64)
        rank[order] = np.arange(len(uniq))
        codes, old_of_new = canonical_codes(labels)
        assert np.array_equal(codes, rank[inverse.ravel()]) and codes.dtype == np.int32
        assert np.array_equal(old_of_new, uniq[order].astype(np.int64)) and old_of_new.dtype == np.int64
    codes, old = canonical_codes(np.array([10**12, 5, 10**12, 7]), n_labels=9)
    assert codes.tolist() == [0, 1, 0, 2] and old.tolist() == [10**12, 5, 7, 0, 1, 2, 3, 4, 6, 8]
    with pytest.raises(ValueError, match="non-negative"):
        first_occurrence_codes(np.array([3, -2], dtype=np.int64))


def test_signatures_of_many_members_number_the_distinct_rows_by_first_occurrence():
    """With so many members that the packed key overflows (it is renumbered on the way), the signatures' codes are
    still the rows' codes by first occurrence: equal codes exactly for equal rows (np.unique over rows)."""
    from segensemble.segmentation import canonical_codes, signature_codes

    gen = np.random.default_rng(8)
    for t in range(12):
        n, m = int(gen.integers(1, 4000)), int(gen.integers(20, 90))
        base = gen.integers(0, 40, size=(int(gen.integers(1, n + 1)), m))
        rows = base[gen.integers(0, len(base), n)]  # repeated rows
        _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        for dtype in (np.int64, np.int32, np.uint8, np.uint64):  # labels of any integer dtype
            codes, _ = canonical_codes(signature_codes(list(rows.T.astype(dtype))))
            assert np.array_equal(codes, rank[inverse.ravel()]), dtype


def test_from_labels_canonical_and_weights():
    ens = Ensemble.from_labels([[3, 0], [3, 1], [8, 1]], weights=[1, 2, 3])
    assert ens.labels.tolist() == [[0, 0], [0, 1], [1, 1]]
    assert ens.n_clusters == (2, 2)
    with pytest.raises(InputError, match="weights"):
        Ensemble.from_labels([[0], [1]], weights=[1, 0])


def test_incidence_and_coassociation_products_match_dense():
    rng = np.random.default_rng(2)
    L = np.stack([rng.integers(0, k, 50) for k in (3, 4, 6)], axis=1)
    ens = Ensemble.from_labels(L)
    X = np.mean([(L[:, [j]] == L[:, j]) for j in range(3)], axis=0)
    np.testing.assert_allclose(ens.coassociation(), X)
    v = rng.standard_normal((50, 2))
    np.testing.assert_allclose(ens.coassociation_matvec(v), X @ v)
    a = np.array([1.0, 2.0, 5.0])
    Xa = sum(a[j] * (L[:, [j]] == L[:, j]) for j in range(3)) / a.sum()
    np.testing.assert_allclose(ens.coassociation_matvec(v[:, 0], member_weights=a), Xa @ v[:, 0])
    assert ens.incidence.shape == (50, sum(ens.n_clusters))
    assert np.all(ens.incidence.sum(axis=1) == 3)


def test_input_arrays_not_modified():
    rng = np.random.default_rng(3)
    segs = _random_segs(rng)
    copies = [s.copy() for s in segs]
    Ensemble.from_segmentations(segs)
    assert all(np.array_equal(a, b) for a, b in zip(segs, copies))


def _random_label_rows(gen, max_n, max_m, *, abstain):
    """(n, m) labels, n < max_n objects, m < max_m members of fewer than max_m clusters each; with ``abstain``, a
    fifth of the entries -1 except in the first member (every object labelled by some member)."""
    n, m = int(gen.integers(1, max_n)), int(gen.integers(1, max_m))
    L = np.stack([gen.integers(0, int(gen.integers(1, max_m)), size=n) for _ in range(m)], axis=1)
    if abstain:
        L[gen.random(L.shape) < 0.2] = -1
        L[:, 0] = np.maximum(L[:, 0], 0)
    return L


def test_collapsed_ensemble_equals_one_built_and_checked_from_its_rows():
    """collapse_duplicate_rows builds the reduced ensemble without checking or renumbering (its codes are
    canonical already): the same labels, clusters, weights and names as the checked constructor gives, and the
    same attributes (a new one in the constructor must be carried there too); members abstaining or not."""
    from segensemble.consensus._base import collapse_duplicate_rows

    gen = np.random.default_rng(4)
    for t in range(300):
        L = _random_label_rows(gen, 80, 5, abstain=t % 3 == 0)
        n = len(L)
        w = gen.integers(1, 4, size=n).astype(np.float64) if t % 2 else None
        ens = Ensemble.from_labels(L, weights=w)
        reduced, inverse = collapse_duplicate_rows(ens)
        checked = Ensemble(ens.labels[np.unique(inverse, return_index=True)[1]], reduced.weights, names=ens.names)
        assert np.array_equal(reduced.labels, checked.labels) and reduced.labels.dtype == checked.labels.dtype
        assert reduced.n_clusters == checked.n_clusters and reduced.names == checked.names
        assert np.array_equal(reduced.weights, checked.weights)
        assert np.array_equal(reduced.labels[inverse], ens.labels)
        assert sorted(vars(reduced)) == sorted(vars(checked))


def test_collapsing_a_collapse_returns_it_as_the_full_computation_would():
    """A collapse's result is returned as it is when collapsed again (Basic's start inside EM and NMF): the full
    computation on the same rows, built anew, gives the same labels and weights and the identity as inverse."""
    from segensemble.consensus._base import collapse_duplicate_rows

    gen = np.random.default_rng(5)
    for t in range(200):
        L = _random_label_rows(gen, 60, 4, abstain=t % 3 == 0)
        reduced, _ = collapse_duplicate_rows(Ensemble.from_labels(L, weights=gen.random(len(L)) + 0.5))
        again, inverse = collapse_duplicate_rows(reduced)
        assert again is reduced and np.array_equal(inverse, np.arange(reduced.n_objects))
        rebuilt, full_inverse = collapse_duplicate_rows(Ensemble(reduced.labels, reduced.weights))
        assert rebuilt is not reduced and np.array_equal(full_inverse, inverse)
        assert np.array_equal(rebuilt.labels, reduced.labels) and np.array_equal(rebuilt.weights, reduced.weights)
