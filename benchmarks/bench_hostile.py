"""Time and peak memory of the CLI on hostile inputs: decompression bombs, endless downloads, many labels.

Each case runs ``segensemble ...`` in a fresh process and reports its exit
code, wall time and peak resident memory (of that process, measured by a
wrapper with ``getrusage(RUSAGE_CHILDREN)``), next to a baseline in the same
run: ``segensemble --version`` (interpreter and import start-up), so the
ratio shows what the refusal itself costs. The bombs are made here from a few
hundred bytes to a few hundred kilobytes (the same makers as the tests).

Usage::

    python benchmarks/bench_hostile.py [--many-labels]

``--many-labels`` adds ``fuse --inputs`` of a 70 000-label map with every
registered consensus method (slow: ``merge`` alone takes about 100 s).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_reliability import _jpeg_bomb, _mat_bomb, _png_bomb  # noqa: E402

_WRAP = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
         "rc = subprocess.run(sys.argv[1:], capture_output=True).returncode; "
         "print(rc, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def run(args, cwd) -> tuple[int, float, float]:
    """(exit code, seconds, peak MB) of ``segensemble ARGS`` in a fresh process, run in ``cwd``.

    Outside the repository: from its root, ``python -m`` would import the unmapped source tree.
    """
    out = subprocess.run([sys.executable, "-c", _WRAP, sys.executable, "-m", "segensemble.cli", *map(str, args)],
                         capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, cwd=cwd)
    rc, seconds, kb = out.stdout.split()
    return int(rc), float(seconds), int(kb) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--many-labels", action="store_true")
    opts = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    png = _png_bomb(tmp / "bomb.png", 20000, 20000)
    png_big = _png_bomb(tmp / "bomb100k.png", 100000, 100000, real=False)
    jpg = _jpeg_bomb(tmp / "bomb.jpg", 65000, 65000)
    segs = _mat_bomb(tmp / "segs.mat", "segs")
    gt = _mat_bomb(tmp / "gt.mat", "groundTruth")
    small = tmp / "seg.npy"
    np.save(small, np.zeros((4, 4), np.int32))
    out = tmp / "out.png"
    cases = [
        ("baseline: segensemble --version", ["--version"], "-"),
        (f"segment PNG 20000x20000 ({png.stat().st_size // 1000} kB)", ["segment", png, "-o", out], png),
        ("segment PNG 20000x20000 --downscale", ["segment", png, "-o", out, "--downscale"], png),
        ("fuse PNG header 100000x100000", ["fuse", png_big, "-o", out], png_big),
        ("segment JPEG header 65000x65000", ["segment", jpg, "-o", out], jpg),
        ("segment JPEG header 65000x65000 --downscale", ["segment", jpg, "-o", out, "--downscale"], jpg),
        (f"fuse --inputs segs .mat 20000x20000 ({segs.stat().st_size} B)", ["fuse", "--inputs", segs, small, "-o",
                                                                              out], segs),
        (f"evaluate --gt groundTruth .mat 20000x20000 ({gt.stat().st_size} B)", ["evaluate", small, "--gt", gt], gt),
        ("datasets fetch file:///dev/zero --max-bytes 100 MB", ["datasets", "fetch", "bsds500", "--dest",
                                                                tmp / "dest", "--url", "file:///dev/zero",
                                                                "--max-bytes", "100000000"], "-"),
        ("evaluate --nthresh 1e12", ["evaluate", small, "--gt", gt, "--nthresh", "1e12"], "-"),
    ]
    if opts.many_labels:
        from segensemble import consensus

        lab = tmp / "lab_70000.npy"
        np.save(lab, np.arange(70000).reshape(280, 250))
        other = tmp / "other.npy"
        np.save(other, np.arange(70000).reshape(280, 250) // 5000)
        for name in consensus.available():
            cases.append((f"fuse --inputs 70000-label map -m {name}", ["fuse", "--inputs", lab, other, "-m", name,
                                                                       "-o", tmp / f"{name}.npy"], "-"))
    base = None
    print(f"{'case':<58} {'exit':>4} {'seconds':>8} {'x base':>7} {'peak MB':>8} {'x base':>7}")
    for label, args, _ in cases:
        rc, seconds, mb = run(args, tmp)
        base = base or (seconds, mb)
        print(f"{label:<58} {rc:>4} {seconds:>8.2f} {seconds / base[0]:>7.2f} {mb:>8.0f} {mb / base[1]:>7.2f}")
    assert not out.exists(), "a refused command wrote its output"


if __name__ == "__main__":
    main()
