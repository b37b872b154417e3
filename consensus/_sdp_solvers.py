"""The two solvers of the SDP consensus relaxation (Singh et al. 2007): SCS on the full PSD problem (the
reference, small inputs) and a nonnegative low-rank factorisation with an augmented Lagrangian (large
inputs). :mod:`segensemble.consensus.sdp` builds the estimator on them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from segensemble.errors import InputError

__all__ = ["sdp_scs", "sdp_lowrank", "SCS_MAX_OBJECTS"]

#: Largest number of objects (atoms) the SCS reference solver accepts: n^2 / 2
#: unknowns in a PSD cone; at this size one solve takes tens of minutes.
SCS_MAX_OBJECTS = 1000


def sdp_scs(B, s, k, *, eps: float = 1e-5, max_iters: int = 100_000):
    """Solve the relaxed Model 2 SDP exactly with cvxpy and SCS.

    Parameters
    ----------
    B : sparse or dense (n, d) array
        Factor of the objective matrix ``C = B B^T``.
    s : (n,) array
        Square roots of the object weights.
    k : int
        Trace (number of clusters).
    eps : float
        SCS absolute and relative tolerance.
    max_iters : int

    Returns
    -------
    M : (n, n) array
        The solution.
    info : dict
        ``objective`` (``tr(C M)``), ``gap`` (relative primal-dual gap reported
        by SCS), ``violation`` (relative residual ``||M s - s|| / ||s||``),
        ``iterations`` and ``status``.

    Examples
    --------
    >>> B = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> M, info = sdp_scs(B, np.ones(3), 2)
    >>> round(info["objective"], 3)
    3.0
    """
    import cvxpy as cp

    n = len(s)
    if n > SCS_MAX_OBJECTS:
        raise InputError(
            f"solver: 'scs' handles at most {SCS_MAX_OBJECTS} objects, got {n}; use solver='lowrank'"
        )
    C = B @ B.T
    C = C.toarray() if sp.issparse(C) else np.asarray(C)
    scale = float(s @ s)  # objective and constraints on the scale of one object
    M = cp.Variable((n, n), PSD=True)
    sn = s / np.sqrt(scale)
    prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(C / scale, M))), [M >= 0, M @ sn == sn, cp.trace(M) == k])
    prob.solve(solver=cp.SCS, eps_abs=eps, eps_rel=eps, max_iters=max_iters)
    if M.value is None:
        raise RuntimeError(f"SCS failed: status {prob.status}")
    Mv = (M.value + M.value.T) / 2
    extra = (prob.solver_stats.extra_stats or {}).get("info", {}) if prob.solver_stats else {}
    pobj, dobj = extra.get("pobj"), extra.get("dobj")
    gap = abs(pobj - dobj) / (1.0 + abs(pobj) + abs(dobj)) if pobj is not None and dobj is not None else np.nan
    info = {
        "objective": float(np.sum(C * Mv)),
        "gap": float(gap),
        "violation": float(np.linalg.norm(Mv @ s - s) / np.linalg.norm(s)),
        "iterations": int(extra.get("iter", -1)),
        "status": str(prob.status),
    }
    return Mv, info


def _project(U, k):
    """Nearest point of {U >= 0, ||U||_F^2 = k} (None if U has no positive entry)."""
    U = np.maximum(U, 0.0)
    norm = np.linalg.norm(U)
    if norm == 0:
        return None
    U *= np.sqrt(k) / norm  # in place: the same products as U * (sqrt(k) / norm)
    return U


#: Step lengths of the spectral projected gradient (on the scaled problem).
_ALPHA_MIN, _ALPHA_MAX = 1e-10, 1e3


def sdp_lowrank(B, s, k, *, rank=None, U0=None, beta: float = 30.0, tol: float = 1e-6, max_iter: int = 20_000,
                inner: int = 10, rng=None):
    """Solve the relaxed Model 2 SDP by a nonnegative low-rank augmented Lagrangian.

    Minimises ``-tr(C U U^T) + y^T r + beta/2 ||r||^2`` with ``r = U U^T s - s``
    over ``{U >= 0, ||U||_F^2 = k}`` by projected gradient steps: each
    tries the Barzilai-Borwein length of the last step (Birgin, Martinez &
    Raydan 2000) and shortens it along the projection arc until the value is
    at most ``f + <G, d> + ||d||^2 / (2 a)``, as for a function whose
    gradient is 1/a-Lipschitz (a non-monotone acceptance instead took 2-3x
    fewer steps but could collapse to a degenerate corner with ``beta`` = 10
    or 100). A rejected trial shows the curvature along its step, ``2 e /
    ||d||^2`` with ``e`` the value's excess over the linear model; the next
    trial takes at most half the length and at most 1.5 times the length
    that curvature allows (the penalty is quartic, so a long step's secant
    overstates the curvature of a shorter one): about 1.8 trials per step
    instead of 2.6 when halving alone, the same acceptance test. The
    multipliers are updated, ``y += beta r``, every ``inner``
    steps, on the problem scaled so that ``||s|| = 1``. Stops when the
    relative constraint residual and the relative step both fall below
    ``tol``. Cost per step O(nnz(B) r).

    Parameters
    ----------
    B, s, k
        As for :func:`sdp_scs`.
    rank : int, optional
        Columns of U (default ``2 k``; the SDP optimum of a noisy ensemble has
        rank above k, and ``r = k`` can stop at a worse local point).
    U0 : (n, rank) array, optional
        Start (default: uniform random in [0, 1)).
    beta : float
        Penalty parameter on the scaled problem (30 converged fastest among
        1, 3, 10, 30, 100 on the benchmark ensembles with the former steps;
        with these 10 needs fewer steps on most, but 7 370 against 2 780 at
        n = 100).
    tol : float
    max_iter : int
    inner : int
        Gradient steps between multiplier updates.
    rng : None, int or numpy Generator

    Returns
    -------
    U : (n, rank) array, nonnegative, with ``M = U U^T``
    info : dict
        ``objective`` (``tr(C U U^T)``), ``violation`` (``||U U^T s - s|| /
        ||s||``), ``iterations``, ``converged`` and ``multipliers`` (``y`` of
        the scaled problem).

    Examples
    --------
    >>> B = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> U, info = sdp_lowrank(B, np.ones(3), 2, rng=0)
    >>> round(info["objective"], 3), info["violation"] < 1e-5
    (3.0, True)
    """
    n = len(s)
    r = 2 * k if rank is None else int(rank)
    gen = np.random.default_rng(rng)
    scale = float(s @ s)
    Bs = B / np.sqrt(scale)
    BsT = Bs.T  # transposed once: SciPy's transpose view costs more than half a product at 20 000 atoms
    Bm2 = Bs * -2.0  # -2 Bs: a power of two scales each product exactly, so (-2 Bs) V is -2 (Bs V) bit for bit
    sn = s / np.sqrt(scale)
    U = gen.random((n, r)) if U0 is None else np.ascontiguousarray(U0, dtype=np.float64)
    U = _project(U, k)
    if U is None:
        raise InputError("U0: expected a start with a positive entry")
    y = np.zeros(n)

    # (n, rank) work arrays written in place: no temporaries of the size of U per step
    G, G_next, d, work = (np.empty(U.shape) for _ in range(4))  # C order, as U and every product of it

    def evaluate(U):  # the value needs V = B^T U only (tr(U^T C U) = ||V||^2); C U = B V for the gradient
        V = np.asarray(BsT @ U)
        t = U.T @ sn
        res = U @ t - sn
        return -np.vdot(V, V) + y @ res + beta / 2 * (res @ res), V, t, res

    def gradient(U, V, t, res, out):
        v = y + beta * res
        out[:] = np.asarray(Bm2 @ V)  # -2 C U + v t^T + s (U^T v)^T
        out += np.multiply(v[:, None], t[None, :], out=work)
        out += np.multiply(sn[:, None], (U.T @ v)[None, :], out=work)
        return out

    f, V, t, res = evaluate(U)
    gradient(U, V, t, res, G)
    alpha = 1.0
    step = np.inf
    it = 0
    for it in range(1, max_iter + 1):
        a = alpha
        while True:
            Un = _project(np.subtract(U, np.multiply(G, a, out=work), out=work), k)  # U - a G, projected
            if Un is not None:
                fn, Vn, tn, resn = evaluate(Un)
                np.subtract(Un, U, out=d)
                gd, dd = np.vdot(G, d), np.vdot(d, d)  # kept for the accepted step's Barzilai-Borwein length
                excess = fn - f - gd
                if excess <= dd / (2 * a) or a < 1e-12:  # as a 1/a-smooth step would
                    break
                a = min(0.5 * a, 1.5 * dd / (2 * excess))  # at most the step the curvature seen here allows
                continue
            a *= 0.5
        gradient(Un, Vn, tn, resn, G_next)
        dy = np.vdot(d, G_next) - gd
        alpha = min(max(dd / dy, _ALPHA_MIN), _ALPHA_MAX) if dy > 0 else _ALPHA_MAX  # Barzilai-Borwein length
        step = float(np.sqrt(dd)) / np.sqrt(k)
        U, f, V, t, res = Un, fn, Vn, tn, resn
        G, G_next = G_next, G
        if it % inner == 0:
            viol = float(np.linalg.norm(res))
            if viol < tol and step < tol:
                break
            y = y + beta * res  # U unchanged: its value and gradient under the new multipliers
            f = -np.vdot(V, V) + y @ res + beta / 2 * (res @ res)
            gradient(U, V, t, res, G)
    info = {
        "objective": float(np.vdot(V, V) * scale),
        "violation": float(np.linalg.norm(res)),
        "iterations": it,
        "converged": bool(np.linalg.norm(res) < tol and step < tol),
        "multipliers": y,
    }
    return U, info
