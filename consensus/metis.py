"""Strehl & Ghosh's graph-partitioning consensus functions: CSPA, HGPA, MCLA (METIS via pymetis)."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pymetis
import scipy.sparse as sp

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, FitResult, seed_from
from segensemble.consensus._registry import REGISTRY
from segensemble import ensemble as _ensemble
from segensemble import limits
from segensemble.consensus._memory import check_dense
from segensemble.consensus.coassociation import _gram, _resolve_k

__all__ = ["CSPA", "CSPA_COPIES_LIMIT", "CSPA_CORE_ROWS", "HGPA", "HGPA_CORE_ROWS", "HGPA_METIS_ROWS", "MCLA",
           "metis_partition"]

#: CSPA partitions one vertex per object copy up to this many copies (the graph has up to copies^2 edges:
#: 12 M and 1.6 s for 5 000 objects of the random perturbation model).
CSPA_COPIES_LIMIT = 5000
CSPA_CORE_ROWS = 2000  #: beyond its dense limits CSPA partitions the graph of this many heaviest rows

#: HGPA gives METIS the star expansion of every distinct label row up to this many rows; above it, of the
#: :data:`HGPA_CORE_ROWS` heaviest rows only (METIS on the whole star is far from linear: its hyperedge vertices
#: are hubs of ~n/K objects — 0.65 s at 72 733 rows, 12.7 s at 192 709, 53 s at 534 869 on one core).
HGPA_METIS_ROWS = 100_000
#: The rows METIS partitions above :data:`HGPA_METIS_ROWS`; every other row then takes the part most of its
#: hyperedges fall in (the move that cuts fewest of them).
HGPA_CORE_ROWS = 50_000


def metis_partition(adjacency, n_parts: int, *, vertex_weights=None, seed: int = 0) -> np.ndarray:
    """Partition a graph with METIS into ``n_parts`` balanced parts.

    Parameters
    ----------
    adjacency : sparse (n, n) symmetric matrix with non-negative weights
        Weights are scaled to integers (METIS takes integer weights): every
        positive weight becomes ``max(1, round(1000 w / max w))``.
    n_parts : int
    vertex_weights : (n,) array, optional
        Non-negative; rounded to integers.
    seed : int

    Returns
    -------
    (n,) int array of part ids.

    References
    ----------
    G. Karypis, V. Kumar, "A fast and high quality multilevel scheme for
    partitioning irregular graphs", SIAM J. Sci. Comput. 20(1), 1998.

    Examples
    --------
    >>> A = sp.csr_matrix(np.kron(np.eye(2), np.ones((3, 3))) - np.eye(6) + 0.01)
    >>> p = metis_partition(A, 2)
    >>> bool(len(set(p[:3])) == 1 and len(set(p[3:])) == 1 and p[0] != p[3])
    True
    """
    A = sp.csr_matrix(adjacency, dtype=np.float64)
    A.setdiag(0)
    A.eliminate_zeros()
    n = A.shape[0]
    if n_parts <= 1 or n <= 1:
        return np.zeros(n, dtype=np.int64)
    if A.nnz == 0:  # METIS needs edges; fall back to contiguous chunks of equal weight
        return np.minimum((np.arange(n) * n_parts) // n, n_parts - 1)
    A.sort_indices()
    return _part_graph(A.indptr, A.indices, _integer_weights(A.data), n_parts, vertex_weights, seed)


def _integer_weights(weights) -> np.ndarray:
    """METIS's integer edge weights: every positive weight ``w`` becomes ``max(1, round(1000 w / max w))``."""
    return np.maximum(1, np.round(1000 * weights / weights.max())).astype(np.int64)


def _part_graph(indptr, indices, edge_weights, n_parts, vertex_weights, seed) -> np.ndarray:
    vw = None
    if vertex_weights is not None:
        vw = np.maximum(0, np.round(np.asarray(vertex_weights, dtype=np.float64))).astype(np.int64)
    with _quiet_c_stdout():  # METIS prints "***Cannot bisect a graph with 0 vertices!" for parts it leaves empty
        result = pymetis.part_graph(  # arrays, not lists: no Python int per edge (2 GB at 10^7 edges)
            n_parts, pymetis.CSRAdjacency(indptr.astype(np.int64), indices.astype(np.int64)), eweights=edge_weights,
            vweights=vw, options=pymetis.Options(seed=int(seed)),
        )
    return np.asarray(result.vertex_part, dtype=np.int64)


_QUIET_LOCK = threading.Lock()
_QUIET = {"depth": 0, "saved": None}


@contextlib.contextmanager
def _quiet_c_stdout():
    """Send what C code writes to the process's standard output to /dev/null for the duration.

    File descriptor 1 belongs to the whole process: threads that partition at
    the same time share one redirection (the first to enter makes it, the last
    to leave restores the saved descriptor), so standard output is always
    given back.
    """
    import os
    import sys

    with _QUIET_LOCK:
        if _QUIET["depth"] == 0:
            try:
                sys.stdout.flush()
                saved = os.dup(1)
            except (OSError, ValueError, AttributeError):  # no file descriptor 1 (embedded interpreters)
                saved = None
            if saved is not None:
                with open(os.devnull, "wb") as null:
                    os.dup2(null.fileno(), 1)
            _QUIET["saved"] = saved
        _QUIET["depth"] += 1
    try:
        yield
    finally:
        with _QUIET_LOCK:
            _QUIET["depth"] -= 1
            if _QUIET["depth"] == 0 and _QUIET["saved"] is not None:
                os.dup2(_QUIET["saved"], 1)
                os.close(_QUIET["saved"])
                _QUIET["saved"] = None


class _MetisConsensus(ConsensusClusterer):
    #: Abstaining members: CSPA's co-association counts the members that label both objects of a pair; HGPA's
    #: and MCLA's hyperedges (clusters) simply do not contain the objects a member leaves unlabelled.
    capabilities = Capabilities(distinct_rows=True, abstain=True)
    _parameter_constraints: dict = {"n_clusters": N_CLUSTERS, "refine": REFINE, "random_state": ["random_state"]}

    def __init__(self, n_clusters="auto", *, refine=False, random_state=0):
        self.n_clusters = n_clusters
        self.refine = refine
        self.random_state = random_state

    def _k(self, ensemble):
        return _resolve_k(self, ensemble)

    def _seed(self):
        return seed_from(self.random_state)


@REGISTRY.register("cspa")
class CSPA(_MetisConsensus):
    """Cluster-based similarity partitioning (Strehl & Ghosh 2002).

    METIS partitions the similarity graph of the objects, edge weights being
    the co-association (fraction of members that put two objects together),
    into K balanced parts. As in the paper every object is a vertex: objects
    with identical label rows (or integer weights, counted as copies) are
    expanded back into one vertex per copy when there are at most
    :data:`CSPA_COPIES_LIMIT` copies, and each collapsed object takes the
    part most of its copies fall in. (Partitioning the collapsed objects as
    weighted vertices instead departs from the paper: METIS must then balance
    a few heavy vertices, and on the digits members of
    ``benchmarks/consensus_quality.py`` ARI fell from 0.756 to 0.223.) Above
    that many copies, or with fractional weights (image atoms weighted by
    pixel counts), the collapsed objects are the vertices, weighted by their
    weights.

    At scale (where we had to choose): the graph has n² edges, so beyond
    the dense limits (:data:`segensemble.ensemble.DENSE_OBJECT_LIMIT` rows, or
    5.6 n² doubles over 2 GiB: about 6 700 rows) METIS partitions the graph
    of the :data:`CSPA_CORE_ROWS` heaviest rows (ties: the first) as above,
    and every other row joins the part whose core rows it is most
    co-associated with in sum — METIS's refinement move without the
    balance — through the incidence matrix, ``H (H_coreᵀ W_core Z)``
    (agreeing members; ties: the lowest part); a row sharing no member
    cluster with the core is placed by balance, as in :class:`HGPA`. Random
    perturbation model (K = 10, 10 members, 30% noise): ARI 0.984 at 10⁴
    objects (whole graph: 0.998 at 5 000), 0.994 at 10⁵, 0.996 at 10⁶.

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
    refine : bool or int, default False
    random_state : None or int, default 0
        METIS seed.

    References
    ----------
    A. Strehl, J. Ghosh, "Cluster ensembles — a knowledge reuse framework for
    combining multiple partitions", JMLR 3, 2002.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> CSPA(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    def _fit(self, ensemble):
        n = ensemble.n_objects  # measured: 5.6 n^2 doubles at peak (the co-association, its edge list, METIS's copy)
        if not _dense_fits(n):
            return self._fit_core(ensemble)
        return self._partition(sp.csr_matrix(ensemble.coassociation()), ensemble.weights, self._k(ensemble))

    def _partition(self, X, w, k):
        """METIS on the similarity graph X of objects weighing ``w``: one vertex per copy when the weights are
        whole and at most :data:`CSPA_COPIES_LIMIT` copies (each object takes the part most of its copies are
        in), the weighted objects otherwise."""
        copies = np.round(w).astype(np.int64)
        if not np.array_equal(copies, w) or copies.sum() > CSPA_COPIES_LIMIT:
            return metis_partition(X, k, vertex_weights=w, seed=self._seed())
        owner = np.repeat(np.arange(len(w)), copies)  # one vertex per copy, as the paper's graph
        part = metis_partition(X[owner][:, owner], k, seed=self._seed())
        votes = np.zeros((len(w), k))
        np.add.at(votes, (owner, part), 1)
        return np.argmax(votes, axis=1)  # ties: the lowest part

    def _fit_core(self, ensemble):
        """METIS on the :data:`CSPA_CORE_ROWS` heaviest rows; the others join their most co-associated part."""
        H, w = ensemble.incidence.tocsr(), ensemble.weights
        k = self._k(ensemble)
        if k <= 1:
            return np.zeros(len(w), dtype=np.int64)
        core = np.sort(np.argsort(-w, kind="stable")[:CSPA_CORE_ROWS])
        check_dense(len(core), len(core), "CSPA's graph of its core rows", copies=6, pairwise=True)
        Hc = H[core]  # the core's co-association as a sparse product (no dense incidence: 1.1 GB at 70 000 labels)
        said = (ensemble.labels[core] >= 0).astype(np.float64)
        together, both = (Hc @ Hc.T).toarray(), said @ said.T  # members putting a pair together, labelling both
        part = self._partition(sp.csr_matrix(np.divide(together, both, out=np.zeros_like(both), where=both > 0)),
                               w[core], k)
        Z = sp.csr_matrix((w[core], (np.arange(len(core)), part)), shape=(len(core), k))
        labels = _majority_part(H, sp.csr_matrix(Hc.T @ Z), w, k)
        labels[core] = part
        return labels


def _dense_fits(n: int) -> bool:
    """Whether CSPA's dense graph of ``n`` objects is within the dense co-association limits."""
    return n <= _ensemble.DENSE_OBJECT_LIMIT and limits.dense_fits(n, n, copies=6)


@REGISTRY.register("hgpa")
class HGPA(_MetisConsensus):
    """Hypergraph partitioning consensus (Strehl & Ghosh 2002), on the star expansion.

    Every cluster of every member is a hyperedge over its objects; HGPA cuts
    the fewest hyperedges into K balanced parts. Strehl & Ghosh used hMETIS,
    which has no maintained Python wheel; here the hypergraph is replaced by
    its star expansion (each hyperedge becomes a vertex linked to its objects,
    carrying the average object weight per hyperedge), a standard graph
    surrogate, and partitioned with METIS.
    Objects take the part of their vertex. O(nnz(H)).

    At scale (where we had to choose): METIS on the star is far from linear
    in the number of objects (its hyperedge vertices are hubs of ~n/K
    objects: 0.65 s at 72 733 distinct label rows, 53 s at 534 869). Above
    :data:`HGPA_METIS_ROWS` distinct rows it partitions the star of the
    :data:`HGPA_CORE_ROWS` heaviest rows (ties: the first; the hyperedges
    that have one of them), and every other row joins the part that holds
    most of its hyperedges — where moving it cuts the fewest star edges,
    METIS's own refinement move without the balance; a row none of whose
    hyperedges has a heavy row is placed by balance, as METIS places a
    component of its own. On the random perturbation model (K = 10, 10
    members) this gave the whole star's ARI: 0.9194 vs 0.9197 at 2·10⁵
    objects and 50% noise, 0.9963 at 10⁶ and 2·10⁶ objects and 30% noise.

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
    refine : bool or int, default False
    random_state : None or int, default 0

    References
    ----------
    A. Strehl, J. Ghosh, JMLR 3, 2002; C. J. Alpert, A. B. Kahng, "Recent
    directions in netlist partitioning: a survey", Integration 19, 1995
    (star expansion).

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> HGPA(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    def _fit(self, ensemble):
        H, w = ensemble.incidence.tocsr(), ensemble.weights
        n, d = H.shape
        k = self._k(ensemble)
        if k <= 1:
            return np.zeros(n, dtype=np.int64)
        if n <= HGPA_METIS_ROWS:
            # every object has a label in some member (Ensemble refuses one that has none): the star has edges
            return self._partition(H, w, k)[:n]
        core = np.sort(np.argsort(-w, kind="stable")[:HGPA_CORE_ROWS])
        Hc = H[core]
        present = np.flatnonzero(np.bincount(Hc.indices, minlength=d))  # the hyperedges with an object in the core
        part = self._partition(Hc[:, present], w[core], k)
        hyperedge_part = np.full(d, -1, dtype=np.int64)
        hyperedge_part[present] = part[len(core):]
        labels = _majority_part(H, hyperedge_part, w, k)
        labels[core] = part[: len(core)]
        return labels

    def _partition(self, H, w, k):
        """METIS on the star expansion of H: objects, then hyperedges, each hyperedge vertex weighing the average
        object weight per hyperedge (with zero weight, METIS's balancing degenerates on large inputs: ARI 0.07
        instead of 0.996 at n = 3e4, m = 10, K = 10)."""
        vw = np.concatenate([w, np.full(H.shape[1], w.sum() / H.shape[1])])
        return _part_graph(*_star_graph(H, w), k, vw, self._seed())


def _majority_part(H, hyperedge_votes, w, k):
    """Every object's part: the one its hyperedges vote for most (ties: the lowest part). ``hyperedge_votes``:
    every hyperedge's part (-1: none), one vote each — the part holding most of an object's hyperedges, whose star
    edges it cuts fewest by moving there — or a sparse (hyperedges, k) matrix of the votes. An object with no vote
    is linked to nothing partitioned (as a separate component is to METIS) and is placed by balance alone: in
    object order, in runs that fill each part's shortfall from an even share of the weight (as
    :func:`metis_partition` cuts a graph without edges into contiguous chunks)."""
    if sp.issparse(hyperedge_votes):
        M = hyperedge_votes
    else:
        has = hyperedge_votes >= 0
        M = sp.csr_matrix((np.ones(int(has.sum())), (np.flatnonzero(has), hyperedge_votes[has])),
                          shape=(len(hyperedge_votes), k))
    votes = (H @ M).tocsr()  # sparse: at most one entry per hyperedge of a row
    counts = np.diff(votes.indptr)
    spoken = counts > 0
    labels = np.zeros(H.shape[0], dtype=np.int64)
    if votes.nnz:
        starts = votes.indptr[:-1][spoken]
        top = np.repeat(np.maximum.reduceat(votes.data, starts), counts[spoken])
        cols = np.where(votes.data == top, votes.indices, k)
        labels[spoken] = np.minimum.reduceat(cols, starts)
    silent = np.flatnonzero(~spoken)
    if len(silent):  # the parts' shortfalls from an even share, filled in part order by runs of silent objects
        load = np.bincount(labels[spoken], weights=w[spoken], minlength=k)
        ws = w[silent]
        share = (load.sum() + ws.sum()) / k
        short = np.maximum(share - load, 0.0)
        bounds = np.cumsum(short) * (ws.sum() / short.sum())
        labels[silent] = np.minimum(np.searchsorted(bounds, np.cumsum(ws) - ws / 2, side="right"), k - 1)
    return labels


def _star_graph(H, w):
    """The star expansion of the hypergraph of H as METIS reads it: objects 0..n-1 linked to hyperedges n..n+d-1,
    an edge weighing its object's weight (scaled as :func:`metis_partition` scales). The CSR arrays that
    ``metis_partition(sp.bmat([[None, W H], [(W H)^T, None]]))`` passes, built in integers without the float
    matrix and its copies (the peak at 10^6 objects 1.39 -> 1.16 GB)."""
    H = H.tocsr()
    n, d = H.shape
    Ht = H.T.tocsr()  # each hyperedge's objects in increasing order
    object_weight = _integer_weights(np.asarray(w, dtype=np.float64))
    indptr = np.concatenate([H.indptr, H.indptr[-1] + Ht.indptr[1:]]).astype(np.int64)
    indices = np.concatenate([H.indices.astype(np.int64) + n, Ht.indices.astype(np.int64)])
    edge_weights = np.concatenate([np.repeat(object_weight, np.diff(H.indptr)), object_weight[Ht.indices]])
    return indptr, indices, edge_weights


@REGISTRY.register("mcla")
class MCLA(_MetisConsensus):
    """Meta-clustering algorithm (Strehl & Ghosh 2002).

    The clusters of all members form a meta-graph weighted by their (object
    weighted) Jaccard similarity; METIS groups them into K meta-clusters; each
    object goes to the meta-cluster with which it is most associated (the mean
    of its indicator over the meta-cluster's clusters). Only the
    (sum k_j)-square cluster graph is formed: O(nnz(H) K + (sum k_j)^2).

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
    refine : bool or int, default False
    random_state : None or int, default 0

    Attributes
    ----------
    memberships_ : (n_objects, K)
        Association of every object with every meta-cluster, normalised.

    References
    ----------
    A. Strehl, J. Ghosh, JMLR 3, 2002.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> MCLA(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    capabilities = Capabilities(soft=True, distinct_rows=True, abstain=True)

    def _fit(self, ensemble):
        H = ensemble.incidence
        check_dense(H.shape[1], H.shape[1], "Jaccard similarity of the member clusters", copies=4)
        G = _gram(ensemble)  # H^T W H
        size = np.diag(G)
        union = size[:, None] + size[None, :] - G
        J = np.divide(G, union, out=np.zeros_like(G), where=union > 0)
        k = self._k(ensemble)
        meta = metis_partition(sp.csr_matrix(J), k, seed=self._seed())
        k = int(meta.max()) + 1
        M = sp.csr_matrix((np.ones(len(meta)), (np.arange(len(meta)), meta)), shape=(len(meta), k))
        counts = np.asarray(M.sum(axis=0)).ravel()
        assoc = np.asarray((H @ M).toarray()) / np.maximum(counts, 1)[None, :]
        memberships = assoc / np.maximum(assoc.sum(axis=1, keepdims=True), 1e-300)
        return FitResult(np.argmax(assoc, axis=1), {"memberships_": memberships})
