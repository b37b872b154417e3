"""Bad-input sweep: every reader and command, hostile files -> one line naming the file, exit 2, nothing written."""

import numpy as np
import pytest
from typer.testing import CliRunner

from segensemble.cli import app
from segensemble.io import write_image, write_labels

runner = CliRunner()


def _png_bytes():
    import cv2

    return cv2.imencode(".png", np.zeros((8, 8, 3), np.uint8))[1].tobytes()


def _jpg_bytes():
    import cv2

    return cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))[1].tobytes()


def _npy(arr) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=arr.dtype == object)
    return buf.getvalue()


BAD_IMAGES = {
    "empty.png": b"",
    "truncated.png": _png_bytes()[:40],
    "truncated.jpg": _jpg_bytes()[:30],
    "garbage.jpg": b"\xff\xd8\xff\xe0 not really a jpeg",
    "text.png": b"hello",
}
BAD_LABELS = {
    "empty.npy": b"",
    "truncated.npy": _npy(np.zeros((4, 4), np.int32))[:60],
    "pickled.npy": _npy(np.array([{"a": 1}], dtype=object)),
    "nan.npy": _npy(np.array([[0.0, np.nan], [1.0, 1.0]])),
    "negative.npy": _npy(np.array([[0, -1], [1, 1]])),
    "fraction.npy": _npy(np.array([[0.5, 1.0], [1.0, 1.0]])),
    "huge.npy": _npy(np.array([[0, 2**40], [1, 1]], dtype=np.int64)),
    "zero.npy": _npy(np.zeros((0, 0), np.int32)),
    "corrupt.mat": b"MATLAB 5.0 MAT-file garbage" + bytes(200),
    "truncated.png": _png_bytes()[:40],
}


def _expect_bad(args, must_name, out_files):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, (args, result.output)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert must_name in lines[0], (must_name, lines[0])
    assert "Traceback" not in result.output
    for f in out_files:
        assert not f.exists(), f


@pytest.mark.parametrize("name", sorted(BAD_IMAGES))
@pytest.mark.parametrize("command", ["segment", "fuse"])
def test_bad_images(tmp_path, command, name):
    folder = tmp_path / "dossier à l'été"  # unicode and spaces in the path
    folder.mkdir()
    bad = folder / name
    bad.write_bytes(BAD_IMAGES[name])
    out = tmp_path / "out.png"
    _expect_bad([command, bad, "-o", out], name, [out])


@pytest.mark.parametrize("name", sorted(BAD_LABELS))
def test_bad_label_maps_in_fuse_and_evaluate(tmp_path, name):
    folder = tmp_path / "résultats 1"
    folder.mkdir()
    bad = folder / name
    bad.write_bytes(BAD_LABELS[name])
    good = write_labels(tmp_path / "good.png", np.zeros((2, 2), int))
    out = tmp_path / "fused.png"
    _expect_bad(["fuse", "--inputs", good, bad, "-o", out], name, [out])
    from segensemble.datasets.synthetic import _ground_truth_mat

    gt = tmp_path / "gt.mat"
    gt.write_bytes(_ground_truth_mat([np.ones((2, 2), int)]))
    _expect_bad(["evaluate", bad, "--gt", gt], name, [])


def test_ground_truth_without_annotations_and_corrupt(tmp_path):
    import scipy.io

    seg = write_labels(tmp_path / "seg.png", np.zeros((4, 4), int))
    empty = tmp_path / "empty gt.mat"
    scipy.io.savemat(empty, {"groundTruth": np.empty((1, 0), dtype=object)})
    _expect_bad(["evaluate", seg, "--gt", empty], "empty gt.mat", [])
    corrupt = tmp_path / "corrupt.mat"
    corrupt.write_bytes(b"\x00" * 300)
    _expect_bad(["evaluate", seg, "--gt", corrupt], "corrupt.mat", [])


def test_segmentations_of_different_shapes(tmp_path):
    a = write_labels(tmp_path / "a.png", np.zeros((5, 6), int))
    b = write_labels(tmp_path / "b.npy", np.zeros((6, 5), int))
    out = tmp_path / "out.png"
    _expect_bad(["fuse", "--inputs", a, b, "-o", out], "b.npy", [out])


def test_score_folder_with_stray_and_corrupt_files(tmp_path):
    from segensemble.datasets import make_synthetic_dataset

    root = make_synthetic_dataset(tmp_path / "ds", n_images=2, shape=(20, 30))
    gt_dir = root / "data" / "groundTruth" / "test"
    res = tmp_path / "res"
    res.mkdir()
    (res / "notes.txt").write_text("stray file")  # ignored: not a result type
    (res / ".DS_Store").write_bytes(b"\x00\x01")
    ids = sorted(p.stem for p in gt_dir.glob("*.mat"))
    write_labels(res / f"{ids[0]}.png", np.zeros((20, 30), int))
    (res / f"{ids[1]}.png").write_bytes(b"broken")
    result = runner.invoke(app, ["score", str(res), "--gt", str(gt_dir), "--out", str(tmp_path / "eval")])
    assert result.exit_code == 1  # a runtime failure of one image: reported, the other image scored
    assert f"{ids[1]}.png" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("shape", [(1, 1), (1, 40), (40, 1), (2, 2)])
def test_tiny_and_thin_images_work_or_fail_cleanly(tmp_path, shape):
    img = write_image(tmp_path / "tiny.png", np.random.default_rng(0).random(shape + (3,)))
    out = tmp_path / "fused.png"
    result = runner.invoke(app, ["fuse", str(img), "-o", str(out)])
    assert result.exit_code in (0, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 0:
        from segensemble.io import read_labels

        assert read_labels(out).shape == shape
    else:
        assert not out.exists() and len([ln for ln in result.stderr.splitlines() if ln.strip()]) == 1


def test_pickle_payload_is_never_executed(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    p = tmp_path / "evil.npy"
    p.write_bytes(_pickle_npy(Evil()))  # loading it with pickles allowed would create the marker file
    out = tmp_path / "out.png"
    _expect_bad(["fuse", "--inputs", p, p, "-o", out], "evil.npy", [out])
    assert not marker.exists()


def _pickle_npy(obj) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, np.array([obj], dtype=object), allow_pickle=True)
    return buf.getvalue()


def test_images_above_the_pixel_limit_are_refused_up_front_or_downscaled(tmp_path):
    from segensemble.io import read_labels

    img = write_image(tmp_path / "wide.png", np.random.default_rng(1).random((40, 60, 3)))
    out = tmp_path / "out.png"
    for command in ("fuse", "segment"):
        _expect_bad([command, img, "-o", out, "--max-pixels", "1000"], "above the limit", [out])
    result = runner.invoke(app, ["fuse", str(img), "-o", str(out), "--max-pixels", "1000", "--downscale"])
    assert result.exit_code == 0, result.output
    assert "downscaled from 60x40" in result.stderr and read_labels(out).shape == (40, 60)
    result = runner.invoke(app, ["segment", str(img), "-o", str(out), "--max-pixels", "1000", "--downscale",
                                 "-m", "slic"])
    assert result.exit_code == 0 and read_labels(out).shape == (40, 60)


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    result = runner.invoke(app, ["bench", "--synthetic", "--limit", "2", "--out", str(out), "--no-hierarchy"])
    assert result.exit_code == 0, result.output
    return out


def _first(folder):
    return sorted(folder.iterdir())[0]


REPORT_DAMAGE = {
    "summary-garbage": lambda d: ((d / "summary.json").write_text("{garbage"), d / "summary.json")[1],
    "summary-not-an-object": lambda d: ((d / "summary.json").write_text("[1, 2]"), d / "summary.json")[1],
    "record-truncated": lambda d: (lambda p: (p.write_text(p.read_text()[:50]), p)[1])(_first(d / "per_image")),
    "record-without-scores": lambda d: (lambda p: (p.write_text('{"fused": 1, "members": {}}'), p)[1])(
        _first(d / "per_image")),
    "fused-png-corrupt": lambda d: (lambda p: (p.write_bytes(b"nope"), p)[1])(_first(d / "fused")),
    "members-mat-corrupt": lambda d: (lambda p: (p.write_bytes(b"MATLAB 5.0" + bytes(50)), p)[1])(
        _first(d / "members")),
}


@pytest.mark.parametrize("damage", sorted(REPORT_DAMAGE))
def test_report_on_a_damaged_bench_folder(tmp_path, bench_dir, damage):
    import shutil

    d = tmp_path / "b"
    shutil.copytree(bench_dir, d)
    broken = REPORT_DAMAGE[damage](d)
    _expect_bad(["report", d], broken.name, [d / "report.html"])


def test_bench_resume_recomputes_a_record_that_is_not_an_object(tmp_path, bench_dir):
    import json
    import shutil

    d = tmp_path / "b"
    shutil.copytree(bench_dir, d)
    p = _first(d / "per_image")
    p.write_text("[1, 2]")
    result = runner.invoke(app, ["bench", "--synthetic", "--limit", "2", "--out", str(d), "--no-hierarchy"])
    assert result.exit_code == 0, result.output
    assert json.loads(p.read_text())["id"] == p.stem


def _archives(tmp_path):
    import io
    import tarfile
    import zipfile

    member = "BSR/BSDS500/data/images/test/1.jpg"
    payload = _jpg_bytes() * 50
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w:gz") as t:
        info = tarfile.TarInfo(member)
        info.size = len(payload)
        t.addfile(info, io.BytesIO(payload))
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(member, payload)
    crc = bytearray(zbuf.getvalue())
    crc[len(member) + 40] ^= 0xFF  # a byte of the compressed data: CRC / inflate error on reading
    return {
        "garbage.tar.gz": b"garbage",
        "random.zip": np.random.default_rng(0).bytes(3000),
        "truncated.tgz": tar.getvalue()[: len(tar.getvalue()) // 2],
        "damaged.zip": bytes(crc),
    }


@pytest.mark.parametrize("name", ["garbage.tar.gz", "random.zip", "truncated.tgz", "damaged.zip"])
def test_fetch_refuses_corrupt_local_archives(tmp_path, name):
    src = tmp_path / name
    src.write_bytes(_archives(tmp_path)[name])
    dest = tmp_path / "dest"
    _expect_bad(["datasets", "fetch", "bsds500", "--dest", dest, "--url", src.as_uri()], src.as_uri(), [])
    assert not dest.exists() or not list(dest.iterdir())  # no data, no staging folder left


def test_bench_applies_the_pixel_limit_per_image(tmp_path):
    import json

    from segensemble.io import read_labels, read_segmentations

    refused = runner.invoke(app, ["bench", "--synthetic", "--limit", "1", "--out", str(tmp_path / "a"),
                                  "--max-pixels", "1000"])
    assert refused.exit_code == 1 and "above the limit of 1,000" in refused.stderr  # a failed image, named
    assert not (tmp_path / "a" / "fused").exists()
    d = tmp_path / "b"
    ok = runner.invoke(app, ["bench", "--synthetic", "--limit", "1", "--out", str(d), "--max-pixels", "1000",
                             "--downscale"])
    assert ok.exit_code == 0, ok.output
    assert "1 image(s) above --max-pixels 1000 were segmented downscaled" in ok.stderr
    rec = json.loads(next((d / "per_image").iterdir()).read_text())
    shape = tuple(rec["downscaled_from"])
    assert read_labels(next((d / "fused").iterdir())).shape == shape  # scored at the ground truth's size
    assert all(s.shape == shape for s in read_segmentations(next((d / "segs").iterdir())))
    assert all(s.shape == shape for s in read_segmentations(next((d / "members").iterdir())))


@pytest.mark.parametrize("name, content", [
    ("bad.toml", b"name = [unclosed"),
    ("bad.json", b"\xff\xfe\x00garbage"),
    ("list.json", b"[1, 2]"),
    ("bad.yaml", b"name: [unclosed"),
])
def test_corrupt_recipe_files_in_every_command_that_reads_one(tmp_path, name, content):
    recipe = tmp_path / name
    recipe.write_bytes(content)
    out = tmp_path / "out"
    _expect_bad(["recipes", recipe], name, [])
    _expect_bad(["bench", "--synthetic", "--recipe", recipe, "--out", out], name, [out])
    img = write_image(tmp_path / "i.png", np.random.default_rng(0).random((20, 30, 3)))
    _expect_bad(["fuse", img, "--recipe", recipe, "-o", tmp_path / "f.png"], name, [tmp_path / "f.png"])


def test_a_float_image_beyond_zero_one_is_refused_and_an_overshoot_is_clipped():
    """A float copy of an 8-bit picture (values 0..255, ``img.astype(float)``) was clipped to [0, 1] — nearly
    white — and fused into one region without a word; it is refused with one line that says what to do. Values
    within FLOAT_SLACK of [0, 1] (a resampling's overshoot) are clipped as before."""
    from segensemble import InputError
    from segensemble.pipeline.runner import run_recipe, segment_image
    from segensemble.segmenters.slic import slic
    from segensemble.validation import FLOAT_SLACK, check_image

    img = np.random.default_rng(0).random((24, 32, 3))
    wanted = r"^image: expected float values in \[0, 1\], got values from 0\.0\d* to 254\.\d*; divide an 8-bit"
    for call in (lambda a: run_recipe(a, rng=0), lambda a: segment_image(a, "felzenszwalb"), slic, check_image):
        with pytest.raises(InputError, match=wanted):
            call(img * 255)
    for lo, hi in ((-FLOAT_SLACK, 1.0), (0.0, 1.0 + FLOAT_SLACK)):
        ringing = lo + img * (hi - lo)
        np.testing.assert_array_equal(check_image(ringing), np.clip(ringing, 0.0, 1.0))
    for beyond in (-FLOAT_SLACK - 0.01, 1.0 + FLOAT_SLACK + 0.01):
        with pytest.raises(InputError, match=r"^image: expected float values in \[0, 1\]"):
            check_image(np.where(img > 0.5, beyond, img))
