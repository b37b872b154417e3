"""The random perturbation model (RPM) of label ensembles."""

from __future__ import annotations

import numpy as np

from segensemble.validation import check_int, check_rng
from segensemble.errors import InputError

__all__ = ["rpm_ensemble"]


def rpm_ensemble(n_objects: int, n_members: int, n_clusters: int, p: float, *, p1=None, truth="even", rng=None):
    """Draw a label ensemble from the random perturbation model.

    True labels z* are balanced, or, with ``p1``, a share ``p1`` of the
    objects is in cluster 0 and the rest is spread over the other clusters.
    With ``truth='even'`` the cluster sizes are exact (balanced sizes differ
    by at most one); with ``truth='random'`` every object draws its true label
    independently with those probabilities, as in Zhou et al.'s experiments.
    Every member draws each object's
    label as z*_i with probability 1 - p and uniformly over the K labels
    otherwise, then permutes its labels at random.

    Parameters
    ----------
    n_objects, n_members, n_clusters : int
        n, N (= m) and K.
    p : float in [0, 1]
        Perturbation probability.
    p1 : float in (0, 1), optional
        Unbalanced variant: share of the largest cluster.
    truth : {'even', 'random'}, default 'even'
        Exact cluster sizes, or sizes drawn at random (multinomial).
    rng : None, int or numpy Generator

    Returns
    -------
    labels : (n_objects, n_members) int32
    truth : (n_objects,) int32

    References
    ----------
    Z. Zhou, G. Dudeja, A. A. Amini, "Statistical guarantees for consensus
    clustering", ICLR 2023, Definition 1 (eq. 8) and Sec. 4.

    Examples
    --------
    >>> L, z = rpm_ensemble(6, 3, 2, 0.0, rng=0)
    >>> L.shape, sorted(np.bincount(z).tolist())
    ((6, 3), [3, 3])
    """
    n = check_int(n_objects, "n_objects", minimum=1)
    m = check_int(n_members, "n_members", minimum=1)
    k = check_int(n_clusters, "n_clusters", minimum=1, maximum=n)
    if not 0.0 <= float(p) <= 1.0:
        raise InputError(f"p: expected a probability in [0, 1], got {p!r}")
    if truth not in ("even", "random"):
        raise InputError(f"truth: expected 'even' or 'random', got {truth!r}")
    if p1 is not None and (not 0.0 < float(p1) < 1.0 or k < 2):
        raise InputError(f"p1: expected a share in (0, 1) with n_clusters >= 2, got {p1!r}")
    gen = check_rng(rng)
    if truth == "random":
        if p1 is None:
            z_true = gen.integers(0, k, size=n)
        else:
            z_true = np.where(gen.random(n) < float(p1), 0, gen.integers(1, k, size=n))
    else:
        if p1 is None:
            z_true = np.arange(n) % k
        else:
            n0 = int(round(p1 * n))
            z_true = np.concatenate([np.zeros(n0, dtype=np.int64), 1 + np.arange(n - n0) % (k - 1)])
        z_true = gen.permutation(z_true)
    labels = np.empty((n, m), dtype=np.int32)
    for j in range(m):
        noisy = gen.random(n) < p
        z = np.where(noisy, gen.integers(0, k, size=n), z_true)
        labels[:, j] = gen.permutation(k)[z]
    return labels, z_true.astype(np.int32)
