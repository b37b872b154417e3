"""Quality of every consensus method on label arrays: ARI and NMI against the truth, same members for all.

Two inputs, both built here (seeded, no download):

- ``digits``: scikit-learn's ``load_digits`` (1 797 images of 10 digits),
  10 members made with scikit-learn: k-means (4 seeds), agglomerative (ward,
  average, complete on the standardised pixels) and spectral clustering
  (3 seeds, nearest-neighbour affinity), each with 10 clusters;
- ``synthetic``: the random perturbation model (``rpm_ensemble``): K = 10
  true clusters, 10 members that relabel each object at random with
  probability 0.3, at the sizes given.

Beside the methods, the baseline any user can write in three lines: k-means
(10 starts) on the stacked one-hot labels. A method that refuses (too many
objects for its dense steps) is shown as ``refused``.

``--plain-cspa``: CSPA as Strehl & Ghosh define it and the ClusterEnsembles
port computes it, with none of our bookkeeping — every object a vertex in the
given order, the edge weights the number of members putting the pair together,
METIS (pymetis) into K parts — on the digits members with 20 METIS seeds, so
``cspa``'s row can be read against the spread of the plain definition.

``--member-seeds N``: the digits members drawn N times (draw d seeds its
k-means and spectral members with 10 d + i; draw 0 is the table's members) and
each method's ARI over the draws — mean, smallest and largest — beside the best
member's and the baseline's: one draw of the members moves every consensus by
several hundredths, so a single figure is read against that spread.

Usage::

    python benchmarks/consensus_quality.py [--methods cspa,hgpa,...] [--sizes 10000,100000,1000000]
                                           [--member-seeds 10]
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score  # noqa: E402

from segensemble import InputError, consensus  # noqa: E402
from segensemble.datasets import rpm_ensemble  # noqa: E402


def digits_members(seed: int = 0):
    """(labels (n, 10), truth): the digits members described in the module docstring."""
    from sklearn.cluster import AgglomerativeClustering, KMeans, SpectralClustering
    from sklearn.datasets import load_digits
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    Xs = StandardScaler().fit_transform(X)
    members = [KMeans(10, n_init=1, random_state=seed + i).fit_predict(X) for i in range(4)]
    members += [AgglomerativeClustering(10, linkage=link).fit_predict(Xs) for link in ("ward", "average", "complete")]
    members += [SpectralClustering(10, affinity="nearest_neighbors", random_state=seed + i).fit_predict(X)
                for i in range(3)]
    return np.stack(members, axis=1), y


def onehot_kmeans(L, k, seed: int = 0):
    """The three-line baseline: k-means (10 starts) on the members' stacked one-hot labels."""
    import scipy.sparse as sp
    from sklearn.cluster import KMeans

    blocks = [sp.csr_matrix((np.ones(len(L)), (np.arange(len(L)), c)), shape=(len(L), c.max() + 1)) for c in L.T]
    return KMeans(k, n_init=10, random_state=seed).fit_predict(sp.hstack(blocks).tocsr())


def plain_cspa(L, k, seed: int):
    """CSPA by its definition (see the module docstring), for a check of ``cspa`` against it."""
    import pymetis
    import scipy.sparse as sp

    H = sp.hstack([sp.csr_matrix((np.ones(len(L)), (np.arange(len(L)), c)), shape=(len(L), c.max() + 1))
                   for c in L.T]).tocsr()
    S = (H @ H.T).tocsr()
    S.setdiag(0)
    S.eliminate_zeros()
    S.sort_indices()
    part = pymetis.part_graph(k, pymetis.CSRAdjacency(S.indptr.astype(np.int64), S.indices.astype(np.int64)),
                              eweights=S.data.astype(np.int64), options=pymetis.Options(seed=seed))
    return np.asarray(part.vertex_part)


def score(name, L, truth, k):
    t = time.perf_counter()
    try:
        labels = onehot_kmeans(L, k) if name == "onehot-kmeans" else consensus.get(name)(n_clusters=k).fit(L).labels_
    except InputError:
        return None
    return adjusted_rand_score(truth, labels), normalized_mutual_info_score(truth, labels), time.perf_counter() - t


def member_draws(names, draws: int) -> None:
    """Each method's digits ARI over ``draws`` draws of the members (see the module docstring)."""
    members = [digits_members(10 * d) for d in range(draws)]
    rows = {"best member": [max(adjusted_rand_score(y, c) for c in L.T) for L, y in members]}
    for name in names:
        scores = [score(name, L, y, 10) for L, y in members]
        rows[name] = None if any(r is None for r in scores) else [r[0] for r in scores]
    print(f"digits, {draws} draws of the members: ARI")
    print(f"{'':<14}{'mean':>10}{'min':>10}{'max':>10}")
    for name, v in rows.items():
        cells = f"{'refused':>30}" if v is None else f"{np.mean(v):>10.3f}{min(v):>10.3f}{max(v):>10.3f}"
        print(f"{name:<14}{cells}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default=",".join(consensus.available() + ["onehot-kmeans"]))
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--plain-cspa", action="store_true", help="also CSPA by its definition, 20 METIS seeds")
    ap.add_argument("--member-seeds", type=int, default=0, metavar="N",
                    help="also each method's digits ARI over N draws of the members (mean, min, max)")
    args = ap.parse_args()
    if args.member_seeds < 0:
        ap.error(f"--member-seeds: expected a count >= 0, got {args.member_seeds}")
    inputs = {"digits": digits_members()}
    best = max(adjusted_rand_score(inputs["digits"][1], c) for c in inputs["digits"][0].T)
    for n in (int(s) for s in args.sizes.split(",") if s):
        inputs[f"synthetic n={n:.0e}"] = tuple(rpm_ensemble(n, 10, 10, 0.3, rng=0))
    print(f"digits: best member ARI {best:.3f}")
    print(f"{'method':<14}" + "".join(f"{name:>30}" for name in inputs))
    print(f"{'':<14}" + "".join(f"{'ARI':>10}{'NMI':>10}{'s':>10}" for _ in inputs))
    for name in args.methods.split(","):
        row = []
        for L, truth in inputs.values():
            r = score(name, L, truth, 10)
            row.append(f"{'refused':>30}" if r is None else f"{r[0]:>10.3f}{r[1]:>10.3f}{r[2]:>10.2f}")
        print(f"{name:<14}" + "".join(row), flush=True)
    if args.plain_cspa:
        L, truth = inputs["digits"]
        scores = [adjusted_rand_score(truth, plain_cspa(L, 10, seed)) for seed in range(20)]
        print(f"plain CSPA on digits, METIS seeds 0-19: ARI median {np.median(scores):.3f}, "
              f"min {min(scores):.3f}, max {max(scores):.3f}")
    if args.member_seeds:
        member_draws(args.methods.split(","), args.member_seeds)


if __name__ == "__main__":
    main()
