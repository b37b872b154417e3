"""The library front end: segensemble.fuse / segment / run_segmenters."""

import numpy as np
import pytest

import segensemble
from segensemble import InputError


def test_fuse_returns_hw_labelling(blocks_image):
    image, truth = blocks_image
    segs = segensemble.run_segmenters(image, ["slic:n_segments=8,sigma=0", "felzenszwalb:scale=50,sigma=0"], rng=0)
    fused = segensemble.fuse(segs, method="eac", n_segments=4)
    assert fused.shape == truth.shape and fused.dtype == np.int32
    assert len(set(zip(fused.ravel().tolist(), truth.ravel().tolist()))) == 4


def test_fuse_accepts_plain_arrays_and_is_permutation_invariant():
    rng = np.random.default_rng(0)
    base = np.repeat(np.repeat(rng.integers(0, 4, (4, 4)), 5, 0), 5, 1)
    noisy = [np.where(rng.random(base.shape) < 0.1, rng.integers(0, 4, base.shape), base) for _ in range(5)]
    a = segensemble.fuse(noisy, n_segments=4)
    b = segensemble.fuse([rng.permutation(9)[s] for s in noisy], n_segments=4)
    assert np.array_equal(a, b)


def test_fuse_errors():
    with pytest.raises(InputError, match="at least one"):
        segensemble.fuse([])
    with pytest.raises(InputError, match="n_segments"):
        segensemble.fuse([np.zeros((2, 2), int)], n_segments=-1)
    with pytest.raises(InputError, match="consensus method"):
        segensemble.fuse([np.zeros((2, 2), int)], method="nope")


def test_run_segmenters_deterministic_per_seed():
    img = np.random.default_rng(1).random((20, 20, 3))
    a = segensemble.run_segmenters(img, ["slic", "felzenszwalb"], rng=5)
    b = segensemble.run_segmenters(img, ["slic", "felzenszwalb"], rng=5)
    assert all(np.array_equal(x.labels, y.labels) for x, y in zip(a, b))


def test_run_segmenters_in_threads_gives_the_serial_result_in_spec_order():
    """Threads start the costliest segmenter first (the registry's cost), yet results and their order are the
    serial ones: each member's seed comes from its place in the list, not from when it ran."""
    from segensemble import segmenters

    assert segmenters.cost("ucm") > segmenters.cost("felzenszwalb") == 1.0
    img = np.random.default_rng(2).random((40, 48, 3))
    specs = ["felzenszwalb:scale=50", "kmeans:n_segments=4", "slic:n_segments=12", "meanshift", "watershed"]
    serial = segensemble.run_segmenters(img, specs, rng=7)
    threaded = segensemble.run_segmenters(img, specs, rng=7, n_jobs=3)
    assert [s.name for s in threaded] == [s.name for s in serial]
    assert all(np.array_equal(x.labels, y.labels) for x, y in zip(serial, threaded))


@pytest.mark.parametrize("bad", [0, -2, 1.5, -1.0, "2", True])
def test_n_jobs_is_checked(bad):
    from segensemble.pipeline.runner import run_recipe

    img = np.zeros((8, 8, 3))
    with pytest.raises(InputError, match="n_jobs"):
        segensemble.run_segmenters(img, ["slic", "felzenszwalb"], n_jobs=bad)
    with pytest.raises(InputError, match="n_jobs"):
        run_recipe(img, "classic", n_jobs=bad)


def test_a_bad_member_is_refused_before_any_member_runs(monkeypatch):
    """Serial or threaded, a misspelt parameter of the last member stops the run before the first one starts."""
    from segensemble.pipeline import members

    ran = []
    real = members.segment
    monkeypatch.setattr(members, "segment", lambda *a, **k: ran.append(a[1]) or real(*a, **k))
    img = np.random.default_rng(0).random((16, 16, 3))
    for n_jobs in (1, 2):
        with pytest.raises(InputError, match="nope"):
            segensemble.run_segmenters(img, ["slic:n_segments=4", "felzenszwalb:nope=1"], rng=0, n_jobs=n_jobs)
    assert ran == []
