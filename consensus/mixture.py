"""EM consensus: a finite mixture of multinomials over the members' labels."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from segensemble.constraints import Interval

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, FitResult
from segensemble.consensus._registry import REGISTRY
from segensemble.consensus.coassociation import basic_start

__all__ = ["EM"]


@REGISTRY.register("em")
class EM(ConsensusClusterer):
    """Consensus by EM on a mixture of multinomials (Topchy, Jain & Punch 2004).

    Each object's label vector (y_i1, ..., y_im) is drawn from one of K
    components; given the component, members are independent multinomials:
    ``P(y_i) = sum_k alpha_k prod_j theta_jk[y_ij]``. EM alternates the
    responsibilities and the weighted maximum-likelihood updates of alpha and
    theta (object weights count as copies; ``smoothing`` is a Dirichlet
    pseudo-count). Cost O(n m K) per iteration. The start is the Basic
    consensus (deterministic; above 200 000 distinct label rows from its
    maximin start alone, :func:`~segensemble.consensus.coassociation.basic_start`),
    so the method is invariant to relabelling.

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
        K ('auto': the eigengap estimate used by Basic).
    max_iter : int, default 100
    tol : float, default 1e-6
        Stop when the mean log-likelihood improves less than this.
    smoothing : float, default 1e-3
    refine : bool or int, default False

    Attributes
    ----------
    labels_, memberships_ : (n_objects,), (n_objects, K)
        Hard labels and the responsibilities (soft consensus).
    log_likelihood_ : float
        Weighted mean log-likelihood at the end.
    n_iter_ : int

    References
    ----------
    A. Topchy, A. K. Jain, W. Punch, "A mixture model for clustering
    ensembles", SIAM SDM 2004.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> est = EM(n_clusters=2).fit(L)
    >>> est.labels_.tolist(), est.memberships_.shape
    ([0, 0, 1, 1], (4, 2))
    """

    #: A member that leaves an object unlabelled is left out of that object's likelihood (missing at random),
    #: and its label frequencies come from the objects it labels.
    capabilities = Capabilities(soft=True, distinct_rows=True, abstain=True)

    _parameter_constraints: dict = {
        "n_clusters": N_CLUSTERS,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "smoothing": [Interval(Real, 0, None, closed="neither")],
        "refine": REFINE,
    }

    def __init__(self, n_clusters="auto", *, max_iter=100, tol=1e-6, smoothing=1e-3, refine=False):
        self.n_clusters = n_clusters
        self.max_iter = max_iter
        self.tol = tol
        self.smoothing = smoothing
        self.refine = refine

    def _fit(self, ensemble):
        start = basic_start(ensemble, self.n_clusters)
        k = int(start.max()) + 1
        L, w, ks = ensemble.labels, ensemble.weights, ensemble.n_clusters
        (n, m), columns = L.shape, ensemble.member_labels  # each member's labels read whole every iteration
        R = np.zeros((n, k))
        R[np.arange(n), start] = 1.0
        last = -np.inf
        # (n, K) arrays written in place each iteration (the values of the plain expressions in the comments,
        # operation by operation), not a dozen fresh ones of that size per iteration
        Rw, logp, picked, RwT = np.empty((n, k)), np.empty((n, k)), np.empty((n, k)), np.empty((k, n))
        for it in range(self.max_iter):
            np.multiply(R, w[:, None], out=Rw)  # Rw = R * w[:, None]
            tot = Rw.sum(axis=0)
            alpha = (tot + self.smoothing) / (tot.sum() + k * self.smoothing)
            logp[:] = np.log(alpha)  # np.tile(np.log(alpha), (n, 1))
            RwT[:] = Rw.T  # one transposed copy: each member's bincounts read its rows whole
            for j in range(m):
                lj, rjT, tj, at = columns[j], RwT, tot, slice(None)
                if ks[j] == 0:  # a member that labels nothing
                    continue
                if lj.min() < 0:  # the objects this member labels
                    at = lj >= 0
                    lj, rjT = lj[at], RwT[:, at]
                    tj = Rw[at].sum(axis=0)
                # the responsibilities summed per label, in object order (as np.add.at, without its slow path)
                counts = np.stack([np.bincount(lj, weights=rjT[c], minlength=ks[j]) for c in range(k)], axis=1)
                theta = (counts + self.smoothing) / (tj + ks[j] * self.smoothing)[None, :]
                if isinstance(at, slice):  # logp += np.log(theta)[lj]
                    logp += np.take(np.log(theta), lj, axis=0, out=picked, mode="clip")  # labels in range: unbuffered
                else:
                    logp[at] += np.log(theta)[lj]
            top = logp.max(axis=1, keepdims=True)
            lik = np.exp(np.subtract(logp, top, out=logp), out=logp)  # np.exp(logp - top)
            norm = lik.sum(axis=1, keepdims=True)
            R = np.divide(lik, norm, out=R)  # lik / norm
            ll = float(np.sum(w * (top[:, 0] + np.log(norm[:, 0]))) / w.sum())
            if ll - last < self.tol:
                break
            last = ll
        self.log_likelihood_ = ll
        self.n_iter_ = it + 1
        return FitResult(np.argmax(R, axis=1), {"memberships_": R})
