"""CAP (clustering agreement), SCCC and ensemble stability."""

import numpy as np
import pytest
import scipy.sparse as sp

from segensemble import Ensemble, InputError
from segensemble.consensus import SCCC
from segensemble.consensus.agreement import (CAP, _climb, _onehot_blocks, _xlogx, agreement_objective,
                                             visual_words)
from segensemble.consensus.sccc import sccc_seeds
from segensemble.evaluation import ensemble_stability, jaccard_index, normalized_mutual_information


def _noisy_image_ensemble(seed, m=3):
    rng = np.random.default_rng(seed)
    img = np.zeros((24, 32, 3))
    img[:, 16:, 0] = 1.0
    img[12:, :, 2] = 1.0
    img = np.clip(img + rng.normal(0, 0.05, img.shape), 0, 1)
    truth = (np.arange(32)[None, :] >= 16).astype(int) + 2 * (np.arange(24)[:, None] >= 12)
    members = []
    for _ in range(m):
        z = truth.copy()
        flip = rng.random(z.shape) < 0.1
        z[flip] = rng.integers(0, 4, size=int(flip.sum()))
        members.append(z)
    return Ensemble.from_segmentations(members, img), img


def _h(rows, n_blocks):
    """h of every row: sum xlogx - m R log R, with R the row mass per block (the module docstring's h)."""
    R = rows.sum(axis=-1) / n_blocks
    return _xlogx(rows).sum(axis=-1) - n_blocks * _xlogx(R)


def _table(labels, k, Q):
    P = np.zeros((k, Q.shape[1]))
    np.add.at(P, labels, Q)
    return P


def _climb_by_whole_rows(labels, k, Q, n_blocks, max_sweeps, order_seed):
    """The hill climbing written plainly: every target's gain from h of whole rows (the compiled sweep's oracle)."""
    labels = np.asarray(labels, dtype=np.int64).copy()
    P = _table(labels, k, Q)
    H, count = _h(P, n_blocks), np.bincount(labels, minlength=k)
    order_rng, moves = np.random.default_rng(order_seed), 0
    for _ in range(max_sweeps):
        moved = False
        for x in order_rng.permutation(len(labels)):
            a, q = labels[x], Q[x]
            if count[a] == 1 or not q.any():
                continue
            h_a = _h(P[a] - q, n_blocks)
            gain = _h(P + q, n_blocks) - H + (h_a - H[a])
            gain[a] = 0.0
            b = int(np.argmax(gain))
            if gain[b] <= 1e-12:
                continue
            P[a] -= q
            P[b] += q
            H[a], H[b] = h_a, _h(P[b], n_blocks)
            count[a], count[b], labels[x], moved, moves = count[a] - 1, count[b] + 1, b, True, moves + 1
        if not moved:
            break
    return labels, moves


def test_the_compiled_climb_makes_the_moves_of_the_whole_row_evaluation():
    rng = np.random.default_rng(0)
    same = 0
    for case in range(200):
        n, k, d, m = (int(rng.integers(lo, hi)) for lo, hi in ((2, 60), (1, 8), (1, 12), (1, 4)))
        Q = rng.random((n, d)) * (rng.random((n, d)) < 0.5)  # sparse rows, some empty
        start = rng.integers(0, k, n)
        ours, plain = _climb(start, k, Q, m, 10, case), _climb_by_whole_rows(start, k, Q, m, 10, case)
        objective = [_h(_table(labels, k, Q), m).sum() for labels in (ours[0], plain[0])]
        assert objective[0] == pytest.approx(objective[1], abs=1e-12) and ours[1] == plain[1], case
        same += np.array_equal(ours[0], plain[0])
    assert same >= 195  # the others: two targets whose gains tie to rounding, the same objective (1 of 200 here)


def test_the_bounds_skip_only_targets_that_cannot_win():
    """The sweep skips a target whose gain bound (no logarithms) is below the best gain found: the same moves and
    labels as evaluating every target, at any scale of the masses (a zero of the tables included)."""
    rng = np.random.default_rng(1)
    moved_some = False
    for case in range(300):
        n, k, d, m = (int(rng.integers(lo, hi)) for lo, hi in ((2, 80), (1, 12), (1, 14), (1, 5)))
        Q = rng.random((n, d)) * (rng.random((n, d)) < 0.5) * 10.0 ** int(rng.integers(-8, 3))
        start = rng.integers(0, k, n)
        pruned, every = _climb(start, k, Q, m, 10, case), _climb(start, k, Q, m, 10, case, prune=False)
        assert np.array_equal(pruned[0], every[0]) and pruned[1] == every[1], case
        moved_some |= pruned[1] > 0
    assert moved_some
    ens, img = _noisy_image_ensemble(2)
    joint, _ = visual_words(ens, img, 8, random_state=0)
    ys = [rng.integers(0, 3, joint.shape[1]) for _ in range(3)]
    Q = sp.csr_matrix(joint) @ _onehot_blocks(ys)
    x = ens.labels[:, 0].astype(np.int64)
    k = int(x.max()) + 1
    assert all(np.array_equal(a, b) for a, b in zip(_climb(x, k, Q, 3, 10, 0), _climb(x, k, Q, 3, 10, 0, prune=False)))


@pytest.mark.parametrize("seed", range(4))
def test_cap_objective_never_decreases(seed):
    ens, img = _noisy_image_ensemble(seed)
    cap = CAP(n_words=8, random_state=seed).fit(ens, image=img)
    h = cap.objective_history_
    assert len(h) == 1 + 2 * 4
    assert all(b >= a - 1e-12 for a, b in zip(h, h[1:]))
    assert h[-1] > h[0]
    out = cap.ensemble_
    assert out.n_objects == ens.n_objects and out.n_members == ens.n_members
    assert out.n_clusters == ens.n_clusters  # no cluster is emptied
    assert np.array_equal(out.weights, ens.weights) and np.array_equal(out.index, ens.index)
    assert ensemble_stability(out) >= ensemble_stability(ens)


def test_incremental_gain_is_the_exact_change_of_the_objective():
    rng = np.random.default_rng(3)
    joint = rng.random((40, 6))
    joint /= joint.sum()
    xs = [rng.integers(0, 4, 40), rng.integers(0, 3, 40)]
    ys = [rng.integers(0, 3, 6), rng.integers(0, 2, 6)]
    Q = np.asarray((sp.csr_matrix(joint) @ _onehot_blocks(ys)).todense())
    before = agreement_objective(joint, xs, ys)
    new, moves = _climb(xs[0], 4, Q, len(ys), 5, 0)
    assert moves > 0
    # the climbed member's own objective rose by exactly the change in sum_c h(P_c)
    P_old, P_new = _table(xs[0], 4, Q), _table(new, 4, Q)
    after = agreement_objective(joint, [new, xs[1]], ys)
    assert after - before == pytest.approx(_h(P_new, 2).sum() - _h(P_old, 2).sum(), abs=1e-12)
    assert after > before


def test_cap_is_the_same_in_parallel_threads():
    ens, img = _noisy_image_ensemble(7)
    a = CAP(n_words=8, n_rounds=2, random_state=1).fit(ens, image=img)
    b = CAP(n_words=8, n_rounds=2, random_state=1, n_jobs=2).fit(ens, image=img)
    assert np.array_equal(a.ensemble_.labels, b.ensemble_.labels)
    assert a.objective_history_ == pytest.approx(b.objective_history_)


def test_cap_needs_a_second_modality_and_valid_parameters():
    ens = Ensemble.from_labels([[0, 1], [0, 1], [1, 0]])
    with pytest.raises(InputError, match="second modality"):
        CAP().fit(ens)
    with pytest.raises(InputError, match="n_words"):
        CAP(n_words=1).fit(ens)
    # object features are a valid second modality (one word per object)
    feats = Ensemble(ens.labels, features=np.array([[0.0], [0.1], [5.0]]))
    joint, words = visual_words(feats, None, 2, random_state=0)
    assert joint.shape == (3, 2) and joint.sum() == pytest.approx(1.0)
    assert CAP(n_words=2, random_state=0).fit(feats).ensemble_.n_members == 2


def test_sccc_seeding_respects_the_gap():
    rng = np.random.default_rng(0)
    S = rng.integers(0, 3, size=(60, 6))
    sizes = rng.random(60)
    for g in range(7):
        seeds = sccc_seeds(S, sizes, 5, g)
        for i, a in enumerate(seeds):
            for b in seeds[:i]:
                assert np.count_nonzero(S[a] != S[b]) >= g
        if g == 0:  # no gap: the five largest components
            assert seeds == np.argsort(-sizes, kind="stable")[:5].tolist()


def test_sccc_auto_gap_picks_the_best_nmi_and_a_fixed_gap_is_used():
    L = np.array([[0, 0, 0], [0, 0, 0], [0, 0, 1], [1, 1, 1], [1, 1, 1], [1, 1, 0], [2, 2, 2]])
    est = SCCC(n_clusters=3).fit(L)
    assert est.gap_ == max(est.gap_scores_, key=lambda g: (est.gap_scores_[g], -g))
    assert est.gap_scores_ and all(0 <= g <= 3 for g in est.gap_scores_)
    fixed = SCCC(n_clusters=2, gap=3).fit(L)
    assert fixed.gap_ == 3 and fixed.n_clusters_ <= 2


def test_sccc_of_identical_members_is_that_clustering():
    z = np.repeat([0, 1, 2, 3], [5, 4, 3, 2])
    est = SCCC(n_clusters=4).fit(np.stack([z, (z + 1) % 4, z], axis=1))
    assert np.array_equal(est.labels_, z)


def test_stability_and_jaccard():
    z = np.array([0, 0, 1, 1, 2])
    assert ensemble_stability(Ensemble.from_labels(np.stack([z, z, (z + 2) % 3], axis=1))) == 1.0
    assert jaccard_index([0, 0, 1, 1], [0, 1, 0, 1]) == 0.0
    # weights: an atom of 3 pixels holds 3 pairs; pixels the same
    a, b = [0, 0, 1], [0, 1, 1]
    assert jaccard_index(a, b, weights=[3, 1, 1]) == pytest.approx(
        jaccard_index([0, 0, 0, 0, 1], [0, 0, 0, 1, 1]))
    assert normalized_mutual_information([0, 0, 1], [0, 0, 1], [2, 1, 1]) == pytest.approx(1.0)


def test_cap_refuses_tables_above_the_memory_limit_before_allocating_them(monkeypatch):
    """A 12 MP photo fused at full size (a recipe without a working scale) with --agree took CAP past 21 GB: its
    dense tables grow as the clusters times the members' clusters in all. They are now bounded up front (the
    objects' masses are sparse)."""
    from segensemble import limits

    rng = np.random.default_rng(0)
    members = [rng.integers(0, 50, (20, 30)) for _ in range(3)]
    ens = Ensemble.from_segmentations(members)
    img = rng.random((20, 30, 3))
    n, clusters = ens.n_objects, [int(ens.labels[:, i].max()) + 1 for i in range(3)]
    table = 8 * max(clusters) * sum(clusters) * 3  # the table, its transpose and their f values, one thread
    monkeypatch.setattr(limits, "MEMORY_LIMIT", table - 8)  # the cluster table does not fit, just
    with pytest.raises(InputError, match=r"^agreement \(CAP\), a clustering's cluster table: "
                                         r"a dense .* matrix needs about .*; give it coarser members"):
        CAP(n_words=4, random_state=0).fit(ens, image=img)
    monkeypatch.setattr(limits, "MEMORY_LIMIT", table)  # it does: the agreement runs
    assert CAP(n_words=4, n_rounds=1, random_state=0).fit(ens, image=img).ensemble_.n_objects == n
