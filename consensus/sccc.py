"""Stable Component Consensus Clustering (SCCC, Bekkerman et al.)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from segensemble.constraints import Interval, StrOptions

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, collapse_duplicate_rows
from segensemble.consensus._registry import REGISTRY
from segensemble.consensus.coassociation import eigengap_n_clusters
from segensemble.stability import normalized_mutual_information

__all__ = ["SCCC", "sccc_seeds", "hamming"]


def hamming(signatures, row) -> np.ndarray:
    """Members that label both and disagree, between every signature and ``row`` (``-1``: the member abstains).

    Examples
    --------
    >>> hamming(np.array([[0, 1, -1], [1, 1, 0]]), np.array([0, 0, 1])).tolist()
    [1, 3]
    """
    differ = signatures != row
    if signatures.min(initial=0) < 0 or row.min(initial=0) < 0:
        differ &= (signatures >= 0) & (row >= 0)
    return np.count_nonzero(differ, axis=-1)


def sccc_seeds(signatures, sizes, k: int, gap: int):
    """Seed components: walk them by decreasing size, keep those at Hamming distance >= gap from every seed.

    Parameters
    ----------
    signatures : (n_components, m) int array
        Label of every stable component in every member.
    sizes : (n_components,) array
        Component weights (ties: the earlier component first).
    k : int
        Seeds wanted.
    gap : int
        Seed gap g, 0..m.

    Returns
    -------
    list of int
        Seed components (at most k; fewer when the gap leaves too few).

    Examples
    --------
    >>> S = np.array([[0, 0], [0, 1], [1, 1]])
    >>> sccc_seeds(S, np.array([5, 4, 3]), 2, 2), sccc_seeds(S, np.array([5, 4, 3]), 2, 1)
    ([0, 2], [0, 1])
    """
    order = np.argsort(-np.asarray(sizes, dtype=np.float64), kind="stable")
    seeds = []
    for c in order:
        if all(hamming(signatures[c], signatures[s]) >= gap for s in seeds):
            seeds.append(int(c))
            if len(seeds) == k:
                break
    return seeds


@REGISTRY.register("sccc")
class SCCC(ConsensusClusterer):
    """Stable Component Consensus Clustering: seed with large, mutually distant stable components.

    Stable components are the sets of objects with identical labels in every
    member (the atoms). They are walked by decreasing size; one becomes a seed
    when its Hamming distance (number of members that disagree) to every seed
    so far is at least the seed gap g, until K seeds. Every other component
    joins the seed nearest in Hamming distance (ties: the larger seed).

    With members that abstain, the Hamming distance counts the members that
    label both components and disagree, and a gap is scored by the average
    NMI to the members over the objects each labels (members that label
    nothing left out).

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
        K, or the largest eigengap of the co-association spectrum.
    gap : int or 'auto', default 'auto'
        The seed gap g in 0..m. ``'auto'``: every g that seeds K clusters is
        tried (the paper averages over them) and the one whose consensus has
        the highest average NMI to the members (object-weighted, geometric
        normalisation) is kept; ties go to the smaller g. An integer g that
        seeds fewer than K clusters gives fewer clusters.
    refine : bool or int, default False

    Attributes
    ----------
    gap_ : int
        The seed gap used.
    seeds_ : list of int
        Seed objects (one per cluster; an object of each seed component).
    gap_scores_ : dict
        Average NMI to the members of every g tried (``'auto'``).

    References
    ----------
    R. Bekkerman, M. Scholz, K. Viswanathan, "Improving clustering stability
    with combinatorial MRFs", KDD 2009, Sec. 5.3.

    Examples
    --------
    >>> L = np.array([[0, 0, 0], [0, 0, 0], [0, 0, 1], [1, 1, 1], [1, 1, 1]])
    >>> est = SCCC(n_clusters=2).fit(L)
    >>> est.labels_.tolist(), est.gap_
    ([0, 0, 0, 1, 1], 0)
    """

    capabilities = Capabilities(abstain=True)
    _parameter_constraints: dict = {
        "n_clusters": N_CLUSTERS,
        "gap": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "refine": REFINE,
    }

    def __init__(self, n_clusters="auto", *, gap="auto", refine=False):
        self.n_clusters = n_clusters
        self.gap = gap
        self.refine = refine

    def _fit(self, ensemble):
        k = eigengap_n_clusters(ensemble) if self.n_clusters == "auto" else int(self.n_clusters)
        comps, inverse = collapse_duplicate_rows(ensemble)
        S, sizes = comps.labels, comps.weights
        m = ensemble.n_members

        def consensus(seeds):
            dist = np.stack([hamming(S, S[s]) for s in seeds], axis=1)
            return np.argmin(dist, axis=1)  # ties: the first (larger) seed

        if self.gap != "auto":
            g = min(int(self.gap), m)
            seeds = sccc_seeds(S, sizes, k, g)
            self.gap_scores_ = {}
        else:
            best, self.gap_scores_ = None, {}
            said = [S[:, j] >= 0 for j in range(m)]  # NMI to each member over the objects it labels
            speaking = [j for j in range(m) if said[j].any()]
            for g in range(m + 1):
                seeds = sccc_seeds(S, sizes, k, g)
                if len(seeds) < min(k, len(S)):
                    continue  # as the paper: a gap that cannot seed K clusters is disregarded
                labels = consensus(seeds)
                score = float(np.mean([normalized_mutual_information(labels[said[j]], S[said[j], j], sizes[said[j]])
                                       for j in speaking]))
                self.gap_scores_[g] = score
                if best is None or score > best[0] + 1e-12:
                    best = (score, g, seeds)
            if best is None:  # no gap seeds K clusters: g = 0 seeds the K largest components
                best = (None, 0, sccc_seeds(S, sizes, k, 0))
            _, g, seeds = best
        self.gap_ = g
        self.seeds_ = [int(np.flatnonzero(inverse == s)[0]) for s in seeds]
        return consensus(seeds)[inverse]
