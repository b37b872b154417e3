"""Evidence accumulation clustering (EAC)."""

from __future__ import annotations

from segensemble.constraints import StrOptions

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer
from segensemble.consensus._memory import check_dense
from segensemble.consensus._linkage import LINKAGES, lifetime_n_clusters, weighted_linkage
from segensemble.graph.hierarchy import Hierarchy
from segensemble.consensus._registry import REGISTRY

__all__ = ["EAC"]


@REGISTRY.register("eac")
class EAC(ConsensusClusterer):
    """Evidence accumulation: hierarchical clustering of the co-association matrix.

    The co-association X (fraction of members that put two objects together)
    is turned into the distance 1 - X and clustered agglomeratively; the tree
    is cut at ``n_clusters`` clusters or, with ``'auto'``, at the number of
    clusters with the longest lifetime. Works on weighted objects (atoms)
    exactly; forms an n x n matrix, so n is limited (see
    :data:`segensemble.ensemble.DENSE_OBJECT_LIMIT`).

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
        Number of clusters K, or the lifetime criterion (K >= 2).
    linkage : {'average', 'single', 'complete'}, default 'average'
    refine : bool or int, default False
        Passes of local refinement (Zhou et al. 2023, Algorithm 3) afterwards.

    Attributes
    ----------
    labels_ : (n_objects,) int32
    n_clusters_ : int
    heights_ : (n_objects - 1,) float
        Merge heights of the dendrogram (sorted).

    References
    ----------
    A. L. N. Fred, A. K. Jain, "Combining multiple clusterings using evidence
    accumulation", IEEE TPAMI 27(6), 2005.

    Examples
    --------
    >>> L = np.array([[0, 0], [0, 0], [1, 1], [1, 2]])
    >>> EAC(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    #: Members that leave objects unlabelled: each pair's co-association counts the members that label both.
    capabilities = Capabilities(abstain=True)

    _parameter_constraints: dict = {
        "n_clusters": N_CLUSTERS,
        "linkage": [StrOptions(set(LINKAGES))],
        "refine": REFINE,
    }

    def __init__(self, n_clusters="auto", *, linkage="average", refine=False):
        self.n_clusters = n_clusters
        self.linkage = linkage
        self.refine = refine

    def _fit(self, ensemble):
        n = ensemble.n_objects
        check_dense(n, n, "EAC's distances (1 - co-association) and their linkage", copies=2.5,  # measured 2.1
                    pairwise=True)
        D = 1.0 - ensemble.coassociation()
        merges, heights = weighted_linkage(D, ensemble.weights, self.linkage)
        self.heights_ = heights
        k = lifetime_n_clusters(heights) if self.n_clusters == "auto" else int(self.n_clusters)
        return Hierarchy(n, merges, heights).cut(n_regions=min(k, n))
