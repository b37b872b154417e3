"""Reproduce Tables 1-3 of Zhou, Dudeja & Amini (ICLR 2023) on the random perturbation model.

Mean adjusted Rand index to the truth over 40 (balanced) / 120 (unbalanced)
replications, K = 6, for the settings of the paper:
Sets 1-4 balanced with (n, N) = (100, 20), (100, 200), (500, 20), (500, 200);
Sets 5-8 unbalanced, n = 100, N = 20, p1 = 0.5, 0.75, 0.8, 0.9.
Each cell prints ours / the paper's; |diff| is checked against the issue's
tolerance (0.05 for Sets 1-4, 0.08 for Sets 5-8) for Input, Basic, Basic +
refinement, KCC and Best-of-K.

Usage::

    python benchmarks/reproduce_zhou2023.py            # Table 1 (p = 0.45)
    python benchmarks/reproduce_zhou2023.py --all      # Tables 1-3 (p = 0.45, 0.55, 0.65)
    python benchmarks/reproduce_zhou2023.py --reps 10  # quicker, fewer replications
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.metrics import adjusted_rand_score  # noqa: E402

from segensemble import Ensemble, consensus  # noqa: E402
from segensemble.datasets import rpm_ensemble  # noqa: E402

SETS = {1: (100, 20, None), 2: (100, 200, None), 3: (500, 20, None), 4: (500, 200, None),
        5: (100, 20, 0.5), 6: (100, 20, 0.75), 7: (100, 20, 0.8), 8: (100, 20, 0.9)}
K = 6

# Published values (Zhou, Dudeja & Amini 2023, Tables 1-3): method -> (not refined, refined) per set.
PAPER = {
    0.45: {
        "Input": ([0.30, 0.30, 0.30, 0.30, 0.33, 0.28, 0.25, 0.160], None),
        "Basic": ([1.00, 1.00, 1.00, 1.00, 0.82, 0.35, 0.24, 0.093], [1.00, 1.00, 1.00, 1.00, 0.98, 0.91, 0.86, 0.690]),
        "SC": ([0.99, 1.00, 1.00, 1.00, 0.96, 0.65, 0.65, 0.430], [1.00, 1.00, 1.00, 1.00, 0.99, 0.98, 0.97, 0.880]),
        "KCC": ([1.00, 1.00, 1.00, 1.00, 0.91, 0.44, 0.34, 0.130], [1.00, 1.00, 1.00, 1.00, 0.93, 0.50, 0.41, 0.180]),
        "Best Of K": ([0.32, 0.30, 0.29, 0.31, 0.33, 0.28, 0.24, 0.150], None),
        "EM": ([0.97, 0.98, 0.97, 0.99, 0.72, 0.41, 0.36, 0.220], None),
        "CCPivot": ([0.77, 1.00, 0.77, 1.00, 0.81, 0.78, 0.77, 0.670], [0.84, 1.00, 0.81, 1.00, 0.81, 0.75, 0.70, 0.570]),
        "BOEM": ([0.50, 0.48, 0.57, 0.69, 0.38, 0.41, 0.33, 0.310], [0.65, 0.59, 0.94, 1.00, 0.60, 0.70, 0.52, 0.430]),
    },
    0.55: {
        "Input": ([0.20, 0.20, 0.20, 0.20, 0.23, 0.18, 0.16, 0.098], None),
        "Basic": ([0.96, 1.00, 0.98, 1.00, 0.66, 0.26, 0.19, 0.077], [0.97, 1.00, 0.98, 1.00, 0.89, 0.64, 0.57, 0.370]),
        "SC": ([0.95, 1.00, 0.98, 1.00, 0.75, 0.41, 0.35, 0.170], [0.97, 1.00, 0.98, 1.00, 0.95, 0.86, 0.79, 0.550]),
        "KCC": ([0.94, 1.00, 0.98, 1.00, 0.67, 0.28, 0.21, 0.081], [0.97, 1.00, 0.98, 1.00, 0.74, 0.36, 0.27, 0.130]),
        "Best Of K": ([0.20, 0.21, 0.20, 0.20, 0.23, 0.19, 0.17, 0.096], None),
        "EM": ([0.87, 0.95, 0.91, 0.97, 0.64, 0.33, 0.27, 0.140], None),
        "CCPivot": ([0.51, 0.99, 0.51, 0.99, 0.57, 0.52, 0.44, 0.360], [0.61, 0.98, 0.54, 0.94, 0.52, 0.36, 0.32, 0.200]),
        "BOEM": ([0.21, 0.21, 0.23, 0.29, 0.33, 0.39, 0.31, 0.240], [0.46, 0.36, 0.56, 0.65, 0.55, 0.62, 0.48, 0.280]),
    },
    0.65: {
        "Input": ([0.120, 0.120, 0.12, 0.12, 0.14, 0.11, 0.096, 0.059], None),
        "Basic": ([0.790, 1.000, 0.88, 1.00, 0.47, 0.17, 0.120, 0.061], [0.810, 1.000, 0.89, 1.00, 0.60, 0.33, 0.280, 0.160]),
        "SC": ([0.750, 1.000, 0.88, 1.00, 0.47, 0.19, 0.140, 0.076], [0.810, 1.000, 0.89, 1.00, 0.65, 0.40, 0.330, 0.190]),
        "KCC": ([0.590, 1.000, 0.89, 1.00, 0.39, 0.16, 0.100, 0.045], [0.740, 1.000, 0.89, 1.00, 0.52, 0.24, 0.180, 0.083]),
        "Best Of K": ([0.120, 0.130, 0.12, 0.12, 0.13, 0.11, 0.098, 0.062], None),
        "EM": ([0.600, 0.920, 0.74, 0.95, 0.46, 0.23, 0.180, 0.078], None),
        "CCPivot": ([0.250, 0.690, 0.22, 0.67, 0.28, 0.24, 0.210, 0.140], [0.280, 0.540, 0.21, 0.37, 0.22, 0.12, 0.088, 0.051]),
        "BOEM": ([0.085, 0.098, 0.12, 0.11, 0.24, 0.29, 0.320, 0.270], [0.130, 0.150, 0.21, 0.22, 0.36, 0.33, 0.290, 0.150]),
    },
}
# Our estimator for each of the paper's rows (None: not in the registry yet).
# k-means as in the paper's experiments (unstated there; we take the common default): k-means++ seeding, best of 10.
PLAIN = {"init": "k-means++", "n_init": 10}
OURS = {
    "Basic": ("basic", PLAIN),
    "SC": ("spectral", {"variant": "normalized", **PLAIN}),
    "SC (plain)": ("spectral", {"variant": "plain", **PLAIN}),
    "KCC": ("kcc", PLAIN),
    "Basic (members)": ("basic", {}),
    "KCC (members)": ("kcc", {}),
    "Best Of K": ("bestofk", {}),
    "EM": ("em", {}),
    "CCPivot": ("ccpivot", {}),
    "BOEM": ("boem", {}),
}
CHECKED = ("Input", "Basic", "KCC", "Best Of K")


def run(p: float, reps_bal: int, reps_unbal: int, seed: int = 0):
    scores: dict = {}
    for s, (n, N, p1) in SETS.items():
        reps = reps_bal if p1 is None else reps_unbal
        for r in range(reps):
            # the paper draws every object's true label at random ("randomly assigning each of the n objects")
            L, z = rpm_ensemble(n, N, K, p, p1=p1, truth="random",
                                rng=np.random.default_rng([seed, s, r, int(p * 100)]))
            ens = Ensemble.from_labels(L)
            member_ari = [adjusted_rand_score(z, L[:, j]) for j in range(N)]
            scores.setdefault(("Input", False), {}).setdefault(s, []).append(np.mean(member_ari))
            # diagnostic: the best member in hindsight, and the rank (1 = best) of the one Best-of-K picks
            scores.setdefault(("Best member (oracle)", False), {}).setdefault(s, []).append(np.max(member_ari))
            picked = consensus.get("bestofk")().fit(ens).best_member_
            scores.setdefault(("Best-of-K pick rank", False), {}).setdefault(s, []).append(
                1 + int(np.sum(np.asarray(member_ari) > member_ari[picked])))
            # diagnostic, not a method: the member minimising summed Hamming distance between *unmatched*
            # labels (members' random label permutations left in place) -- this reproduces the paper's row
            unmatched = (L[:, :, None] != L[:, None, :]).sum(axis=0).sum(axis=1)
            scores.setdefault(("Best Of K, labels unmatched", False), {}).setdefault(s, []).append(
                member_ari[int(np.argmin(unmatched))])
            for row, (name, params) in OURS.items():
                if name not in consensus.available():
                    continue
                for refined in (False, True):
                    # CC-Pivot chooses its own number of clusters, as in the paper; BOEM keeps Best-of-K's K
                    # (with its own K, every move towards singletons lowers the cost when all X < 1/2:
                    # ARI 0.01-0.26 on Sets 1-4 at p = 0.45)
                    k = "auto" if name == "ccpivot" else K
                    est = consensus.make(name, k, random_state=r, refine=refined, **params)
                    ari = adjusted_rand_score(z, est.fit(ens).labels_)
                    scores.setdefault((row, refined), {}).setdefault(s, []).append(ari)
    return {key: [float(np.mean(v[s])) for s in SETS] for key, v in scores.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="Tables 2 and 3 too")
    ap.add_argument("--reps", type=int, default=None, help="replications per set (default 40 / 120)")
    args = ap.parse_args()
    worst = 0.0
    outside = []
    for p in ([0.45, 0.55, 0.65] if args.all else [0.45]):
        rb, ru = (args.reps, args.reps) if args.reps else (40, 120)
        res = run(p, rb, ru)
        print(f"\nTable for p = {p}: mean ARI, ours / paper ({rb} balanced, {ru} unbalanced replications)")
        print(f"{'method':<28} {'refined':<8}" + "".join(f"{'Set ' + str(s):>13}" for s in SETS))
        for row in ["Input", "Basic", "SC", "SC (plain)", "KCC", "Best Of K", "EM", "CCPivot", "BOEM",
                    "Basic (members)", "KCC (members)", "Best member (oracle)", "Best-of-K pick rank",
                    "Best Of K, labels unmatched"]:
            for refined in (False, True):
                paper_row = PAPER[p].get("Best Of K" if row.startswith("Best Of K,") else row)
                ref_vals = None if paper_row is None else paper_row[1 if refined else 0]
                ours = res.get((row, refined))
                if ours is None and ref_vals is None:
                    continue
                cells = []
                for k, s in enumerate(SETS):
                    o = "  n/a" if ours is None else (f"{ours[k]:5.1f}" if "rank" in row else f"{ours[k]:5.2f}")
                    pp = "  -- " if ref_vals is None else f"{ref_vals[k]:5.2f}"
                    cells.append(f"{o}/{pp}")
                    if ours is not None and ref_vals is not None and (row in CHECKED or row == "Basic"):
                        if row != "Basic" or refined in (False, True):
                            tol = 0.05 if s <= 4 else 0.08
                            worst = max(worst, abs(ours[k] - ref_vals[k]) - tol)
                            if abs(ours[k] - ref_vals[k]) > tol:
                                outside.append(f"p={p} {row}{' refined' if refined else ''} Set {s} "
                                               f"({ours[k]:.2f} vs {ref_vals[k]:.2f})")
                print(f"{row:<28} {str(refined):<8}" + "".join(f"{c:>13}" for c in cells))
    print(f"\nchecked cells (Input, Basic, Basic+refinement, KCC, Best-of-K) "
          f"{'all within tolerance' if worst <= 0 else f'exceed the tolerance by up to {worst:.3f}'}")
    for cell in outside:
        print("  outside tolerance:", cell)
    print("n/a: method not implemented yet; SC = normalised-affinity variant, SC (plain) = Algorithm 2 as printed;")
    print("rows without '(members)' use k-means++ starts (best of 10); '(members)' rows use the library default")
    print("(deterministic starts from the members and a maximin start). Truth labels drawn at random, as the paper.")
    print("Best-of-K picks the member of smallest summed Mirkin distance: 'pick rank' is that member's rank by ARI")
    print("(1 = best); 'Best member (oracle)' is the best member's ARI. 'Best Of K, labels unmatched' is a diagnostic,")
    print("not a method: the same choice with Hamming distances between raw, unmatched labels.")


if __name__ == "__main__":
    main()
