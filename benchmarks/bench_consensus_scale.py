"""Time and peak memory of the scalable consensus methods at n = 10^4 and 10^5 objects.

m = 10 members, K = 10 clusters, random perturbation model (p = 0.3); each
method runs in a fresh process (peak RSS measured by the OS) on one thread;
seconds are the best of 3 fits.
Targets (issue): <= 3 s at n = 10^5, peak <= 1 GB, time ratio 10^5 / 10^4 <= 15.

Usage::

    python benchmarks/bench_consensus_scale.py [--methods basic,spectral,kcc,bestofk] [--sizes 10000,100000]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

CHILD = r"""
import json, resource, sys, time
import numpy as np
from segensemble import Ensemble, consensus
from segensemble.datasets import rpm_ensemble
name, n, refine = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
L, z = rpm_ensemble(n, 10, 10, 0.3, rng=0)
ens = Ensemble.from_labels(L)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sec = float("inf")
for _ in range(3):  # best of 3: the machine is shared and noisy
    t = time.perf_counter()
    labels = consensus.get(name)(n_clusters=10, refine=refine).fit(ens).labels_
    sec = min(sec, time.perf_counter() - t)
from sklearn.metrics import adjusted_rand_score
print(json.dumps({"seconds": sec, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "ari": adjusted_rand_score(z, labels)}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="basic,spectral,kcc,bestofk")
    ap.add_argument("--sizes", default="10000,100000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'method':<18}" + "".join(f"{'n=%d s' % n:>13}{'peak MB':>9}" for n in sizes) + f"{'ratio':>8}{'ARI':>6}")
    for name in args.methods.split(","):
        for refine in (False, True):
            row, secs = [], []
            for n in sizes:
                out = subprocess.run([sys.executable, "-c", CHILD, name, str(n), "1" if refine else "0"],
                                     capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                secs.append(r["seconds"])
                row.append(f"{r['seconds']:>13.3f}{r['peak_mb']:>9.0f}")
            label = name + (" + refine" if refine else "")
            print(f"{label:<18}" + "".join(row) + f"{secs[-1] / secs[0]:>8.1f}{r['ari']:>6.2f}")
    print("peak MB: whole-process peak RSS (Python, NumPy, SciPy and the input included).")


if __name__ == "__main__":
    main()
