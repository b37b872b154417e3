"""Method-specific consensus tests: recovery, exact reformulations, refinement."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from segensemble import Ensemble, InputError, consensus
from segensemble.consensus._refine import local_refinement
from segensemble.consensus.bestofk import mirkin_distance_matrix
from segensemble.consensus.coassociation import _gram
from segensemble.datasets import rpm_ensemble
from segensemble.segmentation import canonical_codes

RECOVERING = ["basic", "spectral", "kcc", "em", "vote", "hbgf", "eac", "cspa", "hgpa", "mcla"]


@pytest.mark.parametrize("name", RECOVERING)
def test_recovers_the_truth_under_moderate_noise(name):
    L, z = rpm_ensemble(300, 10, 4, 0.3, rng=1)
    labels = consensus.get(name)(n_clusters=4).fit(L).labels_
    assert adjusted_rand_score(z, labels) > 0.95


def test_basic_is_exactly_kmeans_on_the_rows_of_X():
    """The metric G = H^T W H gives the same squared distances as the dense rows of X (times m^2)."""
    rng = np.random.default_rng(0)
    L, _ = rpm_ensemble(40, 5, 3, 0.3, rng=0)
    w = rng.integers(1, 4, 40).astype(float)
    ens = Ensemble.from_labels(L, w)
    H = ens.incidence.toarray()
    X = H @ H.T / 5
    G = _gram(ens)
    i, j = 3, 17
    dense = np.sum(w * (X[i] - X[j]) ** 2)  # rows of X over weighted objects
    assert dense == pytest.approx((H[i] - H[j]) @ G @ (H[i] - H[j]) / 25)
    est = consensus.get("basic")(n_clusters=3).fit(ens)
    # the reported inertia is the dense k-means objective (up to the 1/m^2 scale)
    labels = est.labels_
    dense_inertia = 0.0
    for c in range(3):
        sel = labels == c
        centre = np.average(X[sel], axis=0, weights=w[sel])
        dense_inertia += np.sum(w[sel] * (((X[sel] - centre) ** 2) * w[None, :]).sum(axis=1))
    assert est.inertia_ / 25 == pytest.approx(dense_inertia)


def test_refinement_improves_unbalanced_ensembles():
    gains = []
    for r in range(10):
        L, z = rpm_ensemble(100, 20, 6, 0.45, p1=0.75, rng=r)
        plain = consensus.get("basic")(n_clusters=6, init="random", random_state=r).fit(L).labels_
        refined = local_refinement(Ensemble.from_labels(L), plain)
        gains.append(adjusted_rand_score(z, refined) - adjusted_rand_score(z, plain))
    assert np.mean(gains) > 0.2


def test_local_refinement_weighted_atoms_equal_copies():
    rng = np.random.default_rng(3)
    L, _ = rpm_ensemble(30, 6, 3, 0.4, rng=3)
    w = rng.integers(1, 5, 30)
    init = rng.integers(0, 3, 30)
    a = local_refinement(Ensemble.from_labels(L, w), init, n_iter=3)
    b = local_refinement(Ensemble.from_labels(np.repeat(L, w, axis=0)), np.repeat(init, w), n_iter=3)
    assert np.array_equal(np.repeat(a, w), b)


def test_mirkin_distance_matches_pair_counting():
    L = np.array([[0, 0], [0, 1], [1, 1], [1, 1]])
    D = mirkin_distance_matrix(Ensemble.from_labels(L))
    a, b = L[:, 0], L[:, 1]
    disagree = sum((a[i] == a[j]) != (b[i] == b[j]) for i in range(4) for j in range(4))
    assert D[0, 1] == disagree


def test_mirkin_distance_counted_in_blocks_of_objects_is_the_pair_count(monkeypatch):
    """With whole weights the counts are summed a block of objects at a time (7 here, a shorter last block): the
    same numbers as the weighted pair count; fractional weights keep the one-pass sums."""
    from segensemble.consensus import bestofk

    monkeypatch.setattr(bestofk, "MIRKIN_BLOCK", 7)
    rng = np.random.default_rng(4)
    L = np.stack([rng.integers(0, 3, 30), rng.integers(0, 5, 30), rng.integers(0, 2, 30)], axis=1)
    for w in (rng.integers(1, 4, 30).astype(float), rng.random(30) + 0.5):
        D = mirkin_distance_matrix(Ensemble.from_labels(L, w))
        for a, b in ((0, 1), (0, 2), (1, 2)):
            x, y = L[:, a], L[:, b]
            same = (x[:, None] == x[None, :]) != (y[:, None] == y[None, :])
            assert D[a, b] == pytest.approx(float(w @ same @ w), rel=1e-12)


def test_mirkin_distance_with_many_labels_counts_only_the_pairs_that_occur():
    # 60 objects, members of 40-60 labels: ka x kb cells (up to 3 600) above 4 n + 1 024, the sparse path
    rng = np.random.default_rng(3)
    L = np.stack([rng.permutation(60), rng.integers(0, 40, 60), rng.permutation(60) // 1], axis=1)
    w = rng.integers(1, 4, 60).astype(float)
    D = mirkin_distance_matrix(Ensemble.from_labels(L, w))
    for a, b in ((0, 1), (0, 2), (1, 2)):
        x, y = L[:, a], L[:, b]
        same = (x[:, None] == x[None, :]) != (y[:, None] == y[None, :])
        assert D[a, b] == pytest.approx(float(w @ same @ w))


def test_em_memberships_and_likelihood():
    L, z = rpm_ensemble(200, 8, 3, 0.3, rng=2)
    est = consensus.get("em")(n_clusters=3).fit(L)
    assert np.allclose(est.memberships_.sum(axis=1), 1)
    assert np.isfinite(est.log_likelihood_) and est.n_iter_ >= 1


def test_em_one_iteration_is_the_mixture_update_by_hand(monkeypatch):
    """One EM step from the Basic start, written out object by object (Topchy, Jain & Punch's updates with the
    Dirichlet pseudo-count; a member that abstains is left out of the object's likelihood and of its label
    frequencies; weights count as copies); the E step in blocks of 7 objects gives the same bits as in one."""
    from segensemble.consensus import mixture
    from segensemble.segmentation import canonical_codes

    rng = np.random.default_rng(6)
    L = rng.integers(0, 3, (40, 3))
    L[:, 1:][rng.random((40, 2)) < 0.25] = -1
    w, s = rng.integers(1, 4, 40).astype(float), 1e-3
    ens = Ensemble.from_labels(L, w)
    est = consensus.get("em")(n_clusters=3, max_iter=1, smoothing=s).fit(ens)
    R = np.eye(3)[consensus.get("basic")(n_clusters=3).fit(ens).labels_]
    Rw = R * w[:, None]
    logp = np.tile(np.log((Rw.sum(axis=0) + s) / (w.sum() + 3 * s)), (40, 1))
    for j, kj in enumerate(ens.n_clusters):
        lab = ens.labels[:, j]
        theta = np.array([Rw[lab == v].sum(axis=0) + s for v in range(kj)]) / (Rw[lab >= 0].sum(axis=0) + kj * s)
        logp[lab >= 0] += np.log(theta[lab[lab >= 0]])
    P = np.exp(logp - logp.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    labels, old = canonical_codes(np.argmax(P, axis=1), 3)
    assert np.array_equal(est.labels_, labels)
    assert np.allclose(est.memberships_, P[:, old], rtol=0, atol=1e-12)
    monkeypatch.setattr(mixture, "EM_BLOCK", 7)
    blocked = consensus.get("em")(n_clusters=3, smoothing=s).fit(ens)
    monkeypatch.setattr(mixture, "EM_BLOCK", 8192)
    whole = consensus.get("em")(n_clusters=3, smoothing=s).fit(ens)
    assert blocked.memberships_.tobytes() == whole.memberships_.tobytes()
    assert blocked.log_likelihood_ == whole.log_likelihood_ and blocked.n_iter_ == whole.n_iter_


def test_vote_reference_and_memberships():
    L, z = rpm_ensemble(200, 8, 3, 0.3, rng=4)
    est = consensus.get("vote")(n_clusters=3).fit(L)
    assert est.reference_ is not None and np.allclose(est.memberships_.sum(axis=1), 1)
    # no member has 7 clusters: the Basic consensus is the reference
    assert consensus.get("vote")(n_clusters=7).fit(L).reference_ is None


def test_eigengap_auto():
    L, _ = rpm_ensemble(300, 10, 5, 0.2, rng=0)
    assert consensus.get("basic")().fit(L).n_clusters_ == 5


@pytest.mark.parametrize("name", ["hgpa", "mcla", "basic", "kcc", "spectral", "em", "vote", "hbgf"])
def test_scalable_methods_recover_at_scale(name):
    L, z = rpm_ensemble(20000, 10, 8, 0.3, rng=5)
    assert adjusted_rand_score(z, consensus.get(name)(n_clusters=8).fit(L).labels_) > 0.95


def test_pairwise_methods_refuse_beyond_the_dense_limit(monkeypatch):
    import segensemble.ensemble as ens_mod
    from segensemble import InputError

    monkeypatch.setattr(ens_mod, "DENSE_OBJECT_LIMIT", 50)
    L, _ = rpm_ensemble(200, 5, 3, 0.5, rng=0)
    with pytest.raises(InputError, match="limited to 50 objects"):
        consensus.get("eac")(n_clusters=3).fit(L)


def test_cspa_beyond_the_dense_limit_partitions_its_heaviest_rows_and_places_the_rest(monkeypatch):
    """Above the dense limit CSPA gives METIS the graph of its heaviest rows only (as the whole graph when they are
    all the rows); every other row joins the part whose core rows it is most co-associated with in sum — checked
    against the dense co-association — and the result still recovers the clusters (with 150 of 1 495 rows)."""
    import segensemble.ensemble as ens_mod
    from segensemble.consensus import metis

    L, z = rpm_ensemble(3000, 8, 4, 0.3, rng=1)
    rows, inverse, copies = np.unique(L, axis=0, return_inverse=True, return_counts=True)
    ens = Ensemble.from_labels(rows, copies.astype(float))
    X = ens.coassociation()  # before the limit is lowered
    monkeypatch.setattr(ens_mod, "DENSE_OBJECT_LIMIT", 200)
    monkeypatch.setattr(metis, "CSPA_CORE_ROWS", 150)
    got = consensus.get("cspa")(n_clusters=4)._fit(ens)
    core = np.sort(np.argsort(-ens.weights, kind="stable")[:150])
    core_only = ens._rows(core, ens.weights[core])
    monkeypatch.setattr(ens_mod, "DENSE_OBJECT_LIMIT", 16000)
    assert np.array_equal(got[core], consensus.get("cspa")(n_clusters=4)._fit(core_only))
    attraction = np.stack([(X[:, core] * (got[core] == p) * ens.weights[core]).sum(axis=1) for p in range(4)], 1)
    rest = np.setdiff1d(np.arange(len(rows)), core)
    assert np.array_equal(got[rest], np.argmax(attraction[rest], axis=1))
    assert adjusted_rand_score(z, got[inverse.ravel()]) > 0.9  # 0.926; the whole graph of 1 495 rows: 0.953


def test_correlation_cost_matches_pair_sum():
    from segensemble.consensus.correlation import correlation_cost

    rng = np.random.default_rng(0)
    L, _ = rpm_ensemble(12, 4, 3, 0.3, rng=0)
    w = rng.integers(1, 4, 12).astype(float)
    ens = Ensemble.from_labels(L, w)
    X = ens.coassociation()
    z = rng.integers(0, 3, 12)
    brute = sum(w[i] * w[j] * ((1 - X[i, j]) if z[i] == z[j] else X[i, j]) for i in range(12) for j in range(i + 1, 12))
    assert correlation_cost(ens, z) == pytest.approx(brute)


def _boem_by_definition(ens, k, steepest: bool, max_moves=None):
    """BOEM's moves recomputing every gain from the pair counts (dense, whole numbers: m * delta), from the
    same Best-of-K start: the best move of all (ties: smallest object, then cluster) or passes in object order.
    Pair (i, j) counts S_ij agreeing members out of the M_ij that label both (M = m without abstentions); an
    object the start member leaves unlabelled is placed first, in order, where sum w_j (M_ij - 2 S_ij) is least."""
    H, w = ens.incidence.toarray(), ens.weights.astype(np.int64)
    S = np.rint(H @ H.T).astype(np.int64)  # agreements: m X
    said = (ens.labels >= 0).astype(np.int64)
    M = said @ said.T
    best = consensus.get("bestofk")(n_clusters=k).fit(ens)
    z = np.unique(best.labels_, return_inverse=True)[1]
    if ens.abstains:
        z = ens.labels[:, best.best_member_].astype(np.int64)
        for i in np.flatnonzero(z < 0):
            placed = z >= 0
            Q = [np.sum((w * (M[i] - 2 * S[i]))[placed & (z == c)]) for c in range(z.max() + 1)]
            z[i] = int(np.argmin(Q))
    fixed = k != "auto"
    cols = z.max() + 1 + (0 if fixed else 1)
    moves = 0

    def gains(i):
        size = np.bincount(z, weights=w, minlength=cols).astype(np.int64)
        Q = np.array([np.sum((w * (M[i] - 2 * S[i]))[z == c]) for c in range(cols)])
        g = w[i] * (Q - Q[z[i]] - M[i, i] * w[i])
        g[z[i]] = np.iinfo(np.int64).max
        empty = np.flatnonzero(size == 0)
        if fixed:
            g[empty] = np.iinfo(np.int64).max
            if size[z[i]] <= w[i]:
                g[:] = np.iinfo(np.int64).max
        else:
            g[empty[1:]] = np.iinfo(np.int64).max
        return g

    def move(i, b):
        nonlocal cols
        z[i] = b
        if not fixed and not (np.bincount(z, minlength=cols) == 0).any():
            cols += 1

    while max_moves is None or moves < max_moves:
        if steepest:
            G = np.array([gains(i) for i in range(len(w))])
            i, b = divmod(int(np.argmin(G)), cols)
            if G[i, b] >= 0:
                break
            move(i, b)
            moves += 1
        else:
            moved = False
            for i in range(len(w)):
                g = gains(i)
                if g.min() < 0 and (max_moves is None or moves < max_moves):
                    move(i, int(np.argmin(g)))
                    moves += 1
                    moved = True
            if not moved:
                break
    return np.unique(z, return_inverse=True)[1], moves


@pytest.mark.parametrize("algorithm", ["passes", "steepest"])
@pytest.mark.parametrize("k", ["auto", 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("abstain", [False, True])
def test_boem_makes_the_moves_of_its_definition(algorithm, k, seed, abstain):
    """The compiled descents (bounds and heaps for 'steepest') against every gain recomputed from the pair counts
    at every move, with whole object weights (identical objects merged), on noisy members where many gains tie;
    with members abstaining on a quarter of the labels, from the completed medoid."""
    L, _ = rpm_ensemble(45, 5, 3, 0.45, rng=seed)
    if abstain:
        L = np.where(np.random.default_rng(10 + seed).random(L.shape) < 0.25, -1, L)
        L[L.max(axis=1) < 0, 0] = 0
    L = L[np.sort(np.unique(L, axis=0, return_index=True)[1])]  # distinct rows, as BOEM's atoms, in their order
    w = np.random.default_rng(seed).integers(1, 6, len(L))
    ens = Ensemble.from_labels(L, w)
    want, moves = _boem_by_definition(ens, k, algorithm == "steepest")
    est = consensus.get("boem")(n_clusters=k, algorithm=algorithm).fit(ens)
    assert moves > 0 and est.n_moves_ == moves
    assert np.array_equal(canonical_codes(est.labels_)[0], canonical_codes(want)[0])
    capped = consensus.get("boem")(n_clusters=k, algorithm=algorithm, max_moves=moves // 2).fit(ens)
    assert capped.n_moves_ == moves // 2
    half = _boem_by_definition(ens, k, algorithm == "steepest", moves // 2)[0]
    assert np.array_equal(canonical_codes(capped.labels_)[0], canonical_codes(half)[0])


@pytest.mark.parametrize("algorithm", ["passes", "steepest"])
def test_boem_gives_up_with_one_line_past_its_work_limit(monkeypatch, algorithm):
    """With 'auto' the descent may open a singleton at every move: past BOEM_WORK_LIMIT gain entries it stops
    with an InputError naming the ways out, instead of scoring for hours."""
    from segensemble.consensus import correlation

    L, _ = rpm_ensemble(300, 6, 4, 0.3, rng=1)
    full = consensus.get("boem")(algorithm=algorithm).fit(L)
    monkeypatch.setattr(correlation, "BOEM_WORK_LIMIT", 2000.0)
    with pytest.raises(InputError, match=r"BOEM: .* gain entries scored with .* clusters open, above the limit of "
                                         r"2\.0e\+03 .*integer n_clusters.*ccpivot or kcc"):
        consensus.get("boem")(algorithm=algorithm).fit(L)
    monkeypatch.setattr(correlation, "BOEM_WORK_LIMIT", 1e12)
    assert np.array_equal(consensus.get("boem")(algorithm=algorithm).fit(L).labels_, full.labels_)


@pytest.mark.parametrize("algorithm", ["passes", "steepest"])
@pytest.mark.parametrize("k", ["auto", 3])
def test_boem_ends_in_a_local_minimum_below_its_start(k, algorithm):
    from segensemble.consensus.correlation import correlation_cost

    L, _ = rpm_ensemble(40, 6, 3, 0.5, rng=2)
    ens = Ensemble.from_labels(L)
    est = consensus.get("boem")(n_clusters=k, algorithm=algorithm).fit(ens)
    start = consensus.get("bestofk")(n_clusters=k).fit(ens).labels_
    z = est.labels_
    assert est.cost_ == pytest.approx(correlation_cost(ens, z))
    assert est.cost_ <= correlation_cost(ens, start) + 1e-9
    c = int(z.max()) + 1
    targets = range(c + 1) if k == "auto" else range(c)
    for i in range(len(z)):
        for b in targets:
            if b == z[i] or (k != "auto" and np.sum(z == z[i]) == 1):
                continue
            moved = z.copy()
            moved[i] = b
            assert correlation_cost(ens, moved) >= est.cost_ - 1e-9


def test_ccpivot_recovers_and_degree_pivot_is_deterministic():
    L, z = rpm_ensemble(300, 10, 4, 0.3, rng=1)
    # a greedy 3-approximation: with the 0.25 threshold noisy objects bridge clusters (cross X up to 0.7 here)
    assert adjusted_rand_score(z, consensus.get("ccpivot")(n_clusters=4).fit(L).labels_) > 0.8
    assert adjusted_rand_score(z, consensus.get("ccpivot")(n_clusters=4, threshold=0.4).fit(L).labels_) > 0.95
    a = consensus.get("ccpivot")(pivot="degree").fit(L).labels_
    assert np.array_equal(a, consensus.get("ccpivot")(pivot="degree").fit(L).labels_)


@pytest.mark.parametrize("init", ["random", "k-means++"])
def test_random_starts_are_seeded_and_recover_the_truth(init):
    L, z = rpm_ensemble(300, 10, 4, 0.3, rng=1)
    for name in ("basic", "kcc"):
        a = consensus.get(name)(n_clusters=4, init=init, random_state=3).fit(L)
        b = consensus.get(name)(n_clusters=4, init=init, random_state=3).fit(L)
        assert np.array_equal(a.labels_, b.labels_)
        assert adjusted_rand_score(z, a.labels_) > 0.95


def test_kmeanspp_spreads_its_seeds():
    """Greedy D^2 seeding on four far-apart blobs puts one centre in each, nearly always."""
    from segensemble.consensus._kmeans import _kmeanspp_init, _Space

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 0.05, size=(30, 2)) for c in ([0, 0], [10, 0], [0, 10], [10, 10])])
    space, w = _Space(X), np.ones(len(X))
    truth = np.repeat(np.arange(4), 30)
    hits = [adjusted_rand_score(truth, _kmeanspp_init(space, w, 4, np.random.default_rng(s))) == 1.0
            for s in range(20)]
    assert np.mean(hits) >= 0.95


@pytest.mark.parametrize("name", ["bestofk", "boem"])
def test_best_of_k_honours_k_when_no_member_has_k_clusters(name):
    """Truth: objects 0-3 | 4-7; every member has 3 clusters (one half split). With K = 2 the medoid's clusters
    are merged by average linkage on their co-association: the two pieces of the split half join."""
    L = np.array([[0, 0, 1, 1, 2, 2, 2, 2], [0, 0, 0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 2, 2, 2, 2]]).T
    est = consensus.get(name)(n_clusters=2).fit(L)
    assert est.labels_.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert consensus.get(name)(n_clusters=3).fit(L).n_clusters_ == 3  # a member with K clusters: chosen as is


def test_metis_silencing_gives_standard_output_back_when_threads_overlap(capfd):
    """METIS's C messages are silenced on fd 1; threads partitioning at once must not leave fd 1 on /dev/null."""
    import os
    import threading

    from segensemble.consensus.metis import _quiet_c_stdout

    before = os.fstat(1)
    entered, second_in = threading.Event(), threading.Event()

    def first():
        with _quiet_c_stdout():
            entered.set()
            second_in.wait()

    t = threading.Thread(target=first)
    t.start()
    entered.wait()
    with _quiet_c_stdout():  # enters while the first thread holds the redirection and leaves after it
        second_in.set()
        t.join()
    after = os.fstat(1)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)
    os.write(1, b"still here\n")
    assert "still here" in capfd.readouterr().out


def test_nmf_updates_never_increase_the_objective():
    L, _ = rpm_ensemble(300, 6, 4, 0.4, rng=1)
    objectives = [consensus.get("nmf")(n_clusters=4, max_iter=i, tol=0).fit(L).objective_ for i in range(1, 25)]
    assert np.all(np.diff(objectives) <= 1e-12) and objectives[-1] < objectives[0]


@pytest.mark.parametrize("abstain", [False, True])
def test_nmf_pass_equals_the_update_written_with_the_incidence_matrix(abstain):
    """The compiled update of Q against its matrix form, with object weights and members that abstain."""
    from segensemble.consensus._nmf_sweep import update_memberships

    rng = np.random.default_rng(7)
    L, _ = rpm_ensemble(60, 5, 4, 0.3, rng=3)
    if abstain:
        L[rng.random(L.shape) < 0.2] = -1
        L[(L < 0).all(axis=1), 0] = 0  # every object labelled by someone
    ens = Ensemble.from_labels(L, rng.integers(1, 4, len(L)).astype(float))
    H, w, m, k = ens.incidence.toarray(), ens.weights, 5, 3
    clusters = np.where(ens.labels >= 0, ens.labels + ens.offsets[:-1], -1).astype(np.int64)
    Q, S = rng.random((len(w), k)), rng.random((k, k))
    A = H.T @ (w[:, None] * Q)
    M = H @ H.T / m
    R = Q.T @ (w[:, None] * (M @ (w[:, None] * Q))) @ S
    expected = Q * np.sqrt((M @ (w[:, None] * Q) @ S) / (Q @ R))
    A_next, QtQ_next = np.zeros_like(A), np.zeros((k, k))
    update_memberships(clusters, A @ S, R, Q, w, float(m), 1e-300, A_next, QtQ_next)
    np.testing.assert_allclose(Q, expected, rtol=1e-12)
    np.testing.assert_allclose(A_next, H.T @ (w[:, None] * Q), rtol=1e-12)
    np.testing.assert_allclose(QtQ_next, Q.T @ (w[:, None] * Q), rtol=1e-12)
    with pytest.raises(ValueError, match="shapes"):
        update_memberships(clusters, A @ S, R[:2], Q, w, float(m), 1e-300, A_next, QtQ_next)


def test_nmf_pass_is_the_scalar_arithmetic_bit_for_bit():
    """The compiled pass (vector instructions, an AVX2 clone where the processor has it) makes, for every element,
    the IEEE operations of the scalar loops below in their order: equal bits, not just close. K = 7 leaves a
    remainder after any vector width; some denominators fall under eps (the floor); members abstain."""
    import math

    from segensemble.consensus._nmf_sweep import update_memberships

    rng = np.random.default_rng(11)
    n, k, n_members, n_clusters = 40, 7, 4, 9
    clusters = rng.integers(0, n_clusters, (n, n_members)).astype(np.int64)
    clusters[rng.random(clusters.shape) < 0.25] = -1
    AS, R, w = rng.random((n_clusters, k)), rng.random((k, k)), rng.random(n) + 0.5
    Q = rng.random((n, k)) * 10.0 ** rng.integers(-8, 3, (n, k))
    Q[:3] = 1e-200  # Q_i R under eps: the floor is used
    m, eps = 4.0, 1e-300
    A_next, T = np.full((n_clusters, k), 0.5), np.full((k, k), 0.25)  # accumulated onto
    Qr, Ar, Tr = Q.tolist(), A_next.tolist(), T.tolist()
    for i in range(n):
        num, den = [0.0] * k, [0.0] * k
        for c in clusters[i].tolist():
            if c >= 0:
                for a in range(k):
                    num[a] += float(AS[c, a])
        for a in range(k):
            for b in range(k):
                den[b] += Qr[i][a] * float(R[a, b])
        Qr[i] = [Qr[i][b] * math.sqrt((num[b] / m) / (den[b] if den[b] > eps else eps)) for b in range(k)]
        wq = [float(w[i]) * q for q in Qr[i]]
        for c in clusters[i].tolist():
            if c >= 0:
                for a in range(k):
                    Ar[c][a] += wq[a]
        for a in range(k):
            for b in range(k):
                Tr[a][b] += Qr[i][a] * wq[b]
    update_memberships(clusters, AS, R, Q, w, m, eps, A_next, T)
    assert Q.tolist() == Qr and A_next.tolist() == Ar and T.tolist() == Tr


def test_nmf_factorises_an_exact_association_matrix():
    # identical members: M = Z Z^T is itself Q S Q^T (Q = Z scaled, S diagonal); the fit reaches it
    z = np.repeat([0, 1, 2], [5, 3, 7])
    est = consensus.get("nmf")(n_clusters=3, tol=0, max_iter=300).fit(np.stack([z, z, z], axis=1))
    assert adjusted_rand_score(z, est.labels_) == 1.0 and est.objective_ < 1e-3


def test_pairwise_methods_refuse_too_many_objects_naming_the_linear_ones(monkeypatch):
    from segensemble import limits

    monkeypatch.setattr(limits, "MEMORY_LIMIT", 8 * 100 * 100)  # 100 x 100 doubles
    L, _ = rpm_ensemble(200, 6, 3, 0.3, rng=0)
    for name in ("cspa", "eac"):
        with pytest.raises(InputError, match="fewer distinct objects, or a method that works through the incidence"):
            consensus.get(name)(n_clusters=3).fit(L)
    assert len(np.unique(consensus.get("ccpivot")(n_clusters=3).fit(L).labels_)) == 3  # from the labels: no X


def test_aligned_voting_bounds_the_memberships_it_holds_at_once_not_one_per_member(monkeypatch):
    """Vote and the soft voting methods align one member at a time: with many members their one-hot memberships
    are bounded as the few (n, K) arrays held at once (they refused 10^6 objects of 50 members, 3.7 GiB for all
    50); a method that keeps every member's (cbpce) is still bounded by all of them."""
    from segensemble import limits

    L, z = rpm_ensemble(1000, 50, 5, 0.3, rng=0)
    monkeypatch.setattr(limits, "MEMORY_LIMIT", 8 * 1000 * 5 * 10)  # ten (1000, 5) arrays: not fifty
    for name in ("vote", "vote_sum", "vote_product", "borda", "dwh"):
        assert adjusted_rand_score(z, consensus.get(name)(n_clusters=5).fit(L).labels_) > 0.95, name
    with pytest.raises(InputError, match="50 such matrices at once"):
        consensus.get("cbpce")(n_clusters=5).fit(L)


def _ccpivot_on_dense_x(L, w, threshold, seed, n_init):
    """CC-Pivot by its definition on the dense co-association of the distinct rows (the reference)."""
    from segensemble.consensus._base import collapse_duplicate_rows
    from segensemble.consensus.correlation import correlation_cost

    distinct, inverse = collapse_duplicate_rows(Ensemble.from_labels(L, w))
    X, w = distinct.coassociation(), distinct.weights
    gen, best = np.random.default_rng(seed), None
    for _ in range(n_init):
        z, free, c = np.full(len(w), -1), np.ones(len(w), dtype=bool), 0
        while free.any():
            idx = np.flatnonzero(free)
            p = int(gen.choice(idx, p=w[idx] / w[idx].sum()))
            members = np.union1d(idx[X[p, idx] > threshold], [p])
            z[members], free[members], c = c, False, c + 1
        cost = correlation_cost(distinct, z)
        best = (z, cost) if best is None or cost < best[1] else best
    return best[0][inverse]


def test_ccpivot_from_the_labels_is_ccpivot_on_the_dense_coassociation():
    """The pivots compare label rows (X = c / m for c agreeing members) instead of reading X: the same clusters as
    the definition on the dense X, on random ensembles with whole object weights. The threshold 0.3 equals no c / m
    with m <= 9 members, so no pair sits on it (where X's rounding would decide)."""
    from segensemble.consensus._base import seed_from

    rng = np.random.default_rng(11)
    for case in range(150):
        n, m, k = int(rng.integers(2, 50)), int(rng.integers(1, 10)), int(rng.integers(1, 6))
        L = rng.integers(0, k, size=(n, m))
        w = rng.integers(1, 4, n).astype(float)
        got = consensus.get("ccpivot")(threshold=0.3, n_init=3, random_state=case).fit(L, sample_weight=w).labels_
        expected = _ccpivot_on_dense_x(L, w, 0.3, seed_from(case), 3)
        assert np.array_equal(canonical_codes(got)[0], canonical_codes(expected)[0])  # the same partition


def test_coassociation_degrees_are_x_times_the_weights():
    from segensemble.consensus.correlation import coassociation_degrees, member_rows

    rng = np.random.default_rng(4)
    for case in range(60):
        n, m = int(rng.integers(1, 40)), int(rng.integers(1, 8))
        L = rng.integers(0, 4, size=(n, m))
        ens = Ensemble.from_labels(L, rng.integers(1, 5, n) / (1, 3)[case % 2])  # whole and fractional weights
        got = coassociation_degrees(member_rows(ens.labels), ens.weights)
        np.testing.assert_allclose(got, ens.coassociation() @ ens.weights, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["em", "nmf"])
def test_a_basic_start_on_fewer_distinct_rows_than_clusters(name):
    """EM and NMF start from Basic on the distinct label rows; asking for more clusters than there are distinct rows
    (NMF refused 3 equal rows with n_clusters=2) gives one label per distinct row, as Basic does."""
    L = np.array([[0, 1], [0, 1], [0, 1], [1, 0]])
    labels = consensus.get(name)(n_clusters=3).fit(L).labels_
    assert labels.tolist() == consensus.get("basic")(n_clusters=3).fit(L).labels_.tolist() == [0, 0, 0, 1]


@pytest.mark.parametrize("name", ["basic", "kcc", "spectral", "hbgf", "em", "nmf"])
def test_above_its_row_bound_the_default_start_is_the_maximin_start_alone(monkeypatch, name):
    """Below MEMBER_STARTS_ROWS distinct rows the default k-means (and the Basic start of EM and NMF) starts from
    the members with K clusters and from maximin; above it, from maximin alone, as n_init=0. A hand-made case where
    the two differ: members with K clusters that are worse starts."""
    from segensemble import Ensemble
    from segensemble.consensus import coassociation

    rng = np.random.default_rng(0)
    L = np.stack([rng.integers(0, 3, 40) for _ in range(4)], axis=1)
    ens = Ensemble.from_labels(L)
    thorough = consensus.get("basic")(n_clusters=3).fit(ens).labels_
    alone = consensus.get("basic")(n_clusters=3, n_init=0).fit(ens).labels_
    assert not np.array_equal(thorough, alone)  # the two starts differ here, so the bound is what decides
    assert coassociation.basic_start(ens, 3).tolist() == thorough.tolist()
    before = consensus.get(name)(n_clusters=3).fit(ens).labels_
    monkeypatch.setattr(coassociation, "MEMBER_STARTS_ROWS", 10)
    assert coassociation.basic_start(ens, 3).tolist() == alone.tolist()
    assert coassociation.member_inits(ens, 3, None) == [] and len(coassociation.member_inits(ens, 3, 2)) == 2
    after = consensus.get(name)(n_clusters=3).fit(ens).labels_
    if name in ("basic", "kcc", "spectral"):  # the same as asking for no member starts
        assert after.tolist() == consensus.get(name)(n_clusters=3, n_init=0).fit(ens).labels_.tolist()
    monkeypatch.setattr(coassociation, "MEMBER_STARTS_ROWS", 40)  # at the bound: the member starts, as before
    assert consensus.get(name)(n_clusters=3).fit(ens).labels_.tolist() == before.tolist()


@pytest.mark.parametrize("seed", range(4))
def test_gram_of_scaled_one_hot_rows_equals_the_sparse_product(seed):
    """A^T A by one bincount per pair of member blocks equals the sparse-sparse product, for rows and columns
    scaled as spectral and HBGF scale them; matrices of another shape (a member abstaining, overlapping
    blocks) take the product itself. (The bits are equal where SciPy's sparse product does not fuse its
    multiply-adds, as on the x86-64 wheels; a fused build may differ in the last bit.)"""
    import scipy.sparse as sp

    from segensemble.consensus.coassociation import _gram_of_rows

    gen = np.random.default_rng(seed)
    L, _ = rpm_ensemble(3000, int(gen.integers(1, 8)), int(gen.integers(2, 9)), 0.4, rng=seed)
    H = Ensemble.from_labels(L).incidence
    rows, cols = gen.random(H.shape[0]) + 0.1, gen.random(H.shape[1]) + 0.1
    for A in (H.multiply(rows[:, None]).tocsr(), H.multiply(rows[:, None]).multiply(cols[None, :]).tocsr()):
        np.testing.assert_allclose(_gram_of_rows(A), (A.T @ A).toarray(), rtol=1e-12, atol=0)
    L[::5, 0] = -1
    A = Ensemble.from_labels(L).incidence.multiply(rows[:, None]).tocsr()
    assert np.array_equal(_gram_of_rows(A), (A.T @ A).toarray())  # the product itself
    B = sp.random(200, 30, density=0.2, random_state=seed, format="csr")
    assert np.allclose(_gram_of_rows(B), (B.T @ B).toarray())


def test_member_contingency_is_the_incidence_product_bit_for_bit():
    """H^T Z from one bincount per member: the same values and layout as the sparse product (so the correlation
    cost and the average linkage to K built on it are unchanged), abstaining members and fractional weights too."""
    import scipy.sparse as sp

    from segensemble.consensus._linkage import member_contingency

    rng = np.random.default_rng(8)
    for case in range(200):
        n, m, k = int(rng.integers(1, 60)), int(rng.integers(1, 7)), int(rng.integers(1, 5))
        L = rng.integers(0, int(rng.integers(1, 6)), size=(n, m))
        if case % 3 == 0:
            L[rng.random((n, m)) < 0.3] = -1
            L[(L < 0).all(axis=1), 0] = 0
        ens = Ensemble.from_labels(L, rng.random(n) * 3 if case % 2 else rng.integers(1, 5, n).astype(float))
        z = rng.integers(0, k, n)
        expected = (ens.incidence.T @ sp.csr_matrix((ens.weights, (np.arange(n), z)), shape=(n, k))).toarray()
        got = member_contingency(ens, z, k)
        assert np.array_equal(got, expected) and got.flags.f_contiguous == expected.flags.f_contiguous


def _random_label_arrays(rng, cases: int, max_objects: int, max_members: int):
    """(case, labels) of random small ensembles, every second one with a third of its entries abstaining (-1)."""
    for case in range(cases):
        n, m = int(rng.integers(1, max_objects)), int(rng.integers(1, max_members))
        L = rng.integers(0, int(rng.integers(1, 8)), size=(n, m))
        if case % 2:
            L[rng.random((n, m)) < 0.3] = -1
            L[(L < 0).all(axis=1), 0] = 0
        yield case, L


def test_incidence_t_dot_is_the_sparse_product_bit_for_bit():
    """NMF's H^T D Q from one bincount per member and column: the same bits as the sparse product (so NMF's
    iterations, memberships and labels are unchanged), abstaining members, C and Fortran ordered V."""
    from segensemble.consensus._incidence import incidence_t_dot

    rng = np.random.default_rng(9)
    for case, L in _random_label_arrays(rng, 150, 200, 7):
        ens = Ensemble.from_labels(L)
        V = rng.standard_normal((ens.n_objects, int(rng.integers(1, 9)))) * 10.0 ** rng.uniform(-6, 6)
        V = np.asfortranarray(V) if case % 3 == 0 else V
        assert np.array_equal(incidence_t_dot(ens)(V), np.asarray(ens.incidence.T.tocsr() @ V))


@pytest.mark.parametrize("block", [1, 7, 2048])
def test_blocked_transpose_is_the_transposed_copy(monkeypatch, block):
    """incidence_t_dot transposes V in blocks of rows: the array np.ascontiguousarray(V.T), C and Fortran ordered,
    sizes around the block."""
    from segensemble.consensus import _incidence

    monkeypatch.setattr(_incidence, "_TRANSPOSE_ROWS", block)
    rng = np.random.default_rng(13)
    for n in (0, 1, block - 1, block, block + 1, 3 * block + 5, 5000):
        for k in (1, 3, 10):
            V = rng.standard_normal((max(n, 0), k))
            for W in (V, np.asfortranarray(V)):
                got = _incidence._transposed(W)
                assert got.flags.c_contiguous and np.array_equal(got, np.ascontiguousarray(W.T))


def test_hgpa_star_graph_is_the_block_matrix_metis_read_before():
    """HGPA's integer star expansion: the CSR structure and integer weights that metis_partition derives from
    bmat([[None, W H], [(W H)^T, None]]) (so METIS, and the labels, are unchanged), abstaining members too."""
    import scipy.sparse as sp

    from segensemble.consensus.metis import _integer_weights, _star_graph

    rng = np.random.default_rng(11)
    for case, L in _random_label_arrays(rng, 60, 300, 6):
        n = len(L)
        w = rng.random(n) * 4 + 0.01 if case % 3 else rng.integers(1, 5, n).astype(float)
        ens = Ensemble.from_labels(L, w)
        H = ens.incidence.multiply(ens.weights[:, None]).tocsr()
        A = sp.csr_matrix(sp.bmat([[None, H], [H.T, None]], format="csr"), dtype=np.float64)
        A.sort_indices()
        indptr, indices, ew = _star_graph(ens.incidence, ens.weights)
        assert np.array_equal(indptr, A.indptr) and np.array_equal(indices, A.indices)
        assert np.array_equal(ew, _integer_weights(A.data))


def test_hgpa_above_its_metis_rows_partitions_the_heaviest_and_places_the_rest_by_majority(monkeypatch):
    """Above HGPA_METIS_ROWS distinct rows METIS sees the star of the HGPA_CORE_ROWS heaviest rows only: those keep
    the part METIS gives them on that smaller star, every other row takes the part most of its hyperedges are in."""
    from segensemble.consensus import metis
    from segensemble.consensus._base import collapse_duplicate_rows

    L, z = rpm_ensemble(3000, 10, 4, 0.3, rng=3)
    ens, inverse = collapse_duplicate_rows(Ensemble.from_labels(L))
    monkeypatch.setattr(metis, "HGPA_METIS_ROWS", ens.n_objects - 1)
    monkeypatch.setattr(metis, "HGPA_CORE_ROWS", 300)
    hgpa = consensus.HGPA(n_clusters=4)
    labels, seed = hgpa._fit(ens), hgpa._seed()
    H, w = ens.incidence.tocsr(), ens.weights
    core = np.sort(np.argsort(-w, kind="stable")[:300])
    part = metis._part_graph(*metis._star_graph(H[core], w[core]), 4,
                             np.concatenate([w[core], np.full(H.shape[1], w[core].sum() / H.shape[1])]), seed)
    assert np.array_equal(labels[core], part[:300])
    hyperedge_part = part[300:]
    rest = np.setdiff1d(np.arange(ens.n_objects), core)
    for r in rest[:200]:  # by hand: count the row's hyperedges in each part (all present: 300 rows cover them)
        votes = np.bincount(hyperedge_part[H[r].indices], minlength=4)
        assert labels[r] == np.argmax(votes)
    assert adjusted_rand_score(z, labels[inverse]) > 0.95
    monkeypatch.setattr(metis, "HGPA_METIS_ROWS", ens.n_objects)  # at the bound: the whole star, as before
    whole = hgpa._fit(ens)
    assert np.array_equal(whole, metis._part_graph(*metis._star_graph(H, w), 4,
                                                  np.concatenate([w, np.full(H.shape[1], w.sum() / H.shape[1])]),
                                                  seed)[: ens.n_objects])


def test_hgpa_majority_part_counts_only_hyperedges_in_the_partitioned_graph():
    """A hand-worked placement: hyperedges 0-4 in parts 0, 1, 1, none, none (3 and 4 have no heavy row)."""
    import scipy.sparse as sp

    from segensemble.consensus.metis import _majority_part

    H = sp.csr_matrix(np.array([[1, 1, 1, 0, 0], [1, 0, 0, 1, 0], [0, 0, 0, 1, 0], [1, 1, 0, 0, 0],
                                [0, 0, 0, 0, 1], [0, 0, 0, 1, 1]], dtype=float))
    got = _majority_part(H, np.array([0, 1, 1, -1, -1]), np.array([1.0, 1.0, 5.0, 1.0, 1.0, 2.0]), k=3)
    # row 0: parts 0,1,1 -> 1; row 1: hyperedge 0 only counts -> 0; row 3: one each -> the lowest part, 0.
    # Rows 2, 4, 5 (weights 5, 1, 2) have no partitioned hyperedge: loads 2, 1, 0, an even share 11 / 3, so
    # shortfalls 5/3, 8/3, 11/3 filled in order: cumulative bounds 5/3, 13/3, 8 against the rows' midpoints
    # 2.5, 5.5, 7 -> parts 1, 2, 2.
    assert got.tolist() == [1, 0, 1, 0, 2, 2]


def test_hgpa_above_its_metis_rows_on_one_label_per_object(monkeypatch):
    """A member per colour of a random image (every hyperedge one object): most rows share no hyperedge with the
    heavy core, METIS sees only the hyperedges the core has (it took 12 s with the 268 000 empty ones of a
    160 000-colour PNG), and the rest are placed by balance: the parts end within two objects of each other."""
    from segensemble.consensus import metis

    L = np.stack([np.arange(3000), np.arange(3000)], axis=1)
    monkeypatch.setattr(metis, "HGPA_METIS_ROWS", 1000)
    monkeypatch.setattr(metis, "HGPA_CORE_ROWS", 500)
    labels = consensus.HGPA(n_clusters=7).fit(L).labels_
    sizes = np.bincount(labels, minlength=7)
    assert sizes.max() - sizes.min() <= 2


def test_scaled_incidence_is_scipys_broadcast_product_bit_for_bit():
    """Spectral, HBGF and SDP scale H's rows (and columns) in one pass: the arrays SciPy's broadcasting multiply
    gives, entry for entry (so their embeddings and labels are unchanged), abstaining members too."""
    from segensemble.consensus._incidence import scaled

    rng = np.random.default_rng(12)
    for _, L in _random_label_arrays(rng, 100, 200, 6):
        H = Ensemble.from_labels(L).incidence
        r, c = rng.random(H.shape[0]) * 10.0 ** rng.uniform(-3, 3) + 1e-9, rng.random(H.shape[1]) + 0.1
        for got, expected in ((scaled(H, rows=r), H.multiply(r[:, None]).tocsr()),
                              (scaled(H, rows=r, columns=c), H.multiply(r[:, None]).multiply(c[None, :]).tocsr())):
            for a, b in ((got.indptr, expected.indptr), (got.indices, expected.indices), (got.data, expected.data)):
                assert a.dtype == b.dtype and np.array_equal(a, b)
