"""Consensus accuracy on scikit-learn's bundled Iris and Wine data.

Ensembles of 20 k-means runs, each on a random subset of the standardised
features (half of them, at least 2) with k drawn from K..2K (K = the number of
classes); every registered consensus method fuses them into K clusters.
Accuracy = fraction of objects correctly classified after the best one-to-one
matching of clusters to classes (Hungarian). Printed next to the best and the
average member (members with more than K clusters are scored the same way,
extra clusters counting as errors).

Usage::

    python benchmarks/consensus_uci.py [--members 20] [--seed 0]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.datasets import load_iris, load_wine  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from segensemble import Ensemble, consensus  # noqa: E402


def accuracy(y, labels) -> float:
    C = np.zeros((labels.max() + 1, y.max() + 1))
    np.add.at(C, (labels, y), 1)
    r, c = linear_sum_assignment(-C)
    return C[r, c].sum() / len(y)


def ensemble(X, k, members, rng):
    cols = []
    for _ in range(members):
        feats = rng.choice(X.shape[1], size=max(2, X.shape[1] // 2), replace=False)
        kk = int(rng.integers(k, 2 * k + 1))
        cols.append(KMeans(kk, n_init=1, random_state=int(rng.integers(1 << 30))).fit_predict(X[:, feats]))
    return np.stack(cols, axis=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    for name, loader in (("iris", load_iris), ("wine", load_wine)):
        X, y = loader(return_X_y=True)
        X = StandardScaler().fit_transform(X)
        k = int(y.max()) + 1
        L = ensemble(X, k, args.members, rng)
        ens = Ensemble.from_labels(L)
        member_acc = [accuracy(y, L[:, j]) for j in range(L.shape[1])]
        print(f"\n{name}: n = {len(y)}, K = {k}, {args.members} k-means members on random feature subsets")
        print(f"{'members':<18} best {max(member_acc):.3f}   average {np.mean(member_acc):.3f}")
        for method in consensus.available():
            for refine in (False, True):
                labels = consensus.get(method)(n_clusters=k, refine=refine).fit(ens).labels_
                tag = method + (" + refine" if refine else "")
                print(f"{tag:<18} {accuracy(y, labels):.3f}")


if __name__ == "__main__":
    main()
