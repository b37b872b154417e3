"""scikit-learn's estimator API for every consensus estimator: get/set_params, clone, pickle (the image-aware
frame clones the method it wraps; pipelines pickle fitted estimators)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from segensemble import consensus

METHODS = consensus.available()


def _labels():
    rng = np.random.default_rng(0)
    z = np.arange(30) % 3
    return np.stack([rng.permutation(3)[z] for _ in range(4)], axis=1)


@pytest.mark.parametrize("name", METHODS)
def test_get_set_params_and_clone(name):
    est = consensus.get(name)(n_clusters=3)
    params = est.get_params()
    assert "n_clusters" in params and params["n_clusters"] == 3
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    assert est.set_params(**params) is est and est.get_params() == params
    est.set_params(n_clusters=2)
    assert est.n_clusters == 2 and twin.n_clusters == 3  # the clone shares nothing


@pytest.mark.parametrize("name", METHODS)
def test_a_fitted_estimator_pickles_and_clones_unfitted(name):
    est = consensus.get(name)(n_clusters=3).fit(_labels())
    back = pickle.loads(pickle.dumps(est))
    assert np.array_equal(back.labels_, est.labels_) and back.get_params() == est.get_params()
    fresh = clone(est)
    assert not hasattr(fresh, "labels_")
    assert np.array_equal(fresh.fit(_labels()).labels_, est.labels_)


def test_the_agreement_step_too():
    from segensemble.consensus.agreement import CAP

    cap = CAP(n_words=8, random_state=0)
    twin = clone(cap)
    assert twin.get_params() == cap.get_params() and pickle.loads(pickle.dumps(cap)).get_params() == cap.get_params()


@pytest.mark.parametrize("name", ["vote", "merge", "kcc"])
def test_scikit_learn_sees_a_clusterer(name):
    """The protocol without scikit-learn's base class: its tags, clone, grid search and repr work on ours."""
    from sklearn.base import is_clusterer
    from sklearn.model_selection import ParameterGrid

    est = consensus.get(name)(n_clusters=3)
    assert is_clusterer(est)
    assert repr(est) == f"{type(est).__name__}(n_clusters=3)"
    fits = [clone(est).set_params(**p).fit(_labels()) for p in ParameterGrid({"n_clusters": [2, 3]})]
    assert [f.n_clusters_ for f in fits] == [2, 3]
    assert np.array_equal(est.fit_predict(_labels()), fits[1].labels_)
    with pytest.raises(ValueError, match="Invalid parameter 'speed' for estimator"):
        est.set_params(speed=1)


def test_seeds_are_drawn_as_scikit_learn_draws_them():
    from sklearn.utils import check_random_state

    from segensemble.consensus._base import seed_from

    for make in (lambda: 0, lambda: 7, lambda: np.int64(3), lambda: np.random.RandomState(5)):
        assert seed_from(make()) == int(check_random_state(make()).randint(0, 2**31 - 1))
    np.random.seed(11)
    ours = seed_from(None)
    np.random.seed(11)
    assert ours == int(check_random_state(None).randint(0, 2**31 - 1))
