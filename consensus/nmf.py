"""NMF consensus: the average association matrix factorised as Q S Q^T, through the incidence matrix."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from segensemble.constraints import Interval

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, FitResult
from segensemble.consensus._registry import REGISTRY
from segensemble.abstentions import speaking_members
from segensemble.consensus._incidence import incidence_t_dot
from segensemble.consensus._nmf_sweep import update_memberships
from segensemble.consensus.coassociation import _gram, basic_start

__all__ = ["NMFConsensus"]

#: Added to every entry of the starting factor: multiplicative updates never revive an exact zero.
_START_FLOOR = 0.2


@REGISTRY.register("nmf")
class NMFConsensus(ConsensusClusterer):
    """Consensus by nonnegative matrix factorisation (Li, Ding & Jordan 2007).

    The average association matrix ``M = (1/m) sum_j Z_j Z_j^T`` (``M_uv``:
    the fraction of members that put u and v together) is approximated by
    ``Q S Q^T`` with ``Q >= 0`` (n x K, the soft consensus) and ``S >= 0``
    (K x K), minimising ``||M - Q S Q^T||_F^2`` by the multiplicative updates
    of the orthogonal symmetric tri-factorisation (Ding, Li, Peng & Park,
    KDD 2006) the paper uses::

        Q <- Q * sqrt( M Q S / (Q Q^T M Q S) )
        S <- S * sqrt( Q^T M Q / (Q^T Q S Q^T Q) )

    Object weights count as copies: with ``D = diag(w)`` every ``M`` becomes
    ``M D`` and every ``Q^T`` ``Q^T D``, which is the same iteration on the
    copies. ``M`` is never formed: ``M D Q = H (H^T D Q) / m`` with the
    incidence matrix H, so an iteration costs O(nnz(H) K + n K^2) — linear in
    the number of objects — and is one compiled pass over the objects, each
    reading the clusters of its members
    (:mod:`segensemble.consensus._nmf_sweep`). The start is the Basic consensus (deterministic,
    invariant to relabelling; above 200 000 distinct label rows from its
    maximin start alone, :func:`~segensemble.consensus.coassociation.basic_start`),
    as one-hot columns plus 0.2 so that every
    entry can move; labels are the largest entry of each row of Q. A member
    that leaves an object unlabelled adds nothing to its associations (its
    block of H is empty there).

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
        K ('auto': the eigengap estimate used by Basic).
    max_iter : int, default 200
    tol : float, default 1e-6
        Stop when the objective improves by less than this, relative to
        ``||M||_F^2``.
    refine : bool or int, default False

    Attributes
    ----------
    labels_, memberships_ : (n_objects,), (n_objects, K)
        Hard labels and the rows of Q normalised to sum to one.
    objective_ : float
        ``||M - Q S Q^T||_F^2 / ||M||_F^2`` at the end (object weights as copies).
    n_iter_ : int

    References
    ----------
    T. Li, C. Ding, M. I. Jordan, "Solving consensus and semi-supervised
    clustering problems using nonnegative matrix factorization", ICDM 2007;
    C. Ding, T. Li, W. Peng, H. Park, "Orthogonal nonnegative matrix
    tri-factorizations for clustering", KDD 2006.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> est = NMFConsensus(n_clusters=2).fit(L)
    >>> est.labels_.tolist(), est.memberships_.shape
    ([0, 0, 1, 1], (4, 2))
    """

    #: Identical label rows are one object (weights summed): the weighted iteration equals the copies' one in
    #: exact arithmetic, and collapsing makes it so in floating point too (and the iteration shorter).
    capabilities = Capabilities(soft=True, distinct_rows=True, abstain=True)

    _parameter_constraints: dict = {
        "n_clusters": N_CLUSTERS,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "refine": REFINE,
    }

    def __init__(self, n_clusters="auto", *, max_iter=200, tol=1e-6, refine=False):
        self.n_clusters = n_clusters
        self.max_iter = max_iter
        self.tol = tol
        self.refine = refine

    def _fit(self, ensemble):
        start = basic_start(ensemble, self.n_clusters)
        k = int(start.max()) + 1
        w, m = ensemble.weights, speaking_members(ensemble.n_clusters)
        # every object's cluster in every member as a row of A = H^T D Q (-1 where the member abstains)
        clusters = np.where(ensemble.labels >= 0, ensemble.labels + ensemble.offsets[:-1], -1).astype(np.int64)
        # ||M||_F^2 with copies: sum_uv w_u w_v M_uv^2 = ||H^T D H||_F^2 / m^2
        G = _gram(ensemble)  # H^T D H
        norm2 = float(np.sum(G * G)) / m**2
        Q = np.full((len(w), k), _START_FLOOR)
        Q[np.arange(len(w)), start] += 1.0
        Q /= np.sqrt(w @ Q**2)[None, :]  # columns of unit D-norm
        wQ = w[:, None] * Q
        A = incidence_t_dot(ensemble)(wQ)  # H^T D Q
        QtQ = Q.T @ wQ  # Q^T D Q
        del wQ
        QtMQ = A.T @ A / m  # Q^T D M D Q
        S = np.maximum(QtMQ, 1e-12)
        last, eps = np.inf, 1e-300
        A_next, QtQ_next = np.empty_like(A), np.empty_like(QtQ)
        for it in range(self.max_iter):
            S *= np.sqrt(QtMQ / np.maximum(QtQ @ S @ QtQ, eps))
            A_next.fill(0.0)
            QtQ_next.fill(0.0)
            # Q *= sqrt(M D Q S / max(Q (Q^T D M D Q S), eps)), row by row, gathering the next A and Q^T D Q
            update_memberships(clusters, A @ S, QtMQ @ S, Q, w, float(m), eps, A_next, QtQ_next)
            A, A_next, QtQ, QtQ_next = A_next, A, QtQ_next, QtQ
            QtMQ = A.T @ A / m
            objective = (norm2 - 2 * np.sum(QtMQ * S) + np.sum((QtQ @ S) * (S @ QtQ).T)) / norm2
            if last - objective < self.tol:
                break
            last = objective
        self.objective_ = float(objective)
        self.n_iter_ = it + 1
        memberships = Q / np.maximum(Q.sum(axis=1, keepdims=True), eps)
        return FitResult(np.argmax(Q, axis=1), {"memberships_": memberships})
