"""Co-association consensus through the incidence matrix: Basic, Spectral, KCC.

Every method works on H = [Z_1 | ... | Z_m] and the object weights W, never on
the n x n co-association matrix X = H H^T / m, so it runs in O(n sum k_j) and
scales to whole images and beyond.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from scipy.linalg import eigh
from segensemble.constraints import Interval, StrOptions

from segensemble.consensus._base import N_CLUSTERS, REFINE, Capabilities, ConsensusClusterer, fill_docstring, seed_from
from segensemble.consensus._kmeans import weighted_kmeans
from segensemble.consensus._registry import REGISTRY
from segensemble.abstentions import speaking_members
from segensemble.consensus._memory import check_eigen
from segensemble.consensus._gram import _gram, _gram_of_rows
from segensemble.consensus._incidence import scaled
from segensemble.consensus._incomplete_kmeans import incomplete_lloyd, partial_member_starts

__all__ = ["Basic", "Spectral", "KCC", "eigengap_n_clusters", "basic_start", "MEMBER_STARTS_ROWS"]

_COMMON = {
    "n_clusters": N_CLUSTERS,
    "init": [StrOptions({"members", "random", "k-means++"})],
    "n_init": [Interval(Integral, 0, None, closed="left"), None],
    "refine": REFINE,
    "random_state": ["random_state"],
}


_KMEANS_PARAMETERS = """\
    init : {'members', 'random', 'k-means++'}, default 'members'
        ``'members'``: deterministic starts — members with K clusters (up to
        ``n_init``) and a maximin start; invariant to relabelling and to
        replacing weighted objects by copies. ``'random'``: ``n_init`` starts
        from K random objects (weight-proportional); ``'k-means++'``: ``n_init``
        greedy k-means++ seedings; the best run is kept.
    n_init : int, optional
        Starts: default 3 member starts (none above
        :data:`~segensemble.consensus.coassociation.MEMBER_STARTS_ROWS`
        distinct label rows: the maximin start alone), or 10 random starts.
    random_state : None or int
        Seeds the random starts.
"""


_with_kmeans_parameters = fill_docstring(kmeans_parameters=_KMEANS_PARAMETERS)


#: Above this many member clusters the leading eigenvalues of G are found by Lanczos iterations through H
#: (O(nnz(H)) per step) instead of a dense eigendecomposition of G.
DENSE_SPECTRUM_MAX = 2000


def _top_gram_eigenvalues(ensemble, count: int) -> np.ndarray:
    """The eigenvalues of G = H^T W H in descending order: all of them, or the leading ``count`` for large G."""
    H, w = ensemble.incidence, ensemble.weights
    d = H.shape[1]
    if d <= DENSE_SPECTRUM_MAX:
        return np.sort(np.linalg.eigvalsh(_gram(ensemble)))[::-1]
    from scipy.sparse.linalg import LinearOperator, eigsh

    op = LinearOperator((d, d), matvec=lambda v: H.T @ (w * (H @ np.ravel(v))), dtype=np.float64)
    lam = eigsh(op, k=min(count, d - 1), which="LA", v0=np.ones(d), tol=1e-10, return_eigenvectors=False)
    return np.sort(lam)[::-1]


def eigengap_n_clusters(ensemble, max_clusters: int = 20) -> int:
    """K at the largest gap of the co-association spectrum (K >= 2).

    The non-zero eigenvalues of the (object-weighted) co-association matrix are
    those of G / m with G = H^T W H.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> z = np.repeat([0, 1, 2], 5)
    >>> eigengap_n_clusters(Ensemble.from_labels(np.stack([z, z, z], axis=1)))
    3
    """
    lam = _top_gram_eigenvalues(ensemble, max_clusters + 2)
    top = min(max_clusters, len(lam) - 1, ensemble.n_objects - 1)
    if top < 2:
        return max(1, min(2, ensemble.n_objects))
    gaps = lam[1 : top + 1] - lam[2 : top + 2] if top + 2 <= len(lam) else lam[1:top] - lam[2 : top + 1]
    return int(np.argmax(gaps)) + 2


def _top_singular_vectors(A, k, blocks=None):
    """Top-k singular triplets of a sparse (n, d) matrix with small d, via its Gram matrix (``blocks``: see
    :func:`_gram_of_rows`).

    Returns (squared singular values, descending; left vectors (n, k); right vectors (d, k)).
    """
    check_eigen(A.shape[1], "spectral embedding of the member clusters")
    gram = _gram_of_rows(A, blocks)
    d = gram.shape[0]
    kk = min(k, d)
    lam, V = eigh(gram, subset_by_index=[d - kk, d - 1])
    lam, V = lam[::-1], V[:, ::-1]
    U = np.asarray(A @ V) / np.sqrt(np.maximum(lam, 1e-300))[None, :]
    return lam, U, V


#: Distinct label rows above which the k-means methods' default (``n_init=None``, ``init='members'``) is the
#: maximin start alone, without member starts: each member start is a full Lloyd run, slow to converge from a
#: member's partition on many rows (16-24 iterations at 10^6 objects against 5-6 at 10^5), and at that size the
#: runs end at the same optimum to within a few objects (see :func:`member_inits`).
MEMBER_STARTS_ROWS = 200_000


def member_inits(ensemble, k, n_init):
    """The member partitions a k-means starts from: the first ``n_init`` members with ``k`` clusters that label
    every object; ``n_init=None``: 3, or none above :data:`MEMBER_STARTS_ROWS` objects (distinct label rows).

    On the 10^6-object random perturbation ensemble of ``benchmarks/bench_consensus_scale.py`` (534 869 rows)
    the maximin start alone gives Basic's labels exactly, Spectral's with 11 objects elsewhere and KCC's with 93
    (objectives 6e-10 and 2e-9 higher, ARI against the truth 0.9963 / 0.9962 both), in a third to a half of
    the time.

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> ens = Ensemble.from_labels([[0, 1, 0], [1, 1, 0], [1, 0, 1]])
    >>> [z.tolist() for z in member_inits(ens, 2, None)]
    [[0, 1, 1], [0, 0, 1], [0, 0, 1]]
    """
    if n_init is None:
        n_init = 3 if ensemble.n_objects <= MEMBER_STARTS_ROWS else 0
    return [lab for lab, kj in zip(ensemble.member_labels, ensemble.n_clusters)
            if kj == k and lab.min() >= 0][:n_init]  # members with k clusters that label every object


def _kmeans(est, X, ensemble, k, G=None):
    """The estimator's k-means with its initialisation policy."""
    if est.init in ("random", "k-means++"):
        n_init = 10 if est.n_init is None else est.n_init
        seed = seed_from(est.random_state)
        return weighted_kmeans(X, ensemble.weights, k, G=G, n_random=max(n_init, 1),
                               rng=np.random.default_rng(seed), maximin=False, random_init=est.init)
    return weighted_kmeans(X, ensemble.weights, k, G=G, init_labels=member_inits(ensemble, k, est.n_init))


def _resolve_k(est, ensemble):
    return eigengap_n_clusters(ensemble) if est.n_clusters == "auto" else int(est.n_clusters)


class _KMeansConsensus(ConsensusClusterer):
    """Shared parameters of the k-means based methods (Basic, KCC).

    Objects with identical label rows are one weighted point (summed weights): the same k-means, exactly, on
    fewer points (about half as many at n = 10^6 under the random perturbation model). A member that leaves an
    object unlabelled has no indicator in its row of H: it pulls the object towards none of its clusters (Basic;
    KCC measures such an object over the members that label it).
    """

    capabilities = Capabilities(distinct_rows=True, abstain=True)
    _parameter_constraints: dict = dict(_COMMON)

    def __init__(self, n_clusters="auto", *, init="members", n_init=None, refine=False, random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.refine = refine
        self.random_state = random_state


@REGISTRY.register("basic")
@_with_kmeans_parameters
class Basic(_KMeansConsensus):
    """Basic label aggregation: k-means on the rows of the co-association matrix.

    Zhou, Dudeja & Amini's Algorithm 1. The rows of X live in n dimensions but
    ``||X_i - X_j||^2 = (H_i - H_j) G (H_i - H_j)^T / m^2`` with ``G = H^T W H``,
    so the same weighted k-means runs on the rows of H in the metric G, in
    O(nnz(H) K) per iteration — exactly the same problem, never forming X.
    Starts: members with K clusters (up to ``n_init``) and a maximin start.

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
        K, or the largest eigengap of the co-association spectrum.
{kmeans_parameters}    refine : bool or int, default False
        Passes of local refinement (Algorithm 3) after the k-means.

    References
    ----------
    Z. Zhou, G. Dudeja, A. A. Amini, "Statistical guarantees for consensus
    clustering", ICLR 2023, Algorithms 1 and 3.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> Basic(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    def _fit(self, ensemble):
        k = _resolve_k(self, ensemble)
        labels, self.inertia_ = _kmeans(self, ensemble.incidence, ensemble, k, G=_gram(ensemble))
        return labels


def basic_start(ensemble, n_clusters) -> np.ndarray:
    """The Basic consensus as a deterministic start (EM, NMF): its labels, with at most one cluster per object.

    Methods fitted on the distinct label rows may ask for more clusters than there are rows; Basic's k-means on
    the full ensemble would take no more than there are distinct rows either. Above :data:`MEMBER_STARTS_ROWS`
    distinct rows Basic runs from its maximin start alone, as everywhere (EM and NMF on the 10^6-object random
    perturbation ensemble of ``benchmarks/bench_consensus_scale.py`` end at the same labels from either start).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> basic_start(Ensemble.from_labels([[0, 1]]), 2).tolist()
    [0]
    """
    k = n_clusters if n_clusters == "auto" else min(int(n_clusters), ensemble.n_objects)
    return Basic(n_clusters=k).fit(ensemble).labels_


@REGISTRY.register("spectral")
@_with_kmeans_parameters
class Spectral(ConsensusClusterer):
    """Spectral label aggregation: k-means on the top-K eigenvectors of X.

    Zhou, Dudeja & Amini's Algorithm 2. The eigenvectors come from the small
    Gram matrix of ``A = W^1/2 H / sqrt(m)`` (``X = A A^T`` at pixel level), so
    the cost is O(nnz(H) K + (sum k_j)^3).

    ``variant='plain'`` is Algorithm 2 as printed: k-means on the rows of U
    (pixel-level eigenvector entries ``U_i / sqrt(w_i)``). ``variant='normalized'``
    (default) uses the normalised affinity ``D^-1/2 X D^-1/2`` (D = degrees)
    and unit-length rows (Ng, Jordan & Weiss); the paper leaves the scaling
    unstated, and on its unbalanced settings the plain variant falls far below
    the printed numbers while the normalised one does not (see
    ``benchmarks/reproduce_zhou2023.py``).

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
    variant : {'normalized', 'plain'}, default 'normalized'
{kmeans_parameters}    refine : bool or int, default False

    References
    ----------
    Z. Zhou, G. Dudeja, A. A. Amini, ICLR 2023, Algorithm 2; A. Ng, M. Jordan,
    Y. Weiss, "On spectral clustering: analysis and an algorithm", NIPS 2001.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> Spectral(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    #: A member that leaves an object unlabelled adds nothing to its affinities (m counts the members that speak).
    capabilities = Capabilities(distinct_rows=True, abstain=True)
    _parameter_constraints: dict = {**_COMMON, "variant": [StrOptions({"normalized", "plain"})]}

    def __init__(self, n_clusters="auto", *, variant="normalized", init="members", n_init=None, refine=False,
                 random_state=None):
        self.n_clusters = n_clusters
        self.variant = variant
        self.init = init
        self.n_init = n_init
        self.refine = refine
        self.random_state = random_state

    def _fit(self, ensemble):
        k = _resolve_k(self, ensemble)
        H, w, m = ensemble.incidence, ensemble.weights, speaking_members(ensemble.n_clusters)
        if self.variant == "normalized":
            deg = np.asarray(H @ (H.T @ w)).ravel() / m  # pixel-level degree of every object
            scale = w / deg
        else:
            scale = w
        A = scaled(H, rows=np.sqrt(scale / m))  # X (pixel level) = A A^T, atoms scaled
        lam, U, _ = _top_singular_vectors(A, k, ensemble.offsets if ensemble.abstains else None)
        U = U / np.sqrt(w)[:, None]  # entries of the pixel-level eigenvectors
        if self.variant == "normalized":
            U = U / np.maximum(np.linalg.norm(U, axis=1, keepdims=True), 1e-300)
        self.eigenvalues_ = lam
        labels, self.inertia_ = _kmeans(self, U, ensemble, k)
        return labels


@REGISTRY.register("kcc")
@_with_kmeans_parameters
class KCC(_KMeansConsensus):
    """K-means consensus clustering: k-means on the rows of H (Wu et al. 2015).

    The members' one-hot encodings are concatenated and clustered with
    weighted k-means (Euclidean), as the baseline KCC of Zhou et al. 2023.
    With members that abstain, Lloyd's iterations of KCC with incomplete
    basic partitions (Wu et al. 2015): an object's distance to a cluster sums
    over the members that label it, and a member's part of a centroid
    averages the cluster's objects it labels
    (:func:`segensemble.consensus._incomplete_kmeans.incomplete_lloyd`). They
    start from the ``n_init`` members with K clusters closest to the others
    (None: one; the objects a member leaves out are placed by the first
    assignment), the lowest cost kept; without such a member, or with
    ``init='random'`` or ``'k-means++'``, from the k-means on H.

    Parameters
    ----------
    n_clusters : int or 'auto', default 'auto'
{kmeans_parameters}    refine : bool or int, default False

    References
    ----------
    J. Wu, H. Liu, H. Xiong, J. Cao, J. Chen, "K-means-based consensus
    clustering: a unified view", IEEE TKDE 27(1), 2015.

    Examples
    --------
    >>> L = np.array([[0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    >>> KCC(n_clusters=2).fit(L).labels_.tolist()
    [0, 0, 1, 1]
    """

    def _fit(self, ensemble):
        k = _resolve_k(self, ensemble)
        if not ensemble.abstains:
            labels, self.inertia_ = _kmeans(self, ensemble.incidence, ensemble, k)
            return labels
        starts = partial_member_starts(ensemble, k, self.n_init) if self.init == "members" else []
        if not starts:  # no member with K clusters, or init='random' / 'k-means++': the k-means on H as the start
            starts = [_kmeans(self, ensemble.incidence, ensemble, k)[0]]
        labels, self.inertia_ = min((incomplete_lloyd(ensemble, z, k) for z in starts), key=lambda run: run[1])
        return labels
