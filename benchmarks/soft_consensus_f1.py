"""Soft against hard consensus functions on soft k-means ensembles: macro-F1 and CPU time.

Protocol after Sevillano et al. (SIGIR 2007): each member is one k-means run
(K = number of classes, one random initialisation) on one representation of
the data — standardised features, a PCA projection (2 to 20 dimensions) or a
random half of the features — and its soft memberships are a softmax of the
negative distances to the centroids (scale: the mean distance of an object to
its nearest centroid). Ensembles of |P| = 4, 10 and 49 members, 10 ensembles
per size, on scikit-learn's bundled digits, Iris and Wine. Soft functions
(borda, vote_sum, vote_product, dwh) use the memberships; hard ones (eac,
cspa, hgpa, mcla, vote) the labels. The consensus clusters are matched to the
classes by the Hungarian method and scored with the macro-averaged F1; CPU
time is process time per fit, on one thread.

Usage::

    python benchmarks/soft_consensus_f1.py [--ensembles 10]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.metrics import f1_score  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from segensemble import Ensemble, consensus  # noqa: E402

SOFT = ("borda", "vote_sum", "vote_product", "dwh")
HARD = ("eac", "cspa", "hgpa", "mcla", "vote")
SIZES = (4, 10, 49)


def soft_member(X, k, rng):
    choice = rng.integers(3)
    if choice == 0:
        Z = X
    elif choice == 1:
        Z = PCA(int(rng.integers(2, min(20, X.shape[1]) + 1)), random_state=int(rng.integers(1 << 30))).fit_transform(X)
    else:
        Z = X[:, rng.choice(X.shape[1], size=max(2, X.shape[1] // 2), replace=False)]
    km = KMeans(k, n_init=1, init="random", random_state=int(rng.integers(1 << 30))).fit(Z)
    d = np.sqrt(((Z[:, None, :] - km.cluster_centers_[None]) ** 2).sum(axis=2))
    scale = max(float(d.min(axis=1).mean()), 1e-12)
    M = np.exp(-(d - d.min(axis=1, keepdims=True)) / scale)
    return km.labels_, M / M.sum(axis=1, keepdims=True)


def macro_f1(y, labels):
    k = max(int(labels.max()), int(y.max())) + 1
    C = np.zeros((k, k))
    np.add.at(C, (labels, y), 1)
    rows, cols = linear_sum_assignment(-C)
    mapping = np.arange(k)
    mapping[rows] = cols
    return f1_score(y, mapping[labels], average="macro")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ensembles", type=int, default=10, help="ensembles per size and dataset")
    args = ap.parse_args()
    data = {"digits": datasets.load_digits(return_X_y=True), "iris": datasets.load_iris(return_X_y=True),
            "wine": datasets.load_wine(return_X_y=True)}
    methods = SOFT + HARD
    print(f"{'dataset':<8} {'|P|':>4} " + "".join(f"{m:>13}" for m in methods) + f"{'members':>13}")
    totals = {m: [[], []] for m in methods}
    for dname, (X, y) in data.items():
        X = StandardScaler().fit_transform(X)
        k = len(np.unique(y))
        for size in SIZES:
            f1 = {m: [] for m in methods + ("members",)}
            cpu = {m: [] for m in methods}
            for e in range(args.ensembles):
                rng = np.random.default_rng([size, e, len(X)])
                runs = [soft_member(X, k, rng) for _ in range(size)]
                ens = Ensemble(np.stack([r[0] for r in runs], axis=1), memberships=[r[1] for r in runs])
                f1["members"].append(np.mean([macro_f1(y, r[0]) for r in runs]))
                for m in methods:
                    t = time.process_time()
                    labels = consensus.get(m)(n_clusters=k).fit(ens).labels_
                    cpu[m].append(time.process_time() - t)
                    f1[m].append(macro_f1(y, labels))
            for m in methods:
                totals[m][0].append(np.mean(f1[m]))
                totals[m][1].append(np.mean(cpu[m]))
            print(f"{dname:<8} {size:>4} " + "".join(f"{np.mean(f1[m]):>7.3f}{np.mean(cpu[m]):>5.2f}s" for m in methods)
                  + f"{np.mean(f1['members']):>13.3f}")
    print("\nmean over datasets and sizes (macro-F1, CPU seconds per fit):")
    for m in sorted(methods, key=lambda m: -np.mean(totals[m][0])):
        kind = "soft" if m in SOFT else "hard"
        print(f"  {m:<13} {kind}  F1 {np.mean(totals[m][0]):.3f}   {np.mean(totals[m][1]):.3f} s")
    print("each cell: mean macro-F1 over the ensembles, then mean CPU seconds per fit; 'members': the mean member.")


if __name__ == "__main__":
    main()
