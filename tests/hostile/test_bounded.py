"""Findings 7, 8, 11, 16 and 17: no silent hang, no unbounded work, no noise on stderr, no option ignored."""

from __future__ import annotations

import time

import numpy as np
import pytest
from typer.testing import CliRunner

from segensemble.cli import app
from segensemble.io import write_labels

runner = CliRunner()


def test_bench_on_a_cluster_without_workers_stops_with_one_line(tmp_path):
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=True, host="127.0.0.1", dashboard_address=None,
                      silence_logs=50) as cluster:
        start = time.time()
        r = runner.invoke(app, ["bench", "--synthetic", "--limit", "2", "--out", str(tmp_path / "b"),
                                "--scheduler", cluster.scheduler_address, "--worker-timeout", "2"])
    assert r.exit_code == 1 and time.time() - start < 60
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Dask worker" in lines[0] and "2 image(s) not run" in lines[0]


@pytest.mark.parametrize("value", ["0.99", "0.5", "0.051"])
def test_a_matching_radius_beyond_every_protocol_is_refused(tmp_path, refused, value):
    seg = write_labels(tmp_path / "s.png", np.zeros((8, 8), int))
    gt = write_labels(tmp_path / "g.png", np.zeros((8, 8), int))
    start = time.time()
    refused(["evaluate", seg, "--gt", gt, "--max-dist", value], "--max-dist", "0.05", folder=tmp_path)
    assert time.time() - start < 10


def test_a_download_that_never_ends_is_stopped(tmp_path, refused):
    refused(["datasets", "fetch", "bsds500", "--dest", tmp_path / "d", "--url", "file:///dev/zero", "--max-bytes",
             "1000000"], "--max-bytes", folder=tmp_path)


def test_no_python_warning_reaches_the_user(tmp_path, photo):
    """An all-zero boundary map and a flat image: numpy divides by zero and takes means of empty slices inside."""
    flat = tmp_path / "flat.npy"
    np.save(flat, np.zeros((40, 60)))
    r = runner.invoke(app, ["fuse", str(photo), "-o", str(tmp_path / "o.png"), "--boundary", str(flat), "-r",
                            "classic", "--quiet"])
    assert r.exit_code == 0, r.output
    assert "Warning:" not in r.stderr and len(r.stderr.strip().splitlines()) == 1  # only the "fused ..." line


@pytest.mark.parametrize("args, words", [
    (["fuse", "{photo}", "-o", "{tmp}/o.png", "--image", "{tmp}/missing.png"], ["--image", "--inputs"]),
    (["score", "{tmp}", "--gt", "{tmp}", "--out", "{tmp}/s", "--what", "region", "--plot", "{tmp}/pr.png"],
     ["--plot", "--what region"]),
    (["fuse", "{photo}", "-o", "{tmp}/o.png", "--scheduler", "tcp://127.0.0.1:1"], ["--scheduler", "--out-dir"]),
])
def test_an_option_that_does_nothing_here_is_refused(tmp_path, photo, refused, args, words):
    args = [a.format(photo=photo, tmp=tmp_path) for a in args]
    refused(args, *words, folder=tmp_path)
