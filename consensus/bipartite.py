"""HBGF: spectral partition of the bipartite graph of objects and clusters."""

from __future__ import annotations

import numpy as np

from segensemble.consensus._base import Capabilities, ConsensusClusterer
from segensemble.consensus._incidence import scaled
from segensemble.consensus._kmeans import weighted_kmeans
from segensemble.consensus._registry import REGISTRY
from segensemble.abstentions import speaking_members
from segensemble.consensus.coassociation import _resolve_k, _top_singular_vectors, member_inits

__all__ = ["HBGF"]


@REGISTRY.register("hbgf")
class HBGF(ConsensusClusterer):
    """Hybrid bipartite graph formulation (Fern & Brodley 2004), spectral partition.

    Objects and the members' clusters are the two sides of a bipartite graph;
    an object is linked to each of its m clusters. The graph is partitioned
    spectrally as in Dhillon's co-clustering: the top-K singular vectors of
    ``D1^-1/2 A D2^-1/2`` embed objects and clusters together, rows are
    normalised (Ng, Jordan & Weiss) and clustered jointly with k-means
    (objects weighted by their size, clusters by their total size / m). Only
    the small (sum k_j)-square Gram matrix is decomposed: O(nnz(H) K).

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
    refine : bool or int, default False

    References
    ----------
    X. Z. Fern, C. E. Brodley, "Solving cluster ensemble problems by bipartite
    graph partitioning", ICML 2004; I. S. Dhillon, "Co-clustering documents and
    words using bipartite spectral graph partitioning", KDD 2001.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> HBGF(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    #: A member that leaves an object unlabelled has no edge to it (m counts the members that label something).
    capabilities = Capabilities(distinct_rows=True, abstain=True)

    def _fit(self, ensemble):
        k = _resolve_k(self, ensemble)
        H, w, m = ensemble.incidence, ensemble.weights, speaking_members(ensemble.n_clusters)
        d2 = np.asarray(H.T @ w).ravel()  # cluster degrees (pixel-level)
        # pixel-level normalised biadjacency: rows 1/sqrt(m), columns 1/sqrt(d2); atoms scaled by sqrt(w)
        An = scaled(H, rows=np.sqrt(w), columns=1.0 / np.sqrt(m * d2))
        _, U, V = _top_singular_vectors(An, k, ensemble.offsets if ensemble.abstains else None)
        d = An.shape[1]
        del An  # the (n, K) arrays below are scaled in place: at 10^6 objects each copy is 80 MB
        Z = np.empty((len(w) + d, U.shape[1]))
        Z[: len(w)] = U
        del U
        Zo = Z[: len(w)]
        Zo /= np.sqrt(w)[:, None]  # pixel-level left vectors
        Zo /= np.sqrt(m)
        Z[len(w) :] = V / np.sqrt(d2)[:, None]
        Z /= np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-300)
        weights = np.concatenate([w, d2 / m])
        # starts (as the other k-means methods: none above MEMBER_STARTS_ROWS distinct rows, then maximin alone):
        # a member's partition for the objects, each cluster node with its objects' majority label
        coo = H.tocoo()
        inits = []
        for z in member_inits(ensemble, k, None):
            # each cluster node's weighted votes, summed in entry order (np.add.at's order, without its slow path)
            votes = np.bincount(coo.col * k + z[coo.row], weights=w[coo.row], minlength=d * k).reshape(d, k)
            inits.append(np.concatenate([z, np.argmax(votes, axis=1)]))
        labels, self.inertia_ = weighted_kmeans(Z, weights, k, init_labels=inits)
        self.cluster_labels_ = labels[ensemble.n_objects :]
        return labels[: ensemble.n_objects]
