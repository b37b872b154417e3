"""Clustering Agreement Process (CAP, Bekkerman et al.): make an ensemble agree before the consensus.

The m members cluster the objects (the X side). A second modality — for
images, *visual words*: pixels quantised by their colour and texture
features — gets m clusterings of its own (the Y side), initialised from the
members. With ``p(x, y)`` the share of pixels of object x carrying word y,
CAP maximises ``sum_{i,j} I(X~_i; Y~_j)`` by iterated conditional modes: all
X~_i are improved at once (in parallel threads) with the Y~ side fixed, by
hill climbing that moves one object at a time to the cluster that most
increases its objective; then all Y~_j with the X~ side fixed; T rounds.
No step decreases the objective (Proposition 4.1).

One move is evaluated incrementally: with the row marginal shared by every
block, ``sum_j I(X~; Y~_j) = sum_c h(P_c) + const`` where P_c is cluster c's
row of the joint tables of all j side by side and
``h(r) = sum_d r_d log r_d - m R log R`` (R the row mass); moving object x
from a to b changes rows a and b only, and only in the columns where x has
mass, so trying every target costs O(k_x s_x), s_x those columns' number
(compiled: :mod:`segensemble.consensus._agreement_climb`).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from segensemble.constraints import Interval, ValidatedParams
from segensemble.estimator import Estimator

from segensemble.consensus._agreement_climb import climb_sweep, xlogx
from segensemble.consensus._base import seed_from
from segensemble.consensus._memory import check_dense
from segensemble.ensemble import Ensemble
from segensemble.errors import InputError
from segensemble.threads import thread_map
from segensemble.validation import check_image
from segensemble.features import pixel_features

__all__ = ["CAP", "agreement_objective", "visual_words"]


def _xlogx(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)


def _climb(labels, k, Q, n_blocks, max_sweeps, order_seed, prune=True):
    """Hill climbing of one clustering against fixed clusterings of the other side (see module docstring).

    ``Q`` (dense or sparse) holds every object's mass on the other side's clusters. Each sweep visits the objects
    in a random order (seeded by ``order_seed``) and moves each to the cluster of largest gain, in compiled code
    (:func:`~segensemble.consensus._agreement_climb.climb_sweep`); sweeps repeat until one moves nothing or
    ``max_sweeps`` are done; ``prune=False`` evaluates every target (the same moves, slower). Returns (labels,
    number of moves).
    """
    labels = np.asarray(labels, dtype=np.int64).copy()
    rows = _mass_rows(Q)
    n = len(labels)  # P^T: Q's rows summed per cluster in object order, as a dense np.add.at would (the same sums)
    P = (sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n)) @ rows).toarray()
    R = P.sum(axis=1) / n_blocks
    PT = np.ascontiguousarray(P.T)
    del P
    FPT, FR = xlogx(PT.ravel()).reshape(PT.shape), xlogx(R)
    count = np.bincount(labels, minlength=k).astype(np.int64)
    indptr, indices = rows.indptr.astype(np.int64), rows.indices.astype(np.int64)
    data = np.ascontiguousarray(rows.data, dtype=np.float64)
    fdata = xlogx(data)
    order_rng = np.random.default_rng(order_seed)
    moves = 0
    for _ in range(max_sweeps):
        moved = climb_sweep(labels, count, PT, R, FPT, FR, order_rng.permutation(len(labels)).astype(np.int64),
                            indptr, indices, data, fdata, int(n_blocks), prune)
        moves += moved
        if not moved:
            break
    return labels, moves


def _mass_rows(Q):
    """Q as CSR without explicit zeros, each row's columns in increasing order (the sweep's summation order)."""
    rows = sp.csr_matrix(Q, dtype=np.float64, copy=True)
    rows.sum_duplicates()
    rows.eliminate_zeros()
    rows.sort_indices()
    return rows


def _onehot_blocks(clusterings):
    """Sparse [Z_1 | ... | Z_m] of clusterings (lists of label arrays)."""
    blocks = [sp.csr_matrix((np.ones(len(z)), (np.arange(len(z)), z)), shape=(len(z), int(z.max()) + 1))
              for z in clusterings]
    return sp.hstack(blocks).tocsr()


def agreement_objective(joint, x_clusterings, y_clusterings) -> float:
    """``sum_{i,j} I(X~_i; Y~_j)`` for a joint distribution ``p(x, y)`` (n_x, n_y).

    Examples
    --------
    >>> p = np.eye(2) / 2
    >>> round(agreement_objective(p, [np.array([0, 1])], [np.array([0, 1])]), 4)  # log 2
    0.6931
    """
    joint = sp.csr_matrix(joint)
    Zys = [sp.csr_matrix((np.ones(len(zy)), (np.arange(len(zy)), zy)), shape=(len(zy), int(zy.max()) + 1))
           for zy in y_clusterings]
    total = 0.0
    for zx in x_clusterings:
        Zx = sp.csr_matrix((np.ones(len(zx)), (zx, np.arange(len(zx)))), shape=(int(zx.max()) + 1, len(zx)))
        cluster_words = Zx @ joint  # once per X~ clustering, then (Zx @ joint) @ Zy for each Y~
        for Zy in Zys:
            T = np.asarray((cluster_words @ Zy).todense())
            total += float(_xlogx(T).sum() - _xlogx(T.sum(axis=1)).sum() - _xlogx(T.sum(axis=0)).sum())
    return total


def visual_words(ensemble, image=None, n_words: int = 32, *, random_state=None):
    """Visual words and the joint distribution p(object, word).

    With an image (and the ensemble's pixel index): every pixel's
    standardised colour and texture features
    (:func:`segensemble.features.pixel_features`) are quantised by k-means
    into ``n_words`` words (fitted on at most 20 000 sampled pixels), and
    ``p(x, y)`` is the share of all pixels lying in object x with word y.
    Without an image, the objects' own features are quantised (each object is
    one word, weighted by its weight).

    Returns
    -------
    joint : (n_objects, n_words) sparse array, summing to 1
    words : (H, W) int array, or (n_objects,) without an image

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> img = np.zeros((6, 6, 3)); img[:, 3:] = 1
    >>> seg = np.repeat([[0, 0, 0, 1, 1, 1]], 6, axis=0)
    >>> joint, words = visual_words(Ensemble.from_segmentations([seg]), img, 2, random_state=0)
    >>> joint.shape, round(float(joint.sum()), 6), words.shape
    ((2, 2), 1.0, (6, 6))
    """
    from sklearn.cluster import KMeans

    gen = np.random.default_rng(seed_from(random_state))
    if image is not None:
        if ensemble.index is None:
            raise InputError("image: the ensemble has no pixel index (build it with Ensemble.from_segmentations)")
        img = check_image(image)
        if img.shape[:2] != ensemble.index.shape:
            raise InputError(f"image: expected shape {ensemble.index.shape}, got {img.shape[:2]}")
        F = pixel_features(img)
        F = F.reshape(-1, F.shape[2])
        sample = F[gen.choice(len(F), size=min(20_000, len(F)), replace=False)]
        k = min(int(n_words), _distinct_rows(sample, F, n_words))
        words = KMeans(k, n_init=1, random_state=int(gen.integers(1 << 31))).fit(sample).predict(F)
        obj = ensemble.index.ravel()
        joint = sp.csr_matrix((np.ones(len(obj)), (obj, words)), shape=(ensemble.n_objects, k)) / len(obj)
        return joint, words.reshape(ensemble.index.shape)
    if ensemble.features is None:
        raise InputError("image: CAP needs a second modality: an image, or an Ensemble with object features")
    F = ensemble.features
    k = min(int(n_words), len(np.unique(F, axis=0)))
    words = KMeans(k, n_init=1, random_state=int(gen.integers(1 << 31))).fit(
        F, sample_weight=ensemble.weights).predict(F)
    w = ensemble.weights / ensemble.weights.sum()
    return sp.csr_matrix((w, (np.arange(len(w)), words)), shape=(len(w), k)), words


def _distinct_rows(sample, F, enough: int) -> int:
    """The number of distinct rows of F, or of its ``sample`` when that already has ``enough`` (a sort of the
    sample instead of every pixel's features)."""
    seen = len(np.unique(sample, axis=0))
    return seen if seen >= enough else len(np.unique(F, axis=0))


class CAP(ValidatedParams, Estimator):
    """Clustering Agreement Process: an ensemble of the same size whose members agree more.

    Parameters
    ----------
    n_words : int, default 32
        Visual words of the second modality (:func:`visual_words`).
    n_rounds : int, default 4
        ICM rounds T (each: all X~ in parallel, then all Y~); the paper uses 4.
    max_sweeps : int, default 10
        Hill-climbing passes over the objects per clustering and step.
    n_jobs : int, default 1
        Threads for the parallel step, one clustering each (the result does not depend on it).
    random_state : None or int
        Seeds the visual words and the order objects are visited in.

    Attributes
    ----------
    ensemble_ : Ensemble
        The agreed ensemble (same objects, weights and pixel index).
    objective_history_ : list of float
        ``sum_{i,j} I(X~_i; Y~_j)`` at the start and after every half-round.
    word_clusterings_ : list of arrays
        The Y~ side after the last round.
    words_ : array
        Visual word of every pixel (or object).
    n_moves_ : int

    References
    ----------
    R. Bekkerman, M. Scholz, K. Viswanathan, "Improving clustering stability
    with combinatorial MRFs", KDD 2009 (CAP, Proposition 4.1).

    Examples
    --------
    >>> from segensemble import Ensemble
    >>> img = np.zeros((8, 8, 3)); img[:, 4:] = 1
    >>> a = np.repeat([[0, 0, 0, 0, 1, 1, 1, 1]], 8, axis=0)
    >>> b = np.repeat([[0, 0, 0, 1, 1, 1, 1, 1]], 8, axis=0)
    >>> cap = CAP(n_words=2, random_state=0).fit(Ensemble.from_segmentations([a, b]), image=img)
    >>> cap.objective_history_[-1] >= cap.objective_history_[0]
    True
    """

    _parameter_constraints: dict = {
        "n_words": [Interval(Integral, 2, None, closed="left")],
        "n_rounds": [Interval(Integral, 0, None, closed="left")],
        "max_sweeps": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, n_words=32, n_rounds=4, max_sweeps=10, n_jobs=1, random_state=None):
        self.n_words = n_words
        self.n_rounds = n_rounds
        self.max_sweeps = max_sweeps
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, ensemble, image=None):
        """Run the agreement process on an Ensemble (with an image for visual words, or object features)."""
        try:
            self._validate_params()
        except (ValueError, TypeError) as exc:
            raise InputError(str(exc).replace("\n", " ")) from exc
        if not isinstance(ensemble, Ensemble):
            raise InputError(f"ensemble: expected an Ensemble, got {type(ensemble).__name__}")
        seed = seed_from(self.random_state)
        xs = [ensemble.labels[:, i].astype(np.int64) for i in range(ensemble.n_members)]
        kx = [int(z.max()) + 1 for z in xs]
        _check_tables(kx, self.n_jobs)
        joint, self.words_ = visual_words(ensemble, image, self.n_words, random_state=seed)
        joint = sp.csr_matrix(joint)
        # the Y side starts from the members: every word joins the member cluster it co-occurs with most
        jt = joint.T.tocsr()
        ys = [np.asarray((jt @ _onehot_blocks([z])).todense()).argmax(axis=1).astype(np.int64) for z in xs]
        ky = list(kx)
        history = [agreement_objective(joint, xs, ys)]
        moves = 0
        for t in range(self.n_rounds):
            for side in ("x", "y"):
                fixed, moving, ks = (ys, xs, kx) if side == "x" else (xs, ys, ky)
                base = joint if side == "x" else jt
                Q = _mass_rows(base @ _onehot_blocks(fixed))  # sparse: an object meets few clusters
                tasks = [(z, k, Q, len(fixed), self.max_sweeps, [seed, t, int(side == "y"), i])
                         for i, (z, k) in enumerate(zip(moving, ks))]
                results = thread_map(_climb_task, tasks, self.n_jobs, name="agreement")  # the sweeps free the GIL
                new = [r[0] for r in results]
                moves += sum(r[1] for r in results)
                if side == "x":
                    xs = new
                else:
                    ys = new
                history.append(agreement_objective(joint, xs, ys))
        self.objective_history_ = history
        self.word_clusterings_ = ys
        self.n_moves_ = moves
        self.ensemble_ = ensemble.copy_with(labels=np.stack(xs, axis=1), memberships=None)
        return self

    def fit_transform(self, ensemble, image=None):
        """Run the agreement process and return the agreed Ensemble."""
        return self.fit(ensemble, image).ensemble_


def _climb_task(args):
    return _climb(*args)


def _check_tables(clusters: list, n_jobs: int) -> None:
    """Refuse, before anything is allocated, the dense tables of :meth:`CAP.fit` above the memory limit: each
    climbing clustering's cluster table (its clusters x the other side's clusters in all: the table, its transpose
    and their f values, one set per thread) and a pair of clusterings' joint table. The objects' masses on the
    other side's clusters are sparse (an object meets one cluster per clustering, for each of its words).

    Examples
    --------
    >>> _check_tables([300] * 8, 2)
    >>> _check_tables([9000] * 7, 2)
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: agreement (CAP), a clustering's cluster table: a dense 9,000 x 63,000 matrix \
needs about 25.3 GiB, ...
    """
    advice = ("give it coarser members (a picture at a working scale: --working-pixels, as the default recipe "
              "sets it), or fuse without the agreement step")
    total, largest = sum(clusters), max(clusters)
    check_dense(largest, total, "agreement (CAP), a clustering's cluster table",
                copies=3 * min(n_jobs, len(clusters)), advice=advice)
    check_dense(largest, largest, "agreement (CAP), the joint table of two clusterings", advice=advice)
