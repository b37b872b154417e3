"""EM consensus: a finite mixture of multinomials over the members' labels."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from segensemble.constraints import Interval

from segensemble.consensus._incidence import incidence_t_dot
from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, FitResult
from segensemble.consensus._registry import REGISTRY
from segensemble.consensus.coassociation import basic_start

__all__ = ["EM"]

#: Objects EM's E step works on at a time: the (n, K) passes over 10^6 objects missed the cache.
EM_BLOCK = 8192


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
        w, ks, off, columns = ensemble.weights, ensemble.n_clusters, ensemble.offsets, ensemble.member_labels
        n, m = len(w), len(columns)
        incidence_t = incidence_t_dot(ensemble)
        labels_all = [bool(lab.min() >= 0) for lab in columns]  # members that label every object
        said = [None if full else np.flatnonzero(lab >= 0) for lab, full in zip(columns, labels_all)]
        R = np.zeros((n, k))
        R[np.arange(n), start] = 1.0
        last = -np.inf
        # (n, K) arrays written in place each iteration (the values of the plain expressions in the comments,
        # operation by operation), not a dozen fresh ones of that size per iteration
        Rw, logp, top, norm = np.empty((n, k)), np.empty((n, k)), np.empty(n), np.empty(n)
        for it in range(self.max_iter):
            np.multiply(R, w[:, None], out=Rw)  # Rw = R * w[:, None]
            tot = Rw.sum(axis=0)
            alpha = (tot + self.smoothing) / (tot.sum() + k * self.smoothing)
            counts = incidence_t(Rw)  # the responsibilities summed per member cluster, in object order
            log_theta = []
            for j in range(m):
                if ks[j] == 0:  # a member that labels nothing
                    log_theta.append(None)
                    continue
                tj = tot if labels_all[j] else np.take(Rw, said[j], axis=0).sum(axis=0)  # the objects it labels
                theta = (counts[off[j]:off[j + 1]] + self.smoothing) / (tj + ks[j] * self.smoothing)[None, :]
                # an abstaining member's table gets a row of zeros after its last label, read for -1 by 'wrap'
                # (adding 0.0 leaves a sum of logs as it is)
                log_theta.append(np.log(theta) if labels_all[j] else np.vstack([np.log(theta), np.zeros((1, k))]))
            for s in range(0, n, EM_BLOCK):  # the E step, EM_BLOCK rows at a time (in cache): the same operations
                lp, rows = logp[s:s + EM_BLOCK], slice(s, s + EM_BLOCK)
                lp[:] = np.log(alpha)  # np.tile(np.log(alpha), (n, 1))
                for j, lt in enumerate(log_theta):
                    if lt is None:
                        continue
                    # logp += np.log(theta)[lj] where member j labels (labels in range: unbuffered)
                    lp += np.take(lt, columns[j][rows], axis=0, mode="clip" if labels_all[j] else "wrap")
                t = lp.max(axis=1, keepdims=True)
                lik = np.exp(np.subtract(lp, t, out=lp), out=lp)  # np.exp(logp - top)
                nm = lik.sum(axis=1, keepdims=True)
                np.divide(lik, nm, out=R[rows])  # lik / norm
                top[rows], norm[rows] = t[:, 0], nm[:, 0]
            ll = float(np.sum(w * (top + np.log(norm))) / w.sum())
            if ll - last < self.tol:
                break
            last = ll
        self.log_likelihood_ = ll
        self.n_iter_ = it + 1
        return FitResult(np.argmax(R, axis=1), {"memberships_": R})
