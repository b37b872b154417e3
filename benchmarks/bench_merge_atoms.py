"""Boundary merging on many atoms: ``segensemble fuse --inputs`` with a 16-bit label PNG of 60 000 labels.

Two members of a 300 x 400 image, written as 16-bit PNGs: 60 000 labels
(2-pixel cells, ids shuffled) and 20 x 3 blocks offset by one pixel — about
80 000 atoms; and the same with the 60 000 labels scattered over the image
(each label a few separate pixels, ~120 000 atoms). Each case runs the CLI
end to end in a fresh process (``-m merge``, labels written as .npy); wall
seconds and the child's peak RSS are printed. Target (issue): <= 10 s for
~70 000 atoms.

Usage::

    python benchmarks/bench_merge_atoms.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

H, W = 300, 400


def _members(scattered: bool):
    rng = np.random.default_rng(0)
    if scattered:
        a = rng.integers(0, 60000, (H, W))
    else:
        a = np.arange(H)[:, None] * (W // 2) + np.arange(W)[None, :] // 2
        a = rng.permutation(a.max() + 1)[a]
    b = (np.arange(H)[:, None] + 1) // 20 * 100 + (np.arange(W)[None, :] + 1) // 3
    return a.astype(np.uint16), b.astype(np.uint16)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import cv2

    print(f"{'case':<32}{'atoms':>8}{'best s':>9}{'peak MB':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for scattered in (False, True):
            a, b = _members(scattered)
            pa, pb, out = Path(tmp) / "a.png", Path(tmp) / "b.png", Path(tmp) / "out.npy"
            cv2.imwrite(str(pa), a)
            cv2.imwrite(str(pb), b)
            atoms = len(np.unique(a.astype(np.int64) * 100000 + b))
            best = np.inf
            for _ in range(args.repeats):
                t = time.perf_counter()
                subprocess.run([sys.executable, "-m", "segensemble.cli", "fuse", "--inputs", str(pa), str(pb),
                                "-m", "merge", "-o", str(out), "-q"], check=True, capture_output=True)
                best = min(best, time.perf_counter() - t)
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            name = "60 000 labels, scattered" if scattered else "60 000 labels, 2-pixel cells"
            print(f"{name:<32}{atoms:>8,}{best:>9.2f}{peak:>9.0f}", flush=True)
    print("peak MB: the largest child process so far (whole process).")


if __name__ == "__main__":
    main()
