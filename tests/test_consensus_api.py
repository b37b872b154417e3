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
