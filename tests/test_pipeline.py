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


def test_regions_that_vanish_at_full_resolution_leave_no_gap_and_segment_counts_what_it_writes(tmp_path):
    """A region a working pixel wide can lose every full-resolution pixel to its neighbours: the labels left are
    renumbered 0..k-1 in their order, and ``segment`` prints k (it printed the working scale's count)."""
    from typer.testing import CliRunner

    from segensemble.cli import app
    from segensemble.io import read_labels, write_image
    from segensemble.pipeline.imagesize import to_input_size
    from segensemble.pipeline.workscale import upsample_labels, working_image, working_shape

    guide = np.zeros((16, 16), np.uint8)
    guide[:, 12:] = 255
    small = working_image(guide, (8, 8))
    lab = np.zeros((8, 8), int)
    lab[:, 6:] = 2
    lab[3, 2] = 1  # one working pixel inside region 0: refined away
    refined = upsample_labels(lab, small, guide)
    assert sorted(np.unique(refined).tolist()) == [0, 2]
    assert np.array_equal(to_input_size(lab, small, guide, (16, 16)), np.where(refined == 2, 1, refined))

    noise = (np.random.default_rng(0).random((96, 128, 3)) * 255).astype(np.uint8)
    write_image(tmp_path / "noise.png", noise)
    args = ["segment", str(tmp_path / "noise.png"), "-m", "felzenszwalb", "-p", "scale=1", "-p", "min_size=1",
            "-p", "sigma=0", "--working-pixels", "1536", "-o", str(tmp_path / "seg.png")]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    written = read_labels(tmp_path / "seg.png")
    k = len(np.unique(written))
    working = segensemble.segment(working_image(noise, working_shape((96, 128), 1536)), "felzenszwalb", scale=1,
                                  min_size=1, sigma=0)
    assert k < working.n_segments  # regions vanished: the case at hand
    assert np.unique(written).tolist() == list(range(k))
    assert f"felzenszwalb: {k} regions -> " in r.stderr, r.stderr


@pytest.mark.parametrize("method", ["merge", "vote", "sdp"])
def test_more_regions_than_atoms_asked_give_the_finest_result_with_every_method(method):
    """`fuse photo.jpg -k 100000` refused with the default method ('n_clusters: expected at most the number of
    objects (5703)', a name the command line does not have) where the image-aware methods cut at the atoms, and
    `-m sdp` solved for more than ten minutes: K is now at most the atoms for all, as the frame had it."""
    from segensemble.pipeline import run_recipe
    from segensemble.pipeline.recipes import BUILTIN

    img = np.zeros((24, 32, 3))
    img[:, 16:] = [1, 0, 0]
    img += 0.05 * np.random.default_rng(0).random(img.shape)
    result = run_recipe(img, BUILTIN["default"].with_overrides(method=method, n_segments=10**6))
    assert result.labels.shape == (24, 32) and 2 <= result.labels.max() + 1 <= result.ensemble.n_objects
