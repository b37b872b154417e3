"""Weighted Lloyd k-means, exact for weighted objects, in a metric given through H.

Points are the rows of a sparse matrix H (n x D) under the metric
``||x||_G^2 = x G x^T`` (G = None: Euclidean), or rows of a dense matrix.
Cross products ``H (G M^T)`` cost O(nnz(H) K), so k-means on the rows of the
co-association matrix never forms it. Initialisations are deterministic and
invariant to relabelling members and to replacing an object of weight w by w
copies: the clusters of members that have K clusters, and a maximin
(farthest-point) start from the object nearest the weighted mean. The run with
the lowest weighted inertia wins (ties: the first).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from segensemble.consensus._metric_norms import unit_csr_row_norms

__all__ = ["weighted_kmeans"]


#: Rows per block when the metric's row norms or squared distances are computed (a block: _BLOCK x D floats).
_BLOCK = 16384


def _row_norms(X, G):
    """``x G x^T`` of every CSR row (G None: ``x x^T``). On canonical CSR (the incidence matrix) the same numbers as
    ``X.multiply(X @ G).sum(axis=1)``, bit for bit: SciPy's multiply by a dense matrix gives coordinates whose row
    sums add each entry's product in index order from zero, and so does ``bincount``, without the broadcasting."""
    if G is None:  # SciPy's sum of a CSR product's rows, kept (it does not add in index order)
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))  # the row of every stored entry
    return np.bincount(rows, weights=X.data * np.asarray(X @ G)[rows, X.indices], minlength=X.shape[0])


class _Space:
    def __init__(self, X, G=None):
        self.X = X
        self.sparse = sp.issparse(X)
        self.G = G
        #: Lloyd may skip the objects its bounds settle when their distances, computed alone, are those of the
        #: whole computation bit for bit: row-sliced CSR products are (each row is summed alone); BLAS products of
        #: a subset of dense rows are not (its kernels block the rows), so dense rows take the rows of the whole
        #: product and save the rest of the work (see distances_of).
        self.pruned = not self.sparse or X.format == "csr"
        #: The sum of the entries' magnitudes when every entry is an integer, else None (see exact_sums).
        self.integer_total = None
        self._weighted = None  # (weights, transposed weighted rows) of dense rows, for sums
        if self.sparse:  # in row blocks: X G is dense (n x D), never formed whole
            data = X.data
            if np.array_equal(data, np.round(data)):
                self.integer_total = float(np.abs(data).sum())
            X = X.tocsr()
            if G is not None and np.all(data == 1.0):  # an incidence matrix: the same sums, reading G's r x r only
                self.row_norms = unit_csr_row_norms(X.indptr, X.indices, np.ascontiguousarray(G, dtype=np.float64))
            else:
                self.row_norms = np.concatenate([_row_norms(X[i:i + _BLOCK], G)
                                                 for i in range(0, X.shape[0], _BLOCK)] or [np.zeros(0)])
        else:
            self.row_norms = (X**2).sum(axis=1) if G is None else np.einsum("ij,ij->i", X @ G, X)  # in the metric

    def cross(self, M):
        """(n, K) products <x_i, M_k> in the metric."""
        if self.G is not None:
            return np.asarray(self.X @ (self.G @ M.T))
        return np.asarray(self.X @ M.T)

    def centre_norms(self, M):
        return np.einsum("kd,kd->k", M @ self.G, M) if self.G is not None else (M**2).sum(axis=1)

    def means(self, labels, w, k):
        return _centres(self.sums(labels, w, k), labels, w, k)

    def sums(self, labels, w, k):
        """(K, D) weighted sums of the rows of every cluster."""
        if self.sparse:  # X^T (W Z) with a dense one-hot: a sparse-dense product, cheaper than sparse-sparse
            Zd = np.zeros((len(labels), k))
            Zd[np.arange(len(labels)), labels] = w
            return np.asarray(self.X.T @ Zd).T
        # dense rows: one bincount per coordinate of the weighted rows, kept transposed for the space's weights
        # (the products w_i x_id added in object order, as the sparse one-hot product adds them)
        if self._weighted is None or self._weighted[0] is not w:
            self._weighted = (w, np.multiply(self.X.T, w, out=np.empty(self.X.shape[::-1])))  # C order
        return np.stack([np.bincount(labels, weights=row, minlength=k) for row in self._weighted[1]], axis=1)

    def exact_sums(self, w) -> bool:
        """Whether every weighted sum of rows is an integer below 2^53: then sums in any order are equal."""
        if not self.sparse or len(w) == 0:
            return False
        return (self.integer_total is not None and bool(np.all(w == np.round(w)))
                and self.integer_total * float(np.abs(w).max()) < 2.0**53)

    def moved_sums(self, S, rows, old, new, w):
        """``S`` (K, D) after the objects ``rows`` moved from clusters ``old`` to ``new``: their rows' weighted
        contributions taken from one cluster and added to the other (in place)."""
        k = S.shape[0]
        Zd = np.zeros((len(rows), k))
        Zd[np.arange(len(rows)), new] = w[rows]
        Zd[np.arange(len(rows)), old] -= w[rows]
        S += np.asarray(self.X[rows].T @ Zd).T
        return S

    def distances(self, M):
        """(n, K) squared distances of every object to every centre."""
        return _squared_distances(self.centre_norms(M), self.cross(M), self.row_norms)

    def distances_of(self, M, rows):
        """:meth:`distances` of the objects ``rows`` only: the same expression on the same rows, bit for bit."""
        if not self.sparse:  # the whole BLAS product, then its rows (a product of the rows alone may round apart)
            return _squared_distances(self.centre_norms(M), self.cross(M)[rows], self.row_norms[rows])
        XG = self.X[rows] @ (self.G @ M.T) if self.G is not None else self.X[rows] @ M.T
        return _squared_distances(self.centre_norms(M), np.asarray(XG), self.row_norms[rows])

    def rows(self, idx):
        r = self.X[idx]
        return r.toarray() if self.sparse else np.asarray(r)


def _centres(sums, labels, w, k):
    """Cluster means from the clusters' weighted sums of rows (an empty cluster keeps its zero sum)."""
    return sums / np.maximum(np.bincount(labels, weights=w, minlength=k), 1e-300)[:, None]


def _squared_distances(centre_norms, cross, row_norms):
    """``centre_norms[None, :] - 2 * cross + row_norms[:, None]``, in place in ``cross`` (a product the caller
    owns): the same operations in the same order, without two (n, K) temporaries per Lloyd iteration."""
    if cross.dtype != np.float64 or not cross.flags.writeable:
        return centre_norms[None, :] - 2 * cross + row_norms[:, None]
    for start in range(0, len(cross), _BLOCK):  # the three steps block by block, while the block is in cache
        block = cross[start:start + _BLOCK]
        block *= 2
        np.subtract(centre_norms[None, :], block, out=block)
        block += row_norms[start:start + _BLOCK, None]
    return cross


def _lloyd(space, w, labels, k, max_iter):
    if space.pruned:
        return _lloyd_pruned(space, w, labels, k, max_iter)
    labels = labels.copy()
    every = np.arange(len(labels))
    for _ in range(max_iter):
        M = space.means(labels, w, k)
        new = _assign(space.distances(M), w, k, every)
        if np.array_equal(new, labels):
            return labels, _inertia(space, w, labels, k, every, M)  # M: the centres of labels
        labels = new
    return labels, _inertia(space, w, labels, k, every)


def _inertia(space, w, labels, k, every, centres=None):
    """Weighted sum of squared distances to the centres of ``labels`` (``centres``: those centres, if known)."""
    d = space.distances(space.means(labels, w, k) if centres is None else centres)
    return float(np.sum(w * np.maximum(d[every, labels], 0)))


def _assign(d, w, k, every):
    """Nearest centre of every object; an empty cluster re-seeded with the worst-fitting object."""
    new = np.argmin(d, axis=1)
    sizes = np.bincount(new, weights=w, minlength=k)
    for c in np.flatnonzero(sizes == 0):
        far = int(np.argmax(d[every, new]))
        new[far] = c
        d[far, :] = -np.inf
    return new


#: Relative rounding allowance of the bounds in :func:`_lloyd_pruned` (computed squared distances are sums of a
#: few hundred products: their rounding error is far below this share of the norms involved).
_ROUNDING = 1e-9


def _lloyd_pruned(space, w, labels, k, max_iter):
    """Lloyd's iterations with Hamerly's bounds (Hamerly, SDM 2010): the same labels, exactly.

    After the centres move by ``drift`` (in the metric), an object's distance to its own centre is at most its
    upper bound plus that centre's drift, and to any other at least its lower bound minus the largest drift. An
    object whose bounds keep its own centre nearer than any other by more than the rounding allowance cannot
    change label, so only the others' distances are computed — with the same expression on the same rows as the
    full computation, so they and their argmin are bit for bit what plain Lloyd computes. An iteration that
    empties a cluster is computed in full (the re-seed looks at every object). When every weighted sum of rows
    is an integer below 2^53 (0/1 incidence rows, integer copy counts: :meth:`_Space.exact_sums`), floating-point
    sums are exact in any order, so the clusters' sums are updated by the rows that changed cluster instead of
    being summed again over every object: the same centres, bit for bit.
    """
    labels = labels.copy()
    every = np.arange(len(labels))
    exact = space.exact_sums(w)
    S, S_labels = space.sums(labels, w, k), labels
    M = _centres(S, labels, w, k)
    d = space.distances(M)
    new = _assign(d, w, k, every)
    upper, lower = _bounds(d, new)
    for _ in range(1, max_iter):
        if np.array_equal(new, labels):
            return labels, _inertia(space, w, labels, k, every, M)  # M: the centres of labels, as recomputed
        labels = new
        moved = np.flatnonzero(labels != S_labels)
        if exact and len(moved) < len(labels) // 8:  # integer sums: moving the few changed rows is exact
            S = space.moved_sums(S, moved, S_labels[moved], labels[moved], w)
        else:
            S = space.sums(labels, w, k)
        S_labels = labels
        M_next = _centres(S, labels, w, k)
        drift = np.sqrt(np.maximum(space.centre_norms(M_next - M), 0.0))
        M = M_next
        upper += drift[labels]
        lower -= drift.max()
        scale = space.row_norms + space.centre_norms(M).max() + 1.0
        settled = (upper * (1 + _ROUNDING)) ** 2 + 2 * _ROUNDING * scale < (np.maximum(lower, 0) * (1 - _ROUNDING)) ** 2
        check = np.flatnonzero(~settled)
        new = labels.copy()
        if len(check):
            dc = space.distances_of(M, check)
            new[check] = np.argmin(dc, axis=1)
            if np.bincount(new, weights=w, minlength=k).min() == 0:  # a cluster emptied: as plain Lloyd, in full
                d = space.distances(M)
                new = _assign(d, w, k, every)
                upper, lower = _bounds(d, new)
                continue
            u, lo = _bounds(dc, new[check])
            upper[check], lower[check] = u, lo
    return new, _inertia(space, w, new, k, every)  # the iterations ran out: the last assignment stands, as in Lloyd


def _bounds(d, assigned):
    """(upper, lower): the distance to the assigned centre and to the nearest other one, from squared distances
    (``d`` is overwritten, see :func:`_own_and_second`)."""
    own, second = _own_and_second(d, assigned)
    return np.sqrt(np.maximum(own, 0.0)), np.sqrt(np.maximum(second, 0.0))


def _own_and_second(d, assigned):
    """(d at each row's assigned column, the smallest d of its other columns; inf with one column).

    ``d`` is overwritten (its assigned entries set to inf): every caller is done with it."""
    at = np.arange(len(assigned))
    own = d[at, assigned]
    d[at, assigned] = np.inf
    return own, d.min(axis=1)


def _maximin_init(space, w, k):
    n = len(w)
    mean = space.means(np.zeros(n, dtype=np.int64), w, 1)
    d0 = space.row_norms - 2 * space.cross(mean)[:, 0] + space.centre_norms(mean)[0]
    centres = [int(np.argmin(d0))]
    dmin = np.full(n, np.inf)
    for _ in range(1, k):
        c = space.rows([centres[-1]])
        dc = space.row_norms - 2 * space.cross(c)[:, 0] + space.centre_norms(c)[0]
        dmin = np.minimum(dmin, dc)
        centres.append(int(np.argmax(dmin)))
    C = space.rows(centres)
    d = space.centre_norms(C)[None, :] - 2 * space.cross(C)
    return np.argmin(d, axis=1)


def _random_init(space, w, k, gen):
    """K distinct objects drawn with probability proportional to weight, as starting centres."""
    idx = gen.choice(len(w), size=k, replace=False, p=w / w.sum())
    C = space.rows(np.sort(idx))
    return np.argmin(space.centre_norms(C)[None, :] - 2 * space.cross(C), axis=1)


def _kmeanspp_init(space, w, k, gen):
    """Greedy k-means++ seeding (Arthur & Vassilvitskii 2007) with object weights.

    Each new centre is drawn with probability proportional to ``w_i D(x_i)^2``;
    of ``2 + log k`` draws the one that lowers the weighted potential most is kept.
    """
    n = len(w)
    trials = 2 + int(np.log(k))

    def dist_to(idx):
        C = space.rows(idx)
        return np.maximum(space.row_norms[:, None] - 2 * space.cross(C) + space.centre_norms(C)[None, :], 0.0)

    centres = [int(gen.choice(n, p=w / w.sum()))]
    dmin = dist_to([centres[0]])[:, 0]
    for _ in range(1, k):
        pot = w * dmin
        if pot.sum() <= 0:  # every object sits on a centre: any further object will do
            rest = np.setdiff1d(np.arange(n), centres)
            cand = np.array([int(gen.choice(rest))])
        else:
            cand = gen.choice(n, size=trials, p=pot / pot.sum())
        D = np.minimum(dmin[:, None], dist_to(cand))
        best = int(np.argmin(w @ D))
        centres.append(int(cand[best]))
        dmin = D[:, best]
    C = space.rows(centres)
    return np.argmin(space.centre_norms(C)[None, :] - 2 * space.cross(C), axis=1)


def weighted_kmeans(X, weights, k, *, G=None, init_labels=(), n_random: int = 0, rng=None, max_iter: int = 100,
                    maximin: bool = True, random_init: str = "random"):
    """Weighted k-means from deterministic starts.

    Parameters
    ----------
    X : sparse (n, D) or dense (n, d) array
    weights : (n,) positive array
    k : int
    G : (D, D) array, optional
        Metric (positive semi-definite); None is Euclidean.
    init_labels : sequence of (n,) int arrays with values < k
        Starting partitions (e.g. members with k clusters).
    n_random : int, default 0
        Further random starts (see ``random_init``).
    rng : numpy Generator, optional
        For the random starts.
    max_iter : int
    maximin : bool, default True
        Add the deterministic maximin start.
    random_init : {'random', 'k-means++'}, default 'random'
        The random starts: K objects drawn proportionally to weight, or
        greedy k-means++ seeding.

    Returns
    -------
    labels : (n,) int array
    inertia : float
        Weighted sum of squared distances to the centres.

    Examples
    --------
    >>> X = np.array([[0.0], [0.1], [5.0], [5.2]])
    >>> labels, inertia = weighted_kmeans(X, np.ones(4), 2)
    >>> bool(labels[0] == labels[1] != labels[2] == labels[3]), round(inertia, 3)
    (True, 0.025)
    """
    w = np.asarray(weights, dtype=np.float64)
    space = _Space(X, G)
    k = min(k, len(w))
    starts = [np.asarray(z) for z in init_labels]
    if maximin or not starts and not n_random:
        starts.append(_maximin_init(space, w, k))
    if n_random:
        gen = rng if rng is not None else np.random.default_rng(0)
        draw = _kmeanspp_init if random_init == "k-means++" else _random_init
        starts += [draw(space, w, k, gen) for _ in range(n_random)]
    best = None
    for z in starts:
        labels, inertia = _lloyd(space, w, z, k, max_iter)
        if best is None or inertia < best[1] - 1e-9 * max(1.0, abs(best[1])):
            best = (labels, inertia)
    return best
