"""Projective clustering ensembles: Tanimoto distances, E-CB-PCE local search, consensus, F1 measures."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from segensemble import Ensemble, InputError
from segensemble.consensus import CBPCE, ECBPCE, ProjectiveEnsemble
from segensemble.consensus.pce import (
    ecbpce_metaclusters,
    lac_feature_weights,
    metacluster_objective,
    projective_consensus,
    tanimoto_distances,
)
from segensemble.datasets import make_subspace_clusters, projective_ensemble
from segensemble.evaluation import ensemble_f1, projective_f1


def _random_projective(rng, n=30, f=5, ks=(3, 2, 4)):
    gammas = [rng.dirichlet(np.ones(k), size=n) for k in ks]
    deltas = [rng.dirichlet(np.ones(f), size=k) for k in ks]
    return gammas, deltas


def test_proposition_4_equals_the_brute_force_tanimoto_distance():
    rng = np.random.default_rng(0)
    gammas, deltas = _random_projective(rng)
    w = rng.integers(1, 4, size=30).astype(float)
    T = tanimoto_distances(gammas, deltas, w)
    G = np.concatenate(gammas, axis=1)
    D = np.concatenate(deltas, axis=0)
    for a in range(G.shape[1]):
        for b in range(G.shape[1]):
            Xa = np.sqrt(w)[:, None] * np.outer(G[:, a], D[a])  # weighted rows: an object of weight w = w rows
            Xb = np.sqrt(w)[:, None] * np.outer(G[:, b], D[b])
            p = np.sum(Xa * Xb)
            brute = 1 - p / (np.sum(Xa**2) + np.sum(Xb**2) - p)
            assert T[a, b] == pytest.approx(brute, abs=1e-12)


def _check_constraints(meta, solution):
    n_solutions = solution.max() + 1
    for m in meta:  # every metacluster holds a cluster of every solution
        assert set(solution[m].tolist()) == set(range(n_solutions))
    assert set().union(*map(set, meta)) == set(range(len(solution)))  # every cluster is somewhere


@pytest.mark.parametrize("seed", range(8))
def test_local_search_never_increases_v_and_keeps_both_constraints(seed):
    rng = np.random.default_rng(seed)
    ks = tuple(rng.integers(2, 6, size=5))  # some solutions have fewer clusters than K
    gammas, deltas = _random_projective(rng, ks=ks)
    T = tanimoto_distances(gammas, deltas, np.ones(30))
    solution = np.repeat(np.arange(len(ks)), ks)
    meta, history = ecbpce_metaclusters(T, solution, 4)
    assert all(b <= a + 1e-12 for a, b in zip(history, history[1:]))
    assert history[-1] == pytest.approx(metacluster_objective(T, meta))
    _check_constraints(meta, solution)
    assert len(meta) == 4


def test_consensus_closed_forms():
    rng = np.random.default_rng(1)
    gammas, deltas = _random_projective(rng)
    meta = [[0, 3, 5], [1, 4, 6, 7], [2, 8]]
    G, D = projective_consensus(meta, np.concatenate(gammas, axis=1), np.concatenate(deltas, axis=0))
    assert np.allclose(G.sum(axis=1), 1.0) and np.all(G >= 0)
    assert np.allclose(D.sum(axis=1), 1.0) and np.all(D >= 0)
    # alpha = 2: Gamma* is proportional to 1 / A
    A = np.stack([1 - np.concatenate(gammas, axis=1)[:, m].mean(axis=1) for m in meta], axis=1)
    assert np.allclose(G, (1 / A) / (1 / A).sum(axis=1, keepdims=True))


def test_ecbpce_recovers_planted_subspace_clusters_and_their_features():
    X, y, relevant = make_subspace_clusters(300, 10, 4, n_relevant=3, rng=0)
    pe = projective_ensemble(X, 4, 20, rng=1)
    est = ECBPCE(n_clusters=4).fit(pe)
    assert adjusted_rand_score(y, est.labels_) > 0.95
    assert np.allclose(est.memberships_.sum(axis=1), 1.0)
    top = np.argsort(-est.feature_weights_, axis=1)[:, :3]
    for c in range(4):
        planted = relevant[np.bincount(y[est.labels_ == c], minlength=4).argmax()]
        assert set(top[c].tolist()) == set(np.flatnonzero(planted).tolist())
    _check_constraints(est.metaclusters_, np.repeat(np.arange(20), [g.shape[1] for g in pe.gammas]))


def test_projective_ensemble_given_directly_follows_label_order():
    g1, g2 = np.eye(2)[[0, 0, 1, 1]], np.eye(2)[[1, 1, 0, 0]]
    d = np.array([[0.9, 0.1], [0.2, 0.8]])
    est = ECBPCE(n_clusters=2).fit(ProjectiveEnsemble([g1, g2], [d, d[::-1]]))
    assert est.labels_.tolist() == [0, 0, 1, 1]
    assert np.allclose(est.feature_weights_, d)  # row c describes labels_ == c
    flipped = ECBPCE(n_clusters=2).fit(ProjectiveEnsemble([g2, g1], [d[::-1], d]))
    assert flipped.labels_.tolist() == [0, 0, 1, 1] and np.allclose(flipped.feature_weights_, d)
    with pytest.raises(InputError, match="deltas\\[1\\]"):
        ProjectiveEnsemble([g1, g2], [d, np.ones((3, 2))])


def test_image_ensembles_get_lac_feature_weights_from_their_features():
    rng = np.random.default_rng(2)
    img = np.zeros((20, 30, 3))
    img[:, 15:, 0] = 1.0  # red right half: the colour separates the halves, texture does not
    img += rng.normal(0, 0.01, img.shape)
    a = np.zeros((20, 30), int)
    a[:, 15:] = 1
    b = a.copy()
    b[:3, 13:15] = 1
    ens = Ensemble.from_segmentations([a, a, b], image=np.clip(img, 0, 1))
    est = ECBPCE(n_clusters=2).fit(ens)
    assert est.feature_names_[0] == "L*" and len(est.feature_names_) == ens.features.shape[1]
    assert adjusted_rand_score(a.ravel(), ens.to_image(est.labels_).ravel()) == 1.0
    tops = est.top_features(2)
    assert len(tops) == 2 and all(name in est.feature_names_ for name, _ in tops[0])


def test_lac_feature_weights_prefer_compact_features():
    X = np.array([[0.0, -1.0], [0.0, 1.0], [3.0, -1.0], [3.0, 1.0]])
    W = lac_feature_weights(np.eye(2)[[0, 0, 1, 1]], X, np.ones(4), h=0.2)
    assert np.allclose(W.sum(axis=1), 1.0) and np.all(W[:, 0] > 0.99)


def test_cbpce_runs_and_reports_the_same_attributes():
    X, y, _ = make_subspace_clusters(120, 6, 3, rng=3)
    est = CBPCE(n_clusters=3).fit(projective_ensemble(X, 3, 8, rng=0))
    assert est.feature_weights_.shape[1] == 6 and est.memberships_.shape == (120, 3)


def test_f1_measures():
    g, d = np.eye(2)[[0, 0, 1, 1]], np.array([[1.0, 0.0], [0.0, 1.0]])
    assert projective_f1((g, d), (g, d), "of") == 1.0
    swapped = (g[:, ::-1], d[::-1])  # the same clustering, clusters listed in the other order
    for kind in ("o", "f", "of"):
        assert projective_f1((g, d), swapped, kind) == pytest.approx(1.0)
    one = (np.ones((4, 1)), np.array([[0.5, 0.5]]))
    # one cluster against two halves: objects P = 2/4, R = 2/2 -> F1 = 2/3
    assert projective_f1((g, d), one, "o") == pytest.approx(2 / 3)
    assert ensemble_f1(one, [(g, d), (g, d)], "o") == pytest.approx(max(2 / 3, projective_f1(one, (g, d), "o")))
    with pytest.raises(InputError, match="kind"):
        projective_f1((g, d), (g, d), "x")


def _reference_best_move_search(T, solution, k, max_iter=10_000):
    """The original E-CB-PCE local search (interpreted loops), kept as the reference for the vectorised one."""
    from segensemble.consensus._pce_solver import _feasible_start, metacluster_objective

    meta = _feasible_start(T, solution, k)
    history = [metacluster_objective(T, meta)]
    for _ in range(max_iter):
        best = (-1e-12, None)
        for s_idx, src in enumerate(meta):
            for a in src:
                rest_src = [c for c in src if c != a]
                alone = not any(solution[c] == solution[a] for c in rest_src)
                out_a = T[a, rest_src].sum()
                for t_idx, dst in enumerate(meta):
                    if t_idx == s_idx or a in dst:
                        continue
                    if not alone:
                        gain = T[a, dst].sum() - out_a
                        if gain < best[0]:
                            best = (gain, (s_idx, t_idx, a, None))
                        continue
                    for b in dst:
                        if solution[b] != solution[a] or b in src:
                            continue
                        rest_dst = [c for c in dst if c != b]
                        gain = (T[a, rest_dst].sum() - out_a) + (T[b, rest_src].sum() - T[b, rest_dst].sum())
                        if gain < best[0]:
                            best = (gain, (s_idx, t_idx, a, b))
        if best[1] is None:
            break
        s_idx, t_idx, a, b = best[1]
        meta[s_idx].remove(a)
        meta[t_idx].append(a)
        if b is not None:
            meta[t_idx].remove(b)
            meta[s_idx].append(b)
        meta = [sorted(m) for m in meta]
        history.append(metacluster_objective(T, meta))
    return meta, history


@pytest.mark.parametrize("seed", range(12))
def test_vectorised_local_search_equals_the_reference_loop(seed):
    from segensemble.consensus.pce import ecbpce_metaclusters

    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    sizes = rng.integers(1, 9, size=int(rng.integers(2, 6)))  # some solutions with fewer than K clusters
    solution = np.repeat(np.arange(len(sizes)), sizes)
    n = len(solution)
    T = rng.random((n, n))
    T = np.round((T + T.T) / 2, 2 if seed % 2 else 6)  # coarse values make ties, which must resolve alike
    np.fill_diagonal(T, 0.0)
    meta, history = ecbpce_metaclusters(T, solution, k)
    ref_meta, ref_history = _reference_best_move_search(T, solution, k)
    assert meta == ref_meta
    assert np.allclose(history, ref_history)
