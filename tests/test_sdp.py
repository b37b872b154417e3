"""SDP consensus (Singh et al. 2007, Model 2): solvers, weighted atoms, rounding."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from segensemble import Ensemble
from segensemble.consensus import SDP
from segensemble.consensus.sdp import _problem_data, sdp_lowrank, sdp_scs, winner_takes_all
from segensemble.datasets import rpm_ensemble
from segensemble.errors import InputError


def _blocks(sizes):
    return np.repeat(np.arange(len(sizes)), sizes)


@pytest.mark.parametrize("solver", ["scs", "lowrank"])
def test_tiny_ensemble_gives_the_obvious_consensus(solver):
    z = _blocks([4, 3, 5])
    other = z.copy()
    other[0] = 1  # one member disagrees on one object
    L = np.stack([z, z, other, (z + 1) % 3], axis=1)  # the last member is z relabelled
    est = SDP(n_clusters=3, solver=solver, random_state=0).fit(L)
    assert adjusted_rand_score(z, est.labels_) == 1.0
    assert est.solver_ == solver


@pytest.mark.parametrize("solver", ["scs", "lowrank"])
def test_identical_members_make_the_relaxation_tight(solver):
    # tr(S Z) <= m n for every feasible Z (X_uv <= 1); the true partition attains it
    z = _blocks([6, 9, 5])
    L = np.stack([z] * 4, axis=1)
    est = SDP(n_clusters=3, solver=solver, random_state=0).fit(L)
    assert np.array_equal(est.labels_, z)
    assert est.objective_ == pytest.approx(4 * 20, rel=1e-4)
    assert est.rounded_objective_ == pytest.approx(4 * 20, rel=1e-9)


def test_scs_and_lowrank_agree_on_a_noisy_ensemble():
    L, z = rpm_ensemble(80, 10, 4, 0.45, rng=3)
    scs = SDP(n_clusters=4, solver="scs").fit(L)
    low = SDP(n_clusters=4, solver="lowrank", random_state=0).fit(L)
    assert low.objective_ == pytest.approx(scs.objective_, rel=5e-3)
    assert low.objective_ <= scs.objective_ * (1 + 1e-4)  # SCS is the optimum, up to its tolerance
    assert scs.gap_ < 1e-3 and scs.violation_ < 1e-3 and low.violation_ < 1e-5
    assert np.isnan(low.gap_)
    assert adjusted_rand_score(scs.labels_, low.labels_) > 0.95
    # the rounded partition never beats the relaxation
    for est in (scs, low):
        assert est.rounded_objective_ <= est.objective_ * (1 + 1e-4)


@pytest.mark.parametrize("solver", ["scs", "lowrank"])
def test_weighted_atoms_equal_the_duplicated_object_problem(solver):
    rng = np.random.default_rng(5)
    L, _ = rpm_ensemble(25, 6, 3, 0.4, rng=1)
    w = rng.integers(1, 4, size=len(L))
    dup = np.repeat(L, w, axis=0)
    atoms = SDP(n_clusters=3, solver=solver, random_state=0).fit(Ensemble.from_labels(L, w.astype(float)))
    copies = SDP(n_clusters=3, solver=solver, random_state=0).fit(dup)
    assert atoms.objective_ == pytest.approx(copies.objective_, rel=1e-3)
    assert np.array_equal(np.repeat(atoms.labels_, w), copies.labels_)


def test_solvers_are_exact_for_weights_on_a_hand_worked_problem():
    # two atoms of weight 2 always together, one atom of weight 1 apart: S = H H^T with m = 1
    B, s = _problem_data(Ensemble.from_labels([[0], [0], [1]], [2.0, 2.0, 1.0]))
    # pixel level: clusters of 4 and 1 pixels, tr(S Z) = 4 + 1
    M, info = sdp_scs(B, s, 2)
    assert info["objective"] == pytest.approx(5.0, abs=1e-3)
    U, info = sdp_lowrank(B, s, 2, rng=0)
    assert info["objective"] == pytest.approx(5.0, abs=1e-4)
    assert np.all(U >= 0) and np.sum(U**2) == pytest.approx(2.0)
    assert np.allclose(U @ (U.T @ s), s, atol=1e-5)


def test_scs_refuses_large_problems_naming_the_alternative(monkeypatch):
    import segensemble.consensus.sdp as sdp

    monkeypatch.setattr(sdp, "SCS_MAX_OBJECTS", 10)
    L, _ = rpm_ensemble(30, 4, 3, 0.3, rng=0)
    with pytest.raises(InputError, match="solver: 'scs' handles at most 10 objects.*lowrank"):
        SDP(n_clusters=3, solver="scs").fit(L)


def test_auto_solver_picks_by_size():
    small, _ = rpm_ensemble(20, 4, 2, 0.2, rng=0)
    large, _ = rpm_ensemble(300, 12, 2, 0.2, rng=0)  # 103 distinct label rows (the size the solver sees)
    assert SDP(n_clusters=2).fit(small).solver_ == "scs"
    assert SDP(n_clusters=2).fit(large).solver_ == "lowrank"
    few, _ = rpm_ensemble(300, 4, 2, 0.2, rng=0)  # at most 2^4 distinct rows: a small problem, whatever n
    assert SDP(n_clusters=2).fit(few).solver_ == "scs"


def test_auto_solver_takes_scs_when_the_low_rank_factor_would_be_wide():
    from segensemble.consensus import sdp

    L, _ = rpm_ensemble(100, 4, 25, 0.2, rng=0)
    n = Ensemble.from_labels(L).n_objects
    assert sdp.AUTO_SCS_OBJECTS < n <= sdp.AUTO_SCS_DENSE_OBJECTS
    assert SDP(n_clusters=25).fit(L).solver_ == "scs"      # 2 K = 50 columns >= n / 2
    assert SDP(n_clusters=5).fit(L).solver_ == "lowrank"   # 10 columns
    assert SDP(n_clusters=5, rank=50).fit(L).solver_ == "scs"


@pytest.mark.parametrize("rounding", ["wta", "kmeans"])
def test_roundings_recover_planted_clusters(rounding):
    L, z = rpm_ensemble(400, 12, 5, 0.3, rng=2)
    est = SDP(n_clusters=5, rounding=rounding, random_state=0).fit(L)
    assert adjusted_rand_score(z, est.labels_) > 0.95


def test_winner_takes_all_gives_identical_rows_identical_labels():
    rng = np.random.default_rng(0)
    E = np.repeat(rng.random((6, 3)), 3, axis=0)
    labels = winner_takes_all(E, np.ones(len(E)), 3)
    assert len(np.unique(labels)) == 3
    assert all(len(set(labels[i : i + 3])) == 1 for i in range(0, len(E), 3))


@pytest.mark.parametrize("bad, message", [
    ({"solver": "mosek"}, "solver"),
    ({"rounding": "max"}, "rounding"),
    ({"tol": 0.0}, "tol"),
    ({"rank": 0}, "rank"),
])
def test_bad_parameters_are_named(bad, message):
    with pytest.raises(InputError, match=message):
        SDP(n_clusters=2, **bad).fit(np.array([[0, 1], [0, 1], [1, 0]]))


@pytest.mark.parametrize("solver", ["scs", "lowrank"])
def test_more_clusters_than_distinct_rows_gives_one_cluster_per_row(solver):
    """5 objects with 2 distinct label rows: K = 3 or 5 cannot split equal rows (tr Z = K would be infeasible);
    the result is the K = 2 partition, as basic gives (it failed with 'SCS failed: status infeasible')."""
    L = np.array([[0, 1], [0, 1], [1, 0], [1, 0], [0, 1]])
    for k in (3, 5):
        est = SDP(n_clusters=k, solver=solver).fit(L)
        assert est.labels_.tolist() == [0, 0, 1, 1, 0] and est.n_clusters_ == 2


def test_as_many_clusters_as_distinct_rows_is_the_identity_without_a_solve():
    """K = n leaves Z = I the only feasible point (Z 1 = 1 and Z >= 0 bound every Z_uu by 1, and tr Z = n). Solved,
    `fuse -m sdp -k 100000` on a 640 x 427 photo (6 135 superatoms) ran the low-rank solver on a 6 135 x 12 270 factor
    for over ten minutes; now nothing is solved, and the objective is the one SCS reaches."""
    from segensemble.consensus._base import as_ensemble, collapse_duplicate_rows

    rng = np.random.default_rng(0)
    L, w = rng.integers(0, 4, (30, 5)), rng.integers(1, 4, 30).astype(float)
    reduced, _ = collapse_duplicate_rows(as_ensemble(L, w))
    n = reduced.n_objects
    est = SDP(n_clusters=n).fit(L, sample_weight=w)
    assert est.solver_ == "identity" and est.n_iter_ == 0 and est.n_clusters_ == n
    B, s = _problem_data(reduced)
    factor, info = sdp_scs(B, s, n, eps=1e-6)
    assert np.abs(factor - np.eye(n)).max() < 1e-3
    assert est.objective_ == est.rounded_objective_ == pytest.approx(info["objective"], rel=1e-4)
