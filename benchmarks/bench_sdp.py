"""The scalable SDP solver against the cvxpy + SCS reference, side by side in one run.

Ensembles: random perturbation model, m = 10 members, K = 6 clusters, p = 0.45
(every object is its own atom, so n objects = n atoms). Both solvers solve the
same relaxed Model 2 SDP (Singh et al. 2007) on one thread; SCS runs to
eps = 1e-5. For each n the table prints the objective tr(S Z*) of each solver,
the low-rank one relative to SCS's optimum, the seconds and their ratio, and
the constraint violation ||Z 1 - 1|| / ||1||.
Targets (issues): objective within 0.5% of SCS for n <= 300 (within 1e-4
relative at n = 100); n = 400 at least 50x faster than SCS; n = 2000 <= 15 s;
n = 5000 <= 60 s; n = 20 000 <= 4 s; n = 100 000 <= 30 s.

Usage::

    python benchmarks/bench_sdp.py                           # full table (SCS at n = 400 takes minutes)
    python benchmarks/bench_sdp.py --scs 100,200 --lowrank 1000
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

from segensemble import Ensemble  # noqa: E402
from segensemble.consensus import SDP  # noqa: E402
from segensemble.datasets import rpm_ensemble  # noqa: E402

K = 6


def _fit(ens, solver):
    t = time.perf_counter()
    est = SDP(n_clusters=K, solver=solver, random_state=0).fit(ens)
    return est, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scs", default="100,200,300,400", help="sizes solved by both solvers")
    ap.add_argument("--lowrank", default="1000,2000,5000", help="sizes solved by the low-rank solver only")
    args = ap.parse_args()
    both = [int(v) for v in args.scs.split(",") if v]
    only = [int(v) for v in args.lowrank.split(",") if v]
    print(f"{'n':>6} {'SCS obj':>12} {'low-rank obj':>13} {'rel. diff':>10} {'SCS s':>8} {'low-rank s':>11}"
          f" {'speed-up':>9} {'violation':>10} {'iters':>6}")
    for n in both + only:
        L, _ = rpm_ensemble(n, 10, K, 0.45, rng=0)
        ens = Ensemble.from_labels(L)
        low, t_low = _fit(ens, "lowrank")
        if n in both:
            scs, t_scs = _fit(ens, "scs")
            rel = (low.objective_ - scs.objective_) / scs.objective_
            print(f"{n:>6} {scs.objective_:>12.2f} {low.objective_:>13.2f} {rel:>+10.2e} {t_scs:>8.2f} "
                  f"{t_low:>11.3f} {t_scs / t_low:>8.0f}x {low.violation_:>10.1e} {low.n_iter_:>6}")
        else:
            print(f"{n:>6} {'':>12} {low.objective_:>13.2f} {'':>10} {'':>8} {t_low:>11.3f} {'':>9} "
                  f"{low.violation_:>10.1e} {low.n_iter_:>6}")
    print("\nrel. diff = (low-rank - SCS) / SCS objective (negative: below the optimum); the SCS gap_ is the")
    print("solver's own relative primal-dual gap. Times include problem set-up and the rounding.")


if __name__ == "__main__":
    main()
