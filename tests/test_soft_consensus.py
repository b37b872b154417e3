"""Soft consensus: Borda, confidence voting, DWH, alignment, references, confidence maps."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from segensemble import Ensemble, InputError, consensus
from segensemble.consensus.soft import align_memberships, borda_points, confidence, resolve_reference

SOFT = ["borda", "vote_sum", "vote_product", "dwh"]


def _soft_kmeans_ensemble(n_members=6, ks=None, seed=0):
    """Well-separated blobs; members are k-means runs with softmax memberships, labels permuted per member."""
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    truth = np.repeat(np.arange(3), 40)
    X = centres[truth] + rng.normal(0, 0.8, size=(len(truth), 2))
    labels, mems = [], []
    for j in range(n_members):
        k = 3 if ks is None else ks[j]
        km = KMeans(k, n_init=1, random_state=j).fit(X)
        d = ((X[:, None, :] - km.cluster_centers_[None]) ** 2).sum(axis=2)
        M = np.exp(-(d - d.min(axis=1, keepdims=True)) / 2.0)
        M /= M.sum(axis=1, keepdims=True)
        perm = rng.permutation(k)  # member-specific label permutation, memberships follow
        labels.append(perm[km.labels_])
        inv = np.argsort(perm)
        mems.append(M[:, inv])
    return Ensemble(np.stack(labels, axis=1), memberships=mems), truth


@pytest.mark.parametrize("name", SOFT)
def test_soft_methods_recover_well_separated_blobs(name):
    ens, truth = _soft_kmeans_ensemble()
    est = consensus.get(name)(n_clusters=3).fit(ens)
    assert adjusted_rand_score(truth, est.labels_) == 1.0
    M = est.memberships_
    assert M.shape == (len(truth), 3) and np.allclose(M.sum(axis=1), 1.0) and np.all(M >= 0)
    assert np.array_equal(np.argmax(M, axis=1), est.labels_)  # columns follow labels_


@pytest.mark.parametrize("name", SOFT)
def test_members_with_different_numbers_of_clusters(name):
    ens, truth = _soft_kmeans_ensemble(ks=[4, 3, 4, 3, 5, 3])
    est = consensus.get(name)(n_clusters=3, reference="largest").fit(ens)
    assert est.reference_ == 1  # 'largest' with K = 3: the first member with three clusters
    assert adjusted_rand_score(truth, est.labels_) == 1.0


@pytest.mark.parametrize("name", SOFT)
def test_invariant_to_permuting_a_members_labels_and_memberships_together(name):
    ens, _ = _soft_kmeans_ensemble(n_members=4, seed=3)
    base = consensus.get(name)(n_clusters=3).fit(ens).labels_
    perm = np.array([2, 0, 1])
    labels = ens.labels.copy()
    labels[:, 2] = perm[labels[:, 2]]
    mems = list(ens.memberships)
    mems[2] = mems[2][:, np.argsort(perm)]
    again = consensus.get(name)(n_clusters=3).fit(Ensemble(labels, memberships=mems)).labels_
    assert np.array_equal(base, again)


_HAND_MEMBERSHIPS = np.array([[0.8, 0.2], [0.8, 0.2], [0.3, 0.7]])
_HAND_LABELS = np.array([[0, 0], [0, 1], [1, 1]])


def test_borda_scores_match_a_hand_worked_example_with_ties_and_weights():
    # N = 4 positions (u0 has weight 2). Member A, column 0: u0, u1 tie at 0.8 over 3 positions -> 3 points each,
    # u2 last -> 1; column 1: u2 top -> 4, u0/u1 tied over positions 2-4 -> 2. Member B (one-hot [0, 1, 1],
    # aligned to A by identity): column 0: u0 over positions 1-2 -> 3.5, u1/u2 -> 1.5; column 1 mirrored.
    expected = np.array([[6.5, 3.5], [4.5, 5.5], [2.5, 7.5]])
    atoms = Ensemble(_HAND_LABELS, np.array([2.0, 1.0, 1.0]), memberships=[_HAND_MEMBERSHIPS, None])
    est = consensus.get("borda")(n_clusters=2, reference=0).fit(atoms)
    assert np.allclose(est.scores_, expected)
    assert est.labels_.tolist() == [0, 1, 1]
    rows = [0, 0, 1, 2]  # the same problem with u0 as two objects of weight 1
    copies = Ensemble(_HAND_LABELS[rows], memberships=[_HAND_MEMBERSHIPS[rows], None])
    dup = consensus.get("borda")(n_clusters=2, reference=0).fit(copies)
    assert np.allclose(dup.scores_, expected[rows])
    assert np.allclose(dup.memberships_, est.memberships_[rows])
    # the reference's column order is not the canonical one: columns follow labels_
    flipped = Ensemble(_HAND_LABELS[::-1], np.array([1.0, 1.0, 2.0]), memberships=[_HAND_MEMBERSHIPS[::-1], None])
    est = consensus.get("borda")(n_clusters=2, reference=0).fit(flipped)
    assert est.labels_.tolist() == [0, 0, 1]
    assert np.allclose(est.scores_, expected[::-1][:, ::-1])


def test_borda_points_average_tied_positions():
    A = np.array([[0.5], [0.9], [0.5], [0.5]])
    # 0.9 first (4 points), the three 0.5 share positions 2-4 -> 2 points each
    assert borda_points(A, np.ones(4)).ravel().tolist() == [2.0, 4.0, 2.0, 2.0]
    # weight 3 on the top object: it takes positions 1-3 -> 5 points of N = 6; the rest share 4-6 -> 2
    assert borda_points(A, np.array([1.0, 3.0, 1.0, 1.0])).ravel().tolist() == [2.0, 5.0, 2.0, 2.0]


def test_alignment_matches_and_merges_clusters():
    R = np.eye(2)[[0, 0, 1, 1, 1]]
    A = np.eye(3)[[2, 2, 0, 1, 1]]  # three clusters; 0 and 1 both overlap reference cluster 1
    out = align_memberships(A, R, np.ones(5))
    assert out.tolist() == np.eye(2)[[0, 0, 1, 1, 1]].tolist()
    # a member with fewer clusters leaves a column empty
    out = align_memberships(np.ones((5, 1)), np.eye(3)[[0, 1, 2, 2, 2]], np.ones(5))
    assert out[:, 2].tolist() == [1.0] * 5 and out[:, :2].sum() == 0


def test_reference_choices():
    L = np.array([[0, 0, 0], [0, 1, 0], [1, 2, 1], [1, 2, 1]])
    ens = Ensemble.from_labels(L)
    assert resolve_reference(ens, "largest", "auto")[1] == 1
    assert resolve_reference(ens, "largest", 2)[1] == 0
    assert resolve_reference(ens, "medoid", 2)[1] in (0, 2)
    assert resolve_reference(ens, 2, "auto")[1] == 2
    M, j = resolve_reference(ens, "largest", 4)  # nobody has 4 clusters: the Basic consensus
    assert j is None and M.shape[1] <= 4
    with pytest.raises(InputError, match="reference: member 1 has 3 clusters but n_clusters=2"):
        resolve_reference(ens, 1, 2)
    with pytest.raises(InputError, match="reference: expected a member index below 3"):
        consensus.get("borda")(reference=5).fit(ens)


def test_dwh_uses_the_running_consensus_in_member_order():
    # reference [0,0,1,1]; the second member splits differently; the third agrees with the reference
    L = np.array([[0, 0, 0], [0, 1, 0], [1, 1, 1], [1, 1, 1]])
    est = consensus.get("dwh")(n_clusters=2, reference=0).fit(L)
    assert np.allclose(est.memberships_, [[1, 0], [2 / 3, 1 / 3], [0, 1], [0, 1]])


def test_vote_product_needs_every_member_and_vote_sum_averages():
    L = np.array([[0, 0, 0], [0, 0, 1], [1, 1, 1], [1, 1, 1]])
    s = consensus.get("vote_sum")(n_clusters=2, reference=0).fit(L)
    assert np.allclose(s.memberships_[1], [2 / 3, 1 / 3])
    p = consensus.get("vote_product")(n_clusters=2, reference=0, eps=0.1).fit(L)
    # product of (1, 1, 0.1) vs (0.1, 0.1, 1), normalised
    assert np.allclose(p.memberships_[1], [0.1 / (0.1 + 0.01), 0.01 / (0.1 + 0.01)])


def test_confidence_measures():
    M = np.array([[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0.0]])
    assert np.allclose(confidence(M), [1.0, 1 / 3, 0.5])
    assert np.allclose(confidence(M, "entropy"), [1.0, 0.0, 1 - np.log(2) / np.log(3)])
    with pytest.raises(InputError, match="kind"):
        confidence(M, "margin")


@pytest.mark.parametrize("seed", range(5))
def test_borda_points_of_hard_and_soft_columns_follow_the_definition(seed):
    """Brute force from the definition (N - weight strictly above - (tied weight - 1) / 2) on one-hot columns
    (counted without a sort), all-ones and all-zeros columns, and soft columns with ties, weighted objects."""
    rng = np.random.default_rng(seed)
    n = 40
    w = np.round(rng.uniform(1, 4, n)) if seed % 2 else rng.uniform(0.2, 3, n)
    hard = np.eye(4)[rng.integers(0, 3, n)]  # the fourth column is all zeros
    hard[:, 3] = 1.0 if seed == 0 else hard[:, 3]
    soft = rng.random((n, 3)).round(1)
    for A in (hard, soft):
        expected = np.array([[w.sum() - w[A[:, c] > A[i, c]].sum() - (w[A[:, c] == A[i, c]].sum() - 1) / 2
                              for c in range(A.shape[1])] for i in range(n)])
        np.testing.assert_allclose(borda_points(A, w), expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", ["borda", "vote_sum", "vote_product"])
@pytest.mark.parametrize("seed", range(3))
def test_voting_from_hard_labels_equals_voting_on_aligned_one_hot_memberships(name, seed, monkeypatch):
    """Hard members and whole weights take the label path: scores, labels and memberships equal the path through
    aligned one-hot memberships (and, for Borda, ranked columns), bit for bit (members with one to five
    clusters, several numbers of clusters, both references, weights as copies)."""
    from segensemble import Ensemble
    from segensemble.consensus import get, soft

    gen = np.random.default_rng(seed)
    cases = []
    for t in range(40):
        n, m = int(gen.integers(3, 50)), int(gen.integers(1, 6))
        L = np.stack([gen.integers(0, int(gen.integers(1, 6)), size=n) for _ in range(m)], axis=1)
        w = gen.integers(1, 5, size=n).astype(np.float64) if t % 2 else None
        ens = Ensemble.from_labels(L, weights=w)
        k = ["auto", 1, 2, 3][t % 4]
        cases.append((ens, dict(n_clusters=k, reference=["medoid", "largest"][t % 3 == 0])))
    fast = [get(name)(**kw).fit(ens) for ens, kw in cases]
    assert soft.hard_and_whole(cases[0][0])
    monkeypatch.setattr(soft, "hard_and_whole", lambda ensemble: False)
    for a, (ens, kw) in zip(fast, cases):
        b = get(name)(**kw).fit(ens)
        assert np.array_equal(a.labels_, b.labels_) and np.array_equal(a.memberships_, b.memberships_)
        assert a.reference_ == b.reference_
        if name == "borda":
            assert np.array_equal(a.scores_, b.scores_)


def test_dwh_leaves_the_reference_members_memberships_as_given():
    """DWH's running average starts from the reference's memberships and is then updated in place: the member's
    own array (the ensemble's) must not be the one written to."""
    ens = Ensemble(np.array([[0, 0, 1], [0, 1, 1], [1, 1, 0], [1, 0, 0]]),
                   memberships=[np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.3, 0.7]]), None, None])
    before = ens.memberships[0].copy()
    est = consensus.get("dwh")(n_clusters=2, reference=0).fit(ens)
    assert np.array_equal(ens.memberships[0], before)
    # (t - 1) / t C + A_t / t over members 1 and 2, each aligned to the running C
    assert np.allclose(est.memberships_.sum(axis=1), 1.0) and est.labels_.tolist() == [0, 0, 1, 1]


@pytest.mark.parametrize("seed", range(6))
def test_dwh_hard_members_equal_the_same_members_given_as_one_hot_memberships(seed):
    """A hard member enters DWH's running average through its aligned column alone (average_in_one_hot, its
    overlap summed in row blocks); given as one-hot memberships it goes through the whole aligned block and the
    dense overlap: the same bits, whole or fractional weights (the overlaps' rounding differences stay below
    matched_columns' quantisation)."""
    rng = np.random.default_rng(seed)
    L = np.stack([rng.integers(0, k, 60) for k in (3, 4, 3, 5, 2)], axis=1)
    weights = rng.integers(1, 4, 60).astype(float) if seed % 2 else rng.random(60) + 0.1
    soft = Ensemble(L, weights, memberships=[np.eye(L[:, j].max() + 1)[L[:, j]] for j in range(5)])
    for reference in ("medoid", 2):
        a = consensus.get("dwh")(n_clusters=3, reference=reference).fit(Ensemble(L, weights))
        b = consensus.get("dwh")(n_clusters=3, reference=reference).fit(soft)
        assert a.memberships_.tobytes() == b.memberships_.tobytes() and np.array_equal(a.labels_, b.labels_)


def test_row_block_helpers_equal_their_whole_array_definitions(monkeypatch):
    """The aligned voting helpers work on blocks of rows (cache-sized); with blocks of 3 rows they must give the
    plain whole-array results on tables of 10-20 rows (a last, shorter block included)."""
    from segensemble.consensus import _hard_labels

    rng = np.random.default_rng(0)
    A, R = rng.random((10, 3)), np.eye(2)[rng.integers(0, 2, 10)]
    whole = align_memberships(A, R, np.ones(10))  # one block of 4 096 rows
    L = rng.integers(0, 3, (20, 5))
    voting = {name: consensus.get(name)(n_clusters=3).fit(L).memberships_ for name in ("dwh", "borda", "vote_sum")}
    monkeypatch.setattr(_hard_labels, "ROW_BLOCK", 3)
    assert np.array_equal(align_memberships(A, R, np.ones(10)), whole)
    for name, memberships in voting.items():  # blocks through all the members (borda, vote_sum) or one (dwh)
        assert consensus.get(name)(n_clusters=3).fit(L).memberships_.tobytes() == memberships.tobytes(), name
    table, columns, values = rng.random((10, 4)), rng.integers(0, 4, 10), rng.random(10)
    expected = table.copy()
    expected[np.arange(10), columns] += values
    _hard_labels.add_in_columns(table, columns, values)
    assert np.array_equal(table, expected)
    counts = np.zeros((10, 4), dtype=np.uint8)
    _hard_labels.add_in_columns(counts, columns, 1)
    assert counts.sum() == 10 and np.array_equal(np.argmax(counts, axis=1), columns)
    S = rng.normal(size=(10, 4)) * 20
    E = np.exp(S / 2.0 / 0.5 - (S / 2.0 / 0.5).max(axis=1, keepdims=True))
    assert np.allclose(_hard_labels.row_softmax(S, 2.0, 0.5), E / E.sum(axis=1, keepdims=True), rtol=0, atol=1e-15)
