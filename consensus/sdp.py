"""SDP consensus: Model 2 of Singh, Mukherjee, Peng & Xu (NIPS 2007).

The consensus maximises ``tr(S Z)`` with ``S = sum_j Z_j Z_j^T`` over
normalised partition matrices ``Z = X (X^T X)^{-1} X^T``; the relaxation keeps
``Z 1 = 1``, ``tr Z = K``, ``Z >= 0`` elementwise and ``Z`` positive
semidefinite (the k-means SDP of Peng & Wei applied to ``S``; ``Z <= I`` in
the PSD order follows, since a symmetric nonnegative matrix with unit row
sums has spectral radius one).

Atoms of weight ``w`` are handled exactly (ALGORITHMS.md section 3): with
``D = diag(w)``, ``s = sqrt(w)`` and the atom-level blocks ``Y`` of ``Z``, the
variable ``M = D^{1/2} Y D^{1/2}`` solves the same problem with
``C = D^{1/2} S_a D^{1/2}``, ``M s = s`` and ``tr M = K``. ``C = B B^T`` with
``B = D^{1/2} H`` has rank at most ``sum_j k_j``, so every product ``C U``
costs O(nnz(H) r) and ``C`` is never formed by the scalable solver.

Two solvers:

* ``'scs'``: cvxpy with SCS, the reference — exact to the solver's tolerance
  but O(n^2) variables with a PSD cone, so limited to small problems.
* ``'lowrank'``: the nonnegative Burer–Monteiro factorisation ``M = U U^T``,
  ``U >= 0`` (n x r), of Zhuang, Chen, Yang & Zhang (ICLR 2024): an augmented
  Lagrangian on ``U U^T s = s`` whose inner problem is solved by projected
  gradient descent onto ``{U >= 0, ||U||_F^2 = K}`` (which enforces the trace
  and nonnegativity exactly), with a backtracking step.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from segensemble.constraints import Interval, StrOptions

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, seed_from
from segensemble.consensus._incidence import scaled
from segensemble.consensus._kmeans import weighted_kmeans
from segensemble.consensus._registry import REGISTRY
from segensemble.consensus.coassociation import _top_singular_vectors, eigengap_n_clusters
from segensemble.errors import InputError
from segensemble.consensus._sdp_solvers import SCS_MAX_OBJECTS, sdp_lowrank, sdp_scs

__all__ = ["SDP", "sdp_scs", "sdp_lowrank", "SCS_MAX_OBJECTS", "AUTO_SCS_OBJECTS", "AUTO_SCS_DENSE_OBJECTS"]

#: ``solver='auto'`` uses SCS up to this many objects, the low-rank solver above ...
AUTO_SCS_OBJECTS = 60
#: ... and SCS also up to this many objects when the low-rank factor would be at least half as wide as the
#: number of objects (K >= n / 4 with the default rank 2 K): such a factor has no size to save and converges
#: slowly. On the image-aware frame's superatoms (n 64-120, K ~ n / 2, BSDS500 val) SCS took 0.1-1.3 s against
#: 1.3-4 s, at a higher rounded objective on 9 of 12; on random-perturbation ensembles with K = n / 4, 0.7 s
#: against 2.5 s at n = 120 and 1.6 s against 2.6 s at n = 160 (at n = 250, 42 s against 1.7 s).
AUTO_SCS_DENSE_OBJECTS = 150


def _problem_data(ensemble):
    """B (n x sum k_j, sparse) with C = B B^T = D^{1/2} S_a D^{1/2}, and s = sqrt(w)."""
    s = np.sqrt(ensemble.weights)
    B = scaled(ensemble.incidence, rows=s)
    return B, s


def _embedding(factor, s, k):
    """Rows e_u with Y_K = E E^T: the rank-k projection of M, back on the object scale (D^{-1/2})."""
    if factor.shape[0] == factor.shape[1] and np.allclose(factor, factor.T):  # M itself (SCS)
        lam, V = np.linalg.eigh(factor)
        lam, V = lam[::-1][:k], V[:, ::-1][:, :k]
        E = V * np.sqrt(np.maximum(lam, 0.0))[None, :]
    else:  # U with M = U U^T
        P, sig, _ = np.linalg.svd(factor, full_matrices=False)
        E = P[:, :k] * sig[:k][None, :]
    return E / s[:, None]


def winner_takes_all(E, weights, k):
    """Round an embedding by winner-takes-all on K pivot objects.

    Rows are compared by cosine similarity. The first pivot is the object most
    similar to the weighted mean direction; each next pivot is the object
    least similar to the pivots so far; every object then goes to its most
    similar pivot. Ties go to the first object, so the result depends only on
    the rows (identical rows get identical labels).

    Examples
    --------
    >>> E = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 1.0]])
    >>> winner_takes_all(E, np.ones(4), 2).tolist()
    [0, 0, 1, 1]
    """
    norms = np.linalg.norm(E, axis=1)
    F = E / np.where(norms > 0, norms, 1.0)[:, None]
    pivots = [int(np.argmax(F @ (weights @ F)))]
    best = F @ F[pivots[0]]
    for _ in range(1, min(k, len(F))):
        pivots.append(int(np.argmin(best)))
        best = np.maximum(best, F @ F[pivots[-1]])
    return np.argmax(F @ F[pivots].T, axis=1)


@REGISTRY.register("sdp")
class SDP(ConsensusClusterer):
    """SDP consensus (Singh et al. 2007, Model 2), exact for weighted atoms.

    Solves the relaxed 0-1 SDP ``max tr(S Z)`` (module docstring) and rounds
    the rank-K projection of ``Z*``.

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
        K, or the largest eigengap of the co-association spectrum. Objects
        with equal label rows stay together, so at most as many clusters as
        distinct rows are formed (a larger K gives one cluster per row, as
        ``basic`` does).
    solver : {'auto', 'scs', 'lowrank'}, default 'auto'
        ``'scs'``: cvxpy + SCS, the exact reference (at most
        ``SCS_MAX_OBJECTS`` objects); ``'lowrank'``: the nonnegative
        Burer–Monteiro augmented Lagrangian, for thousands of atoms;
        ``'auto'``: SCS up to ``AUTO_SCS_OBJECTS`` objects, and up to
        ``AUTO_SCS_DENSE_OBJECTS`` when the low-rank factor would have at
        least n / 2 columns; else low-rank. Objects with identical label rows
        are solved as one (weights summed), so n counts distinct rows.
    rounding : {'wta', 'kmeans'}, default 'wta'
        Winner-takes-all on K pivots of the rank-K projection (the paper's
        rounding, :func:`winner_takes_all`), or weighted k-means on the rows
        of the rank-K embedding, started from the winner-takes-all labels and
        a maximin start.
    rank : int, optional
        Columns of the low-rank factor (default 2 K, at most the number of
        objects).
    tol : float, default 1e-6
        Low-rank solver tolerance (relative constraint residual and step);
        SCS uses ``min(tol * 10, 1e-5)``.
    max_iter : int, default 20000
        Low-rank solver steps.
    refine : bool or int, default False
        Passes of local refinement after the rounding.
    random_state : None or int
        Seeds the low-rank start.

    Attributes
    ----------
    labels_ : (n_objects,) int array
    objective_ : float
        ``tr(S Z*)`` of the relaxation at the solution (S = sum_j Z_j Z_j^T,
        object weights counted as copies).
    rounded_objective_ : float
        ``tr(S Z)`` of the rounded partition (``<= objective_`` up to the
        solver tolerance; the difference bounds the rounding loss).
    gap_ : float
        Relative primal-dual gap reported by SCS; NaN for the low-rank solver,
        which has no cheap dual certificate (see ``violation_``).
    violation_ : float
        Relative residual ``||M s - s|| / ||s||`` of the constraint ``Z 1 = 1``
        (trace and nonnegativity hold exactly for the low-rank solver).
    solver_ : str
        The solver that ran: ``'scs'``, ``'lowrank'``, or ``'identity'``
        when K equals the number of distinct rows (``Z = I`` is then the
        only feasible point; nothing is solved).
    n_iter_ : int

    References
    ----------
    V. Singh, L. Mukherjee, J. Peng, J. Xu, "Ensemble clustering using
    semidefinite programming", NIPS 2007, Model 2 (eqs. 24-26);
    J. Peng, Y. Wei, "Approximating K-means-type clustering via semidefinite
    programming", SIAM J. Optim. 18(1), 2007;
    Y. Zhuang, X. Chen, Y. Yang, R. Y. Zhang, "Statistically optimal K-means
    clustering via nonnegative low-rank semidefinite programming", ICLR 2024.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> est = SDP(n_clusters=2).fit(L)
    >>> est.labels_.tolist(), est.solver_
    ([0, 0, 1, 1], 'scs')
    """

    #: The relaxation is exact for weighted atoms, but a numerical solver is not: an object of weight w and w
    #: copies of it would be two problems, which SCS solves to slightly different points, and a near-tie in the
    #: rounding can then fall either way. Both are solved as the same collapsed problem.
    #: A member that leaves an object unlabelled adds nothing to that object's row of S = sum_j Z_j Z_j^T.
    capabilities = Capabilities(distinct_rows=True, abstain=True)

    _parameter_constraints: dict = {
        "n_clusters": N_CLUSTERS,
        "solver": [StrOptions({"auto", "scs", "lowrank"})],
        "rounding": [StrOptions({"wta", "kmeans"})],
        "rank": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, 1, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "refine": REFINE,
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters="auto", *, solver="auto", rounding="wta", rank=None, tol=1e-6, max_iter=20_000,
                 refine=False, random_state=None):
        self.n_clusters = n_clusters
        self.solver = solver
        self.rounding = rounding
        self.rank = rank
        self.tol = tol
        self.max_iter = max_iter
        self.refine = refine
        self.random_state = random_state

    def _fit(self, ensemble):
        n = ensemble.n_objects
        # equal label rows are one object here: at most one cluster each (tr Z = K is infeasible for K > n), as
        # the Basic consensus gives at most as many clusters as distinct rows
        k = eigengap_n_clusters(ensemble) if self.n_clusters == "auto" else min(int(self.n_clusters), n)
        B, s = _problem_data(ensemble)
        if k == n:  # Z 1 = 1 and Z >= 0 bound every Z_uu by 1, so tr Z = n leaves only Z = I: nothing to solve
            return self._identity(B, n)
        solver = self.solver
        r = min(2 * k, n) if self.rank is None else self.rank  # a factor wider than n adds nothing
        if solver == "auto":
            wide = n <= AUTO_SCS_DENSE_OBJECTS and 2 * r >= n
            solver = "scs" if n <= AUTO_SCS_OBJECTS or wide else "lowrank"
        if solver == "scs" and n > SCS_MAX_OBJECTS:
            raise InputError(
                f"solver: 'scs' handles at most {SCS_MAX_OBJECTS} objects (atoms), got {n}; use solver='lowrank'"
            )
        if solver == "scs":
            factor, info = sdp_scs(B, s, k, eps=min(self.tol * 10, 1e-5))
            self.gap_ = info["gap"]
        else:
            U0 = _lowrank_start(ensemble, B, s, k, r, seed_from(self.random_state))
            factor, info = sdp_lowrank(B, s, k, rank=r, U0=U0, tol=self.tol, max_iter=self.max_iter)
            self.gap_ = float("nan")
        self.solver_ = solver
        self.objective_ = info["objective"]
        self.violation_ = info["violation"]
        self.n_iter_ = info["iterations"]
        E = _embedding(factor, s, k)
        labels = winner_takes_all(E, ensemble.weights, k)
        if self.rounding == "kmeans":
            labels, _ = weighted_kmeans(E, ensemble.weights, k, init_labels=[labels])
        self.rounded_objective_ = _partition_objective(B, labels, ensemble.weights)
        return labels

    def _identity(self, B, n):
        """Every object its own cluster, the relaxation's only feasible point when K is the number of objects."""
        self.solver_, self.n_iter_, self.gap_, self.violation_ = "identity", 0, 0.0, 0.0
        self.objective_ = self.rounded_objective_ = float(sp.csr_matrix(B).power(2).sum())  # tr(S I) = ||B||_F^2
        return np.arange(n)


def _lowrank_start(ensemble, B, s, k, r, seed):
    """A start for the low-rank solver: a partition, plus small positive extra columns.

    The partition is weighted k-means (maximin start) on the top-k spectral
    embedding of ``C``; ``U0[u, c] = sqrt(w_u / W_c)`` is then the exact
    factor of that partition's ``M``. The ``r - k`` further columns are
    ``|B Omega|`` (Omega random), scaled to 1% of the mass, so the solver can
    leave the partition for a fractional optimum. Every row depends only on
    the object's label row and weight, so an atom of weight w and w copies of
    it follow the same trajectory. (A fully random start can collapse whole
    clusters to zero rows, a stationary point of the factorised problem.)
    """
    _, P, _ = _top_singular_vectors(B, k)
    labels, _ = weighted_kmeans(P / s[:, None], ensemble.weights, k)
    W = np.bincount(labels, weights=ensemble.weights, minlength=k)
    U0 = np.zeros((len(s), max(r, k)))
    U0[np.arange(len(s)), labels] = s / np.sqrt(np.maximum(W[labels], 1e-300))
    if r > k:
        omega = np.random.default_rng(seed).random((B.shape[1], r - k))
        extra = np.asarray(B @ omega)
        U0[:, k:] = 0.01 * np.sqrt(k) * extra / max(np.linalg.norm(extra), 1e-300)
    return U0[:, :r]


def _partition_objective(B, labels, weights):
    """tr(S Z) of a partition: sum_c ||B_c^T sqrt(w_c)||^2 / W_c over its clusters."""
    s = np.sqrt(weights)
    k = int(labels.max()) + 1
    Zs = sp.csr_matrix((s, (labels, np.arange(len(labels)))), shape=(k, len(labels)))
    G = np.asarray((Zs @ B).toarray() if sp.issparse(B) else Zs @ B)
    W = np.bincount(labels, weights=weights, minlength=k)
    return float(np.sum(np.sum(G**2, axis=1) / np.maximum(W, 1e-300)))
