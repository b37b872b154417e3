"""Evidence accumulation: weighted linkage against SciPy, lifetime, limits."""

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from segensemble import Ensemble
from segensemble.consensus import EAC
from segensemble.consensus._linkage import lifetime_n_clusters, weighted_linkage
from segensemble.graph.hierarchy import Hierarchy


@pytest.mark.parametrize("method", ["average", "single", "complete"])
def test_unit_weight_linkage_matches_scipy(method):
    rng = np.random.default_rng(0)
    pts = rng.random((40, 2))
    D = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    merges, heights = weighted_linkage(D.copy(), np.ones(40), method)
    Z = linkage(squareform(D, checks=False), method=method)
    np.testing.assert_allclose(heights, np.sort(Z[:, 2]), atol=1e-12)
    for k in (2, 5, 9):
        ours = Hierarchy(40, merges, heights).cut(n_regions=k)
        ref = fcluster(Z, k, criterion="maxclust")
        assert len(set(zip(ours.tolist(), ref.tolist()))) == k


def test_weighted_average_linkage_equals_duplication():
    rng = np.random.default_rng(1)
    pts = rng.random((12, 2))
    w = rng.integers(1, 5, 12)
    D = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    _, h_w = weighted_linkage(D.copy(), w.astype(float), "average")
    dup = np.repeat(pts, w, axis=0)
    Dd = np.sqrt(((dup[:, None] - dup[None]) ** 2).sum(-1))
    _, h_d = weighted_linkage(Dd.copy(), np.ones(len(dup)), "average")
    np.testing.assert_allclose(h_w, h_d[h_d > 0], atol=1e-12)


def test_lifetime_picks_longest_gap():
    assert lifetime_n_clusters(np.array([0.1, 0.1, 0.2, 0.9])) == 2
    assert lifetime_n_clusters(np.array([0.1, 0.7, 0.8, 0.9])) == 4


def test_eac_auto_recovers_clear_structure():
    z = np.repeat([0, 1, 2], 10)
    L = np.stack([z, z, np.where(np.arange(30) == 0, 1, z), z], axis=1)
    est = EAC().fit(L)
    assert est.n_clusters_ == 3
    assert len(set(zip(est.labels_.tolist(), z.tolist()))) == 3


def test_eac_refuses_beyond_dense_limit(monkeypatch):
    import segensemble.ensemble as ens_mod
    from segensemble import InputError

    monkeypatch.setattr(ens_mod, "DENSE_OBJECT_LIMIT", 10)
    with pytest.raises(InputError, match="limited to 10 objects.*basic"):
        EAC(n_clusters=2).fit(Ensemble.from_labels(np.arange(40).reshape(20, 2) % 7))
