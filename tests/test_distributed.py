"""bench on a Dask distributed cluster started on loopback: same results as local; a killed worker loses nothing."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import distributed  # noqa: F401  (the [test] extra installs it: a missing one is a broken install, not a skip)

from segensemble.batch.bench import BenchConfig, run_bench  # noqa: E402
from segensemble.pipeline.recipes import BUILTIN  # noqa: E402


@pytest.fixture
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=50) as c:
        yield c


def _config():
    return BenchConfig.from_recipe(BUILTIN["classic"], hierarchy=True)


def _same_outputs(a, b):
    names = sorted(p.name for p in (a / "fused").iterdir())
    assert names == sorted(p.name for p in (b / "fused").iterdir()) and names
    for n in names:
        assert (a / "fused" / n).read_bytes() == (b / "fused" / n).read_bytes()


def test_bench_on_a_local_dask_cluster_equals_the_local_run(cluster, tmp_path):
    local = run_bench(tmp_path / "local", config=_config(), limit=4, synthetic_images=4)
    dist = run_bench(tmp_path / "dask", config=_config(), limit=4, synthetic_images=4,
                     scheduler=cluster.scheduler_address)
    assert dist["failures"] == {} and dist["table"] == local["table"]
    assert dist["hierarchy"]["region"] == local["hierarchy"]["region"]
    _same_outputs(tmp_path / "local", tmp_path / "dask")


def test_a_worker_killed_midway_loses_and_duplicates_nothing(cluster, tmp_path):
    reference = run_bench(tmp_path / "local", config=_config(), synthetic_images=8)
    out = tmp_path / "dask"
    result = {}
    runner = threading.Thread(target=lambda: result.update(run_bench(
        out, config=_config(), synthetic_images=8, scheduler=cluster.scheduler_address)))
    runner.start()
    deadline = time.time() + 120
    while time.time() < deadline and len(list((out / "per_image").glob("*.json"))) < 2:
        time.sleep(0.05)
    pids = [w.process.pid for w in cluster.workers.values() if w.process is not None]
    os.kill(pids[0], signal.SIGKILL)  # one worker dies while images are in flight
    runner.join(timeout=300)
    assert not runner.is_alive()
    assert result["failures"] == {} and result["n_images"] == 8
    assert result["table"] == reference["table"]
    _same_outputs(tmp_path / "local", out)
    assert len(list((out / "per_image").glob("*.json"))) == 8
    assert not list(out.rglob(".*.tmp"))
    assert np.isfinite(result["hierarchy"]["boundary"]["ods"]["f"])


def test_fuse_a_folder_on_a_local_dask_cluster_equals_the_local_run(cluster, tmp_path):
    from segensemble.batch.photos import fuse_files
    from segensemble.io import write_image

    photos = tmp_path / "photos"
    photos.mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        img = np.zeros((40 + 10 * i, 60, 3))
        img[:, 25:] = rng.random(3)
        write_image(photos / f"p{i}.png", img)
    local = fuse_files([photos], tmp_path / "local", recipe="classic")
    dist = fuse_files([photos], tmp_path / "dask", recipe="classic", scheduler=cluster.scheduler_address)
    assert local["failures"] == dist["failures"] == {} and dist["fused"] == 3
    for i in range(3):
        assert (tmp_path / "local" / f"p{i}.png").read_bytes() == (tmp_path / "dask" / f"p{i}.png").read_bytes()
