"""The optimisation steps of projective clustering ensembles (Gullo, Domeniconi, Tagarelli): Tanimoto
distances between projective clusters, the meta-clustering objective and its local search (E-CB-PCE), and
the closed-form projective consensus. :mod:`segensemble.consensus.pce` builds the estimators on them.
"""

from __future__ import annotations

import numpy as np
from segensemble.consensus._memory import check_dense

__all__ = ["tanimoto_distances", "metacluster_objective", "ecbpce_metaclusters", "projective_consensus"]


def tanimoto_distances(gammas, deltas, weights) -> np.ndarray:
    """Tanimoto distances between the projective matrices of all clusters (Proposition 4).

    ``T(C, C') = 1 - p / (q(C) + q(C') - p)`` with
    ``p = (Gamma_C W Gamma_C')(Delta_C . Delta_C')`` and ``q(C) = p(C, C)``:
    the Tanimoto distance of ``X_C = Gamma_C Delta_C^T`` with object weights,
    without forming the n x |F| matrices.

    Parameters
    ----------
    gammas : list of (n, k_j) arrays
    deltas : list of (k_j, F) arrays
    weights : (n,) array

    Returns
    -------
    (N_c, N_c) array over all clusters, solution by solution

    Examples
    --------
    >>> g = np.eye(2)[[0, 0, 1]]
    >>> tanimoto_distances([g, g], [np.eye(2), np.eye(2)], np.ones(3)).round(3).tolist()[0]
    [0.0, 1.0, 0.0, 1.0]
    """
    total = sum(g.shape[1] for g in gammas)
    check_dense(total, total, "Tanimoto distances between all member clusters", copies=3)
    G = np.concatenate(gammas, axis=1)
    D = np.concatenate(deltas, axis=0)
    P = (G.T @ (G * weights[:, None])) * (D @ D.T)
    q = np.diag(P)
    denom = q[:, None] + q[None, :] - P
    with np.errstate(divide="ignore", invalid="ignore"):
        T = np.where(denom > 0, 1.0 - P / np.where(denom > 0, denom, 1.0), 0.0)
    np.fill_diagonal(T, 0.0)
    return np.clip(T, 0.0, 1.0)


def metacluster_objective(T, metaclusters) -> float:
    """V: the sum of the Tanimoto distances of all pairs inside each metacluster.

    Examples
    --------
    >>> T = np.array([[0.0, 0.2, 0.9], [0.2, 0.0, 0.8], [0.9, 0.8, 0.0]])
    >>> metacluster_objective(T, [[0, 1], [2]])
    0.2
    """
    return float(sum(T[np.ix_(m, m)].sum() / 2 for m in metaclusters))


def _feasible_start(T, solution, k):
    """Metaclusters satisfying both coverage constraints: seeds from the largest solution, Hungarian for the rest."""
    from scipy.optimize import linear_sum_assignment  # SciPy's optimizers: 0.15 s to import

    sizes = np.bincount(solution)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    seed = int(np.argmax(sizes))
    meta = [[int(first[seed] + (i % sizes[seed]))] for i in range(k)]
    for extra in range(k, sizes[seed]):  # a seed solution with more than K clusters: the rest to the nearest
        c = int(first[seed] + extra)
        meta[int(np.argmin([T[c, m[0]] for m in meta]))].append(c)
    for s in range(len(sizes)):
        if s == seed:
            continue
        members = first[s] + np.arange(sizes[s])
        cost = np.array([[T[c, m].mean() for m in meta] for c in members])  # clusters x metaclusters
        rows, cols = linear_sum_assignment(cost)
        placed = set()
        for r, c in zip(rows, cols):
            meta[c].append(int(members[r]))
            placed.add(r)
        filled = set(cols.tolist())
        for r in range(sizes[s]):  # clusters left over (more than K): their nearest metacluster
            if r not in placed:
                meta[int(np.argmin(cost[r]))].append(int(members[r]))
        for c in range(k):  # metaclusters left empty (fewer than K): lend the nearest cluster
            if c not in filled:
                meta[c].append(int(members[int(np.argmin(cost[:, c]))]))
    return [sorted(m) for m in meta]


def ecbpce_metaclusters(T, solution, k, *, max_iter: int = 10_000):
    """E-CB-PCE metaclusters: local search on V under both coverage constraints.

    Every metacluster keeps at least one cluster of every solution and every
    cluster stays in some metacluster (a solution with fewer than K clusters
    lends clusters to several). A move takes a cluster from its metacluster to
    another; when it is the only cluster of its solution there, it is swapped
    with the target's cluster of the same solution that gives the smallest V.
    The best improving move is taken until none improves V (a local minimum).

    Parameters
    ----------
    T : (N_c, N_c) array
        Tanimoto distances.
    solution : (N_c,) int array
        Solution of every cluster (clusters of a solution are contiguous).
    k : int
    max_iter : int

    Returns
    -------
    metaclusters : list of K sorted lists of cluster indices
    history : list of float
        V after the start and after every move (never increasing).

    Examples
    --------
    >>> T = np.array([[0, 1, .1, 1], [1, 0, 1, .1], [.1, 1, 0, 1], [1, .1, 1, 0]])
    >>> ecbpce_metaclusters(T, np.array([0, 0, 1, 1]), 2)[0]
    [[0, 2], [1, 3]]
    """
    solution = np.asarray(solution)
    meta = _feasible_start(T, solution, k)
    history = [metacluster_objective(T, meta)]
    for _ in range(max_iter):
        move = _best_move(T, solution, meta)
        if move is None:
            break
        s_idx, t_idx, a, b, gain = move
        meta[s_idx].remove(a)
        meta[t_idx].append(a)
        if b is not None:
            meta[t_idx].remove(b)
            meta[s_idx].append(b)
        meta = [sorted(m) for m in meta]
        history.append(history[-1] + gain)  # V changes by the move's gain
    return meta, history


def _best_move(T, solution, meta):
    """The improving move (or swap) of smallest V change, first in (source, cluster, target, partner) order, as
    (source, target, cluster, partner or None, change of V); None when none lowers V by more than 1e-12.

    Gains come from ``S = T Z`` (S[c, t]: summed distance of cluster c to metacluster t): moving a from s to t
    changes V by ``S[a, t] - S[a, s]``; swapping it with b (same solution) by ``S[a, t] - T[a, b] - S[a, s] +
    S[b, s] - T[b, a] - S[b, t]``, all candidates at once.
    """
    n, k = len(solution), len(meta)
    Z = np.zeros((n, k), dtype=bool)
    for t, m in enumerate(meta):
        Z[m, t] = True
    S = T @ Z.astype(np.float64)
    n_sol = int(solution.max()) + 1
    counts = np.zeros((k, n_sol), dtype=np.int64)  # clusters of every solution in every metacluster
    for t, m in enumerate(meta):
        np.add.at(counts[t], solution[m], 1)
    src_t, src_a = np.nonzero(Z.T)  # every (metacluster, cluster in it), in (source, cluster) order
    alone = counts[src_t, solution[src_a]] == 1
    cands = []  # (gain, s, a, t, b) arrays
    s1, a1 = src_t[~alone], src_a[~alone]
    if len(a1):
        gain = S[a1] - S[a1, s1][:, None]  # (P, K)
        ok = ~Z[a1] & (np.arange(k)[None, :] != s1[:, None])
        p, t = np.nonzero(ok)
        cands.append((gain[p, t], s1[p], a1[p], t, np.full(len(p), -1)))
    s2, a2 = src_t[alone], src_a[alone]
    for g in np.unique(solution[a2]) if len(a2) else []:
        sel = solution[a2] == g
        ss, aa = s2[sel], a2[sel]
        bb = np.flatnonzero(solution == g)
        qi, tj = np.nonzero(Z[bb])  # every partner b (same solution) and the metacluster t holding it
        b_all = bb[qi]
        # (alone pairs, partner memberships): a moves to t, b moves from t to s
        ok = (~Z[aa][:, tj] & ~Z[b_all][:, ss].T & (tj[None, :] != ss[:, None]))
        p, e = np.nonzero(ok)
        a, b, s_, t = aa[p], b_all[e], ss[p], tj[e]
        gain = S[a, t] - T[a, b] - S[a, s_] + S[b, s_] - T[b, a] - S[b, t]
        cands.append((gain, s_, a, t, b))
    if not cands:
        return None
    gain, s_, a, t, b = (np.concatenate(x) for x in zip(*cands))
    improving = gain < -1e-12
    if not improving.any():
        return None
    gain, s_, a, t, b = gain[improving], s_[improving], a[improving], t[improving], b[improving]
    best = np.flatnonzero(gain == gain.min())
    first = best[np.lexsort((b[best], t[best], a[best], s_[best]))[0]]
    return int(s_[first]), int(t[first]), int(a[first]), None if b[first] < 0 else int(b[first]), float(gain[first])


def _closed_form(cost, power):
    """argmin of sum_M x_M^power cost_M s.t. sum_M x_M = 1, x >= 0 (Theorems 2 and 3), along axis 0."""
    zero = cost <= 1e-12
    with np.errstate(divide="ignore"):
        inv = np.where(zero, 0.0, cost ** (-1.0 / (power - 1.0)))
    out = inv / np.maximum(inv.sum(axis=0, keepdims=True), 1e-300)
    anyzero = zero.any(axis=0)
    if anyzero.any():  # a zero cost takes all the mass (shared among the zeros)
        out[:, anyzero] = zero[:, anyzero] / zero[:, anyzero].sum(axis=0, keepdims=True)
    return out


def projective_consensus(metaclusters, gamma_all, delta_all, *, alpha: float = 2.0, beta: float = 2.0):
    """Consensus Gamma* and Delta* of metaclusters (Theorems 2 and 3).

    ``A_{M,o} = mean_{C in M} (1 - Gamma_{C,o})``,
    ``Gamma*_{M,o} = [sum_{M'} (A_{M,o} / A_{M',o})^{1/(alpha-1)}]^{-1}``;
    ``B_{M,f} = mean_{C in M} (1 - Delta_{C,f})``, Delta* likewise over f with beta.

    Parameters
    ----------
    metaclusters : list of lists of cluster indices
    gamma_all : (n, N_c) array
    delta_all : (N_c, F) array
    alpha, beta : float > 1

    Returns
    -------
    gamma : (n, K) array, rows summing to 1
    delta : (K, F) array, rows summing to 1

    Examples
    --------
    >>> g, d = projective_consensus([[0], [1]], np.eye(2)[[0, 0, 1]], np.eye(2))
    >>> g.tolist(), d.tolist()
    ([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    """
    A = np.stack([1.0 - gamma_all[:, m].mean(axis=1) for m in metaclusters])  # (K, n)
    B = np.stack([1.0 - delta_all[m].mean(axis=0) for m in metaclusters])  # (K, F)
    return _closed_form(A, alpha).T, _closed_form(B.T, beta).T
