"""Members that abstain (-1 / NaN): the Ensemble keeps them exactly; methods honour them or refuse."""

from __future__ import annotations

import numpy as np
import pytest

from segensemble import Ensemble, InputError, consensus
from segensemble.datasets import rpm_ensemble

ABSTAINING = consensus.abstaining_methods()


def _with_abstentions(seed, n=60, m=5, k=3, rate=0.2):
    L, truth = rpm_ensemble(n, m, k, 0.15, rng=seed)
    rng = np.random.default_rng(seed)
    L = L.astype(np.int64)
    L[rng.random(L.shape) < rate] = -1
    L[L.max(axis=1) < 0, 0] = truth[L.max(axis=1) < 0]  # every object keeps a label somewhere
    return L


def _same_partition(a, b):
    pairs = set(zip(np.asarray(a).tolist(), np.asarray(b).tolist()))
    return len(pairs) == len(set(np.asarray(a).tolist())) == len(set(np.asarray(b).tolist()))


def test_ensemble_keeps_abstentions_in_labels_incidence_and_coassociation():
    ens = Ensemble.from_labels([[5, 0], [5, -1], [7, 0]])
    assert ens.labels.tolist() == [[0, 0], [0, -1], [1, 0]] and ens.n_clusters == (2, 1) and ens.abstains
    assert ens.incidence.toarray().tolist() == [[1, 0, 1], [1, 0, 0], [0, 1, 1]]
    # pairs over the members that label both: (0, 2) half together; (1, 2) apart in the only common member
    assert ens.coassociation().tolist() == [[1.0, 1.0, 0.5], [1.0, 1.0, 0.0], [0.5, 0.0, 1.0]]
    nan = Ensemble.from_labels(np.array([[5.0, 0.0], [5.0, np.nan], [7.0, 0.0]]))
    assert nan.labels.tolist() == ens.labels.tolist()


def test_an_object_no_member_labels_is_refused():
    with pytest.raises(InputError, match="object 1 has no label in any member"):
        Ensemble.from_labels([[0, 1], [-1, -1]])


@pytest.mark.parametrize("name", sorted(set(consensus.available()) - set(ABSTAINING)))
def test_methods_that_cannot_use_abstentions_refuse_them(name):
    L = _with_abstentions(0)
    with pytest.raises(InputError, match="leave objects unlabelled"):
        consensus.get(name)(n_clusters=3).fit(L)


@pytest.mark.parametrize("name", ABSTAINING)
@pytest.mark.parametrize("seed", range(3))
def test_abstaining_members_keep_relabelling_and_member_order_invariance(name, seed):
    L = _with_abstentions(seed)
    rng = np.random.default_rng(100 + seed)
    relabelled = np.stack([np.where(c >= 0, rng.permutation(10)[np.maximum(c, 0)], -1) for c in L.T], axis=1)
    shuffled = relabelled[:, rng.permutation(L.shape[1])]
    a = consensus.get(name)(n_clusters=3).fit(L).labels_
    b = consensus.get(name)(n_clusters=3).fit(shuffled).labels_
    assert _same_partition(a, b)


@pytest.mark.parametrize("name", ABSTAINING)
@pytest.mark.parametrize("seed", range(3))
def test_a_member_that_abstains_everywhere_equals_dropping_it(name, seed):
    L = _with_abstentions(seed)
    silent = np.concatenate([L[:, :2], np.full((len(L), 1), -1), L[:, 2:]], axis=1)
    a = consensus.get(name)(n_clusters=3).fit(L).labels_
    b = consensus.get(name)(n_clusters=3).fit(silent).labels_
    assert np.array_equal(a, b)


@pytest.mark.parametrize("name", ABSTAINING)
def test_abstentions_on_an_easy_ensemble_still_find_the_truth(name):
    z = np.repeat([0, 1, 2], 20)
    L = np.stack([z] * 6, axis=1)
    L[np.random.default_rng(0).random(L.shape) < 0.3] = -1
    L[L.max(axis=1) < 0, 0] = z[L.max(axis=1) < 0]
    assert _same_partition(consensus.get(name)(n_clusters=3).fit(L).labels_, z)
