"""Shared fixtures: where the development data lives, small images."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from segensemble.threads import available_cores

# Property tests draw the same examples on every run: a CI run is never red by the luck of a draw (a solver
# near-tie on one seed in a few hundred). Set HYPOTHESIS_PROFILE=explore to draw new examples while developing.
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: Most worker processes ``pytest -n auto`` starts (pyproject.toml's addopts): one per core up to this. Several tests
#: run batches with worker processes or threads of their own and hold up to about a gigabyte.
MAX_TEST_WORKERS = 4


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per core this process may run on, at most :data:`MAX_TEST_WORKERS`."""
    return min(MAX_TEST_WORKERS, available_cores(-1))


REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SEGENSEMBLE_SHARED", REPO.parent / "shared"))
BSDS_BENCH = SHARED / "bsds-bench"
BSDS_ROOT = Path(os.environ.get("SEGENSEMBLE_BSDS_ROOT", SHARED / "bsds500" / "BSDS500"))


def _need(path: Path) -> Path:
    if path.exists():
        return path
    if os.environ.get("SEGENSEMBLE_REQUIRE_SHARED"):
        pytest.fail(f"development data not found at {path} (SEGENSEMBLE_REQUIRE_SHARED is set)")
    pytest.skip(f"development data not found at {path}")


@pytest.fixture(scope="session")
def bsds_bench() -> Path:
    """The official benchmark's inputs and expected outputs (shared/bsds-bench)."""
    return _need(BSDS_BENCH)


@pytest.fixture(scope="session")
def bsds_root() -> Path:
    """The BSDS500 development copy."""
    return _need(BSDS_ROOT)


@pytest.fixture(scope="session")
def outside_checks() -> Path:
    """Numbers other tools published (shared/outside-checks: SEISM counts, published PR curves)."""
    return _need(SHARED / "outside-checks")


@pytest.fixture
def blocks_image():
    """A 40 x 60 RGB image of four flat colour blocks, and its labels."""
    truth = np.zeros((40, 60), dtype=np.int32)
    truth[:, 30:] = 1
    truth[20:, :30] = 2
    truth[20:, 30:] = 3
    colours = np.array([[0.9, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.2, 0.9], [0.9, 0.9, 0.2]])
    return colours[truth], truth


@pytest.fixture(scope="session")
def synthetic_root(tmp_path_factory):
    """A small synthetic BSDS-layout dataset."""
    from segensemble.datasets import make_synthetic_dataset

    return make_synthetic_dataset(tmp_path_factory.mktemp("syn"), n_images=3, shape=(48, 64))
