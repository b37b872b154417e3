"""Finding 2 and its class: one writer per output folder (bench, score, fuse --out-dir, compare).

Two runs into one folder at once used to score each other's files and print the other run's numbers with
exit 0. Now the second is refused (exit 2, naming the folder and the live run's process) and the first
completes with exactly the numbers of a run alone; a lock left by a dead run is taken over.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from segensemble.batch.folders import LOCK_NAME, output_lock
from segensemble.errors import InputError


def _env():
    return {**os.environ, "OMP_NUM_THREADS": "1"}


def _cli(*args):
    return [sys.executable, "-m", "segensemble.cli", *map(str, args)]


def _wait_for(path, proc, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline and not path.exists() and proc.poll() is None:
        time.sleep(0.01)
    assert path.exists(), "the first run never took its output folder"


def _score_inputs(tmp_path):
    from segensemble.datasets import make_synthetic_dataset
    from segensemble.io import read_ground_truth, write_labels

    root = make_synthetic_dataset(tmp_path / "ds", n_images=6, shape=(40, 60))
    gt = root / "data" / "groundTruth" / "test"
    res = tmp_path / "res"
    for p in sorted(gt.glob("*.mat")):
        write_labels(res / f"{p.stem}.png", read_ground_truth(p).segmentations[-1])
    return res, gt


@pytest.mark.parametrize("command", ["bench", "score"])
def test_a_second_run_into_a_live_runs_folder_is_refused_and_the_first_is_right(tmp_path, command):
    out, alone = tmp_path / "out", tmp_path / "alone"
    if command == "bench":
        first = _cli("bench", "--synthetic", "--limit", "4", "--out", out)
        second = _cli("bench", "--synthetic", "--limit", "4", "--seed", "7", "-m", "vote", "--out", out)
        reference = _cli("bench", "--synthetic", "--limit", "4", "--out", alone)
    else:
        res, gt = _score_inputs(tmp_path)
        first = _cli("score", res, "--gt", gt, "--nthresh", "9", "--out", out)
        second = _cli("score", res, "--gt", gt, "--nthresh", "5", "--out", out)
        reference = _cli("score", res, "--gt", gt, "--nthresh", "9", "--out", alone)
    a = subprocess.Popen(first, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    _wait_for(out / LOCK_NAME, a)
    os.kill(a.pid, signal.SIGSTOP)  # the first run is held while it owns the folder: no race with its end
    try:
        b = subprocess.run(second, env=_env(), capture_output=True, text=True, cwd=tmp_path)
    finally:
        os.kill(a.pid, signal.SIGCONT)
    a_out, a_err = a.communicate(timeout=600)
    assert a.returncode == 0, a_err
    assert b.returncode == 2, b.stderr
    assert str(out) in b.stderr and f"process {a.pid}" in b.stderr and len(b.stderr.strip().splitlines()) == 1
    subprocess.run(reference, env=_env(), capture_output=True, check=True, cwd=tmp_path)
    mine, theirs = (json.loads((d / "summary.json").read_text()) for d in (out, alone))
    keys = ("table", "hierarchy") if command == "bench" else ("boundary", "region")
    for k in keys:
        assert (mine[k] if command == "score" else _numbers(mine[k])) == (
            theirs[k] if command == "score" else _numbers(theirs[k])), k
    assert not (out / LOCK_NAME).exists()


def _numbers(d):
    return {k: v for k, v in d.items() if k != "official_files"} if isinstance(d, dict) else d


def test_fuse_out_dir_and_compare_take_the_lock(tmp_path, photo):
    from typer.testing import CliRunner

    from segensemble.cli import app

    runner = CliRunner()
    out = tmp_path / "out"
    with output_lock(out, "--out"):  # a live run (this process) is writing there
        r = runner.invoke(app, ["fuse", str(photo), "--out-dir", str(out), "-r", "classic"])
        assert r.exit_code == 2 and "is being written by another segensemble run" in r.stderr
        scored = tmp_path / "scored"
        scored.mkdir()
        (scored / "summary.json").write_text(json.dumps({"n_images": 1, "region": {"covering": {"ods": 0.5}}}))
        r = runner.invoke(app, ["compare", str(scored), "--out", str(out)])
        assert r.exit_code == 2 and "is being written by another segensemble run" in r.stderr
    assert sorted(p.name for p in out.iterdir()) == []


def test_a_dead_runs_lock_is_taken_over(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    out = tmp_path / "out"
    out.mkdir()
    import socket

    (out / LOCK_NAME).write_text(json.dumps({"pid": int(dead.stdout), "host": socket.gethostname()}))
    from segensemble.batch.bench import run_bench

    summary = run_bench(out, synthetic_images=2)
    assert summary["n_images"] == 2 and not (out / LOCK_NAME).exists()


def test_the_lock_is_released_however_the_run_ends(tmp_path):
    with pytest.raises(ZeroDivisionError):
        with output_lock(tmp_path, "--out"):
            1 / 0
    assert not (tmp_path / LOCK_NAME).exists()
    with output_lock(tmp_path, "--out"):
        with pytest.raises(InputError, match=str(os.getpid())):
            with output_lock(tmp_path, "--out"):
                pass
    assert np.all([not (tmp_path / LOCK_NAME).exists()])
