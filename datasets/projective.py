"""Projective clustering data: planted subspace clusters, LAC, and projective ensembles.

The projective ensembles follow Gullo, Domeniconi & Tagarelli's protocol: LAC
runs (Domeniconi et al. 2007) with random initial centroids and varying h, in
four equally sized groups E1-E4 — hard or soft object assignments, weighted
or unweighted (0/1) feature assignments.
"""

from __future__ import annotations

import numpy as np

from segensemble.validation import check_int, check_rng
from segensemble.errors import InputError, warn_deprecated

__all__ = ["make_subspace_clusters", "lac", "projective_ensemble", "ENSEMBLE_KINDS"]


def _consensus():
    """(LAC, ProjectiveEnsemble) from the consensus package: the datasets package's one deliberate deferral.

    Reading BSDS500 or fetching it must not import the consensus layer (the algorithms above this package) for
    the projective-clustering generators beside them.
    """
    from segensemble.consensus.lac import lac
    from segensemble.consensus.pce import ProjectiveEnsemble

    return lac, ProjectiveEnsemble


def lac(X, n_clusters: int, *, h: float = 0.2, rng=None, max_iter: int = 50):
    """Deprecated location of :func:`segensemble.consensus.lac.lac` (a clustering algorithm, not a dataset).

    Examples
    --------
    >>> import warnings
    >>> X, _, _ = make_subspace_clusters(30, 4, 2, rng=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     lac(X, 2, rng=0)[1].shape
    (2, 4)
    """
    warn_deprecated("segensemble.datasets.lac", "segensemble.consensus.lac.lac")
    return _consensus()[0](X, n_clusters, h=h, rng=rng, max_iter=max_iter)

#: Kinds of projective solutions: (soft objects, weighted features).
ENSEMBLE_KINDS = {"E1": (False, True), "E2": (False, False), "E3": (True, True), "E4": (True, False)}


def make_subspace_clusters(n_objects: int, n_features: int, n_clusters: int, *, n_relevant: int = 3,
                           spread: float = 0.05, rng=None):
    """Clusters that are compact on their own feature subsets and uniform noise elsewhere.

    Every cluster draws its relevant features at random (``n_relevant`` of
    them) and a centre in [0, 1]; its objects are the centre plus Gaussian
    noise of standard deviation ``spread`` on those features and uniform in
    [0, 1] on all others.

    Returns
    -------
    X : (n_objects, n_features) array
    labels : (n_objects,) int array
    relevant : (n_clusters, n_features) bool array

    Examples
    --------
    >>> X, y, rel = make_subspace_clusters(60, 8, 3, rng=0)
    >>> X.shape, np.bincount(y).tolist(), rel.sum(axis=1).tolist()
    ((60, 8), [20, 20, 20], [3, 3, 3])
    """
    n = check_int(n_objects, "n_objects", minimum=1)
    f = check_int(n_features, "n_features", minimum=1)
    k = check_int(n_clusters, "n_clusters", minimum=1, maximum=n)
    r = check_int(n_relevant, "n_relevant", minimum=1, maximum=f)
    gen = check_rng(rng)
    labels = np.arange(n) % k
    X = gen.random((n, f))
    relevant = np.zeros((k, f), dtype=bool)
    for c in range(k):
        feats = gen.choice(f, size=r, replace=False)
        relevant[c, feats] = True
        rows = labels == c
        centre = gen.uniform(0.2, 0.8, size=r)
        X[np.ix_(rows, feats)] = centre + gen.normal(0.0, spread, size=(int(rows.sum()), r))
    return X, labels, relevant


def _soft_objects(X, labels, weights, k):
    """Soft memberships: inverse LAC-weighted squared distances to the cluster means, normalised."""
    means = np.stack([X[labels == c].mean(axis=0) for c in range(k)])
    d = np.einsum("kf,nkf->nk", weights[:k], (X[:, None, :] - means[None]) ** 2)
    inv = 1.0 / np.maximum(d, 1e-12)
    return inv / inv.sum(axis=1, keepdims=True)


def projective_ensemble(X, n_clusters: int, n_solutions: int, *, kinds=("E1", "E2", "E3", "E4"),
                        h_range=(0.05, 0.5), rng=None):
    """A projective ensemble of LAC runs (random starts, h drawn in ``h_range``) on standardised features.

    The solutions are split evenly over ``kinds`` (ENSEMBLE_KINDS): E1 hard
    objects and LAC's weighted features; E2 hard objects and unweighted
    features ``Delta = [w >= mean(w)]``; E3 soft objects (memberships
    proportional to the inverse of LAC's weighted squared distance to each
    cluster's mean) and weighted features; E4 soft and unweighted.

    Returns
    -------
    ProjectiveEnsemble

    References
    ----------
    F. Gullo, C. Domeniconi, A. Tagarelli, Machine Learning 98, 2015, Sec. 5.1.2.
    (The paper's E3 formula makes memberships proportional to the distance
    itself; we take the inverse, so that an object belongs most to its nearest
    cluster.)

    Examples
    --------
    >>> X, y, rel = make_subspace_clusters(40, 5, 2, rng=0)
    >>> pe = projective_ensemble(X, 2, 4, rng=0)
    >>> len(pe.gammas), float(pe.deltas[1].max())
    (4, 1.0)
    """
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)  # h is relative to unit feature variance
    m = check_int(n_solutions, "n_solutions", minimum=1)
    for kind in kinds:
        if kind not in ENSEMBLE_KINDS:
            raise InputError(f"kinds: expected names among {sorted(ENSEMBLE_KINDS)}, got {kind!r}")
    gen = check_rng(rng)
    run_lac, ProjectiveEnsemble = _consensus()
    gammas, deltas = [], []
    for j in range(m):
        soft, weighted = ENSEMBLE_KINDS[kinds[j * len(kinds) // m]]
        labels, w, _ = run_lac(X, n_clusters, h=float(gen.uniform(*h_range)), rng=gen)
        k = int(labels.max()) + 1
        gammas.append(_soft_objects(X, labels, w, k) if soft else np.eye(k)[labels])
        deltas.append(w[:k] if weighted else (w[:k] >= w[:k].mean(axis=1, keepdims=True)).astype(np.float64))
    return ProjectiveEnsemble(gammas, deltas)
