"""Photos as users have them: the working scale, full-resolution labels, EXIF orientation, HEIC, many photos."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from PIL import Image, ImageOps
from typer.testing import CliRunner

from segensemble.cli import app
from segensemble.errors import InputError
from segensemble.io import apply_orientation, decode_image, image_shape, read_image, read_labels, write_image
from segensemble.pipeline.recipes import Recipe, load_recipe
from segensemble.pipeline.runner import run_recipe
from segensemble.pipeline.workscale import upsample_labels, working_image, working_shape

runner = CliRunner()
#: A cheap recipe with a working scale, for CLI and library round trips.
SMALL = Recipe("small", "1", ("felzenszwalb:scale=100", "felzenszwalb:scale=300"), "eac", 3, working_pixels=2048)


def _blocks(h=96, w=128) -> np.ndarray:
    """Three flat colour blocks (uint8) with a vertical and a horizontal boundary off the working grid."""
    img = np.zeros((h, w, 3), np.uint8)
    img[:, :] = (200, 40, 40)
    img[:, 45:] = (40, 180, 60)
    img[61:, 45:] = (30, 40, 200)
    return img


def _edges(labels):
    e = np.zeros(labels.shape, bool)
    e[:, 1:] |= labels[:, 1:] != labels[:, :-1]
    e[1:] |= labels[1:] != labels[:-1]
    return e


# ------------------------------------------------------------------------------------------------- working scale


def test_working_shape_keeps_the_aspect_ratio_and_leaves_small_images_alone():
    assert working_shape((321, 481), 154_401) is None and working_shape((481, 321), 154_401) is None
    assert working_shape((1284, 1924), 154_401) == (321, 481)  # a BSDS image x4 comes back to its own size
    h, w = working_shape((3000, 4000), 154_401)
    assert h * w <= 154_401 and abs(w / h - 4 / 3) < 0.01


def test_upsampled_labels_follow_the_full_resolution_edges():
    """Hand-made: the working grid (8 x) puts the boundaries 5 and 3 full pixels off; refined, they sit on the edges."""
    full = _blocks(96, 128)
    small = working_image(full, (12, 16))
    truth = np.zeros((96, 128), np.int32)
    truth[:, 45:] = 1
    truth[61:, 45:] = 2
    coarse = np.zeros((12, 16), np.int32)
    coarse[:, 6:] = 1  # column 6 of 16 = full column 48: 3 px right of the true edge
    coarse[8:, 6:] = 2  # row 8 of 12 = full row 64: 3 px below it
    labels = upsample_labels(coarse, small, full)
    assert labels.shape == (96, 128) and labels.dtype == np.int32
    assert np.mean(labels == truth) == 1.0


def test_upsampling_only_moves_pixels_near_a_boundary_and_only_to_a_neighbouring_label():
    """A pixel's vote picks a label of its 3 x 3 working neighbourhood; a fragment then takes the label of a pixel
    beside it, which one of that pixel's: every label stays within the 5 x 5 working neighbourhood."""
    rng = np.random.default_rng(3)
    coarse = rng.integers(0, 3, (10, 14)).astype(np.int32)
    coarse[:, :4] = 7
    full = (rng.random((80, 112, 3)) * 255).astype(np.uint8)
    labels = upsample_labels(coarse, working_image(full, (10, 14)), full)
    nearest = np.repeat(np.repeat(coarse, 8, axis=0), 8, axis=1)
    changed = labels != nearest
    assert set(np.unique(labels)) <= set(np.unique(coarse))
    assert not changed[:, :20].any()  # columns 0-2 of the working grid are one region, 3 touches another
    ys, xs = np.nonzero(changed)
    for y, x in zip(ys, xs):
        cy, cx = y // 8, x // 8
        assert labels[y, x] in coarse[max(cy - 2, 0):cy + 3, max(cx - 2, 0):cx + 3]


def _pieces(labels):
    from skimage.measure import label

    return int(label(labels, background=-1, connectivity=1).max())


def test_the_refinement_moves_boundaries_without_cutting_off_fragments():
    """Hand-made: a white speck (2 x 2 px) on the dark side, within a working pixel of the boundary, takes the
    white side's label in the vote, an island of it cut off by dark pixels. `segment -m slic` on a 640 x 427 photo
    gave 21 labels in 233 pieces, and `fuse --inputs` of two such maps 233 regions. The speck now takes the label
    around it; a region one working pixel wide (wholly in the band) is kept whole."""
    full = np.zeros((40, 40, 3), np.uint8)
    full[:, 20:] = 255
    full[10:12, 16:18] = 255  # the speck: working column 4, next to the boundary at working column 5
    coarse = np.zeros((10, 10), np.int32)
    coarse[:, 5:] = 1
    labels = upsample_labels(coarse, working_image(full, (10, 10)), full)
    assert _pieces(labels) == 2 and (labels[10:12, 16:18] == 0).all()
    assert (labels[:, :20] == 0).all() and (labels[:, 20:] == 1).all()
    full[:, 28:32] = 128  # a gray stripe one working pixel wide: its own region at working column 7
    coarse[:, 7] = 2
    labels = upsample_labels(coarse, working_image(full, (10, 10)), full)
    assert _pieces(labels) == 4 and (labels[:, 28:32] == 2).all()


def test_fragments_are_found_alike_in_any_strips_and_threads(monkeypatch):
    """The result does not depend on the strips or the threads, on a smooth picture and on noise (many fragments,
    many touching each other); on the smooth one every piece of the refined map is one of a working region."""
    from segensemble.pipeline import workscale

    for noise in (False, True):
        rng = np.random.default_rng(7)
        full = (rng.random((120, 160, 3)) * 255).astype(np.uint8) if noise else \
            cv2.resize((rng.random((30, 40, 3)) * 255).astype(np.uint8), (160, 120), interpolation=cv2.INTER_CUBIC)
        small = working_image(full, (30, 40))
        coarse = cv2.resize(rng.integers(0, 5, (10, 12)).astype(np.uint8), (40, 30), interpolation=cv2.INTER_NEAREST)
        coarse = coarse.astype(np.int32)
        monkeypatch.setattr(workscale, "_STRIP_PIXELS", 4_000_000)
        one = upsample_labels(coarse, small, full)
        if not noise:
            assert _pieces(one) <= _pieces(coarse)
        monkeypatch.setattr(workscale, "_STRIP_PIXELS", 160 * 7)  # strips of 7 rows, narrower than the halo
        assert np.array_equal(upsample_labels(coarse, small, full), one)
        assert np.array_equal(upsample_labels(coarse, small, full, n_jobs=3), one)


def test_threads_refine_the_same_labels_as_one(monkeypatch):
    """Strips refined in threads (smaller strips, several chunks each) give the one-thread labels bit for bit."""
    from segensemble.pipeline import workscale

    rng = np.random.default_rng(5)
    full = cv2.resize((rng.random((30, 40, 3)) * 255).astype(np.uint8), (403, 301), interpolation=cv2.INTER_CUBIC)
    small = working_image(full, (30, 40))
    coarse = cv2.resize(rng.integers(0, 6, (6, 8)).astype(np.uint8), (40, 30), interpolation=cv2.INTER_NEAREST)
    one = upsample_labels(coarse.astype(np.int32), small, full)
    monkeypatch.setattr(workscale, "_STRIP_PIXELS", 403 * 50)  # 7 strips on one thread; smaller ones on three
    monkeypatch.setattr(workscale, "_CHUNK", 999)
    assert np.array_equal(upsample_labels(coarse.astype(np.int32), small, full), one)
    assert np.array_equal(upsample_labels(coarse.astype(np.int32), small, full, n_jobs=3), one)
    assert np.array_equal(upsample_labels(coarse.astype(np.int32), small, full, n_jobs=-1), one)
    with pytest.raises(InputError, match="n_jobs: expected a positive int or -1"):
        upsample_labels(coarse, small, full, n_jobs=0)


def test_the_compiled_vote_sums_are_einsums_by_hand_and_bit_for_bit():
    """``label_sums``: per candidate, the weights and weighted colours of the candidates with its label; the colour
    sums equal NumPy's einsum over the (n, 9, 9) label-equality table bit for bit, the support the same terms
    added in candidate order."""
    from segensemble.pipeline._vote_sums import label_sums

    cand = np.array([[4, 7, 4]], np.int32)
    ws = np.array([[0.5, 0.25, 1.0]], np.float32)
    col = np.array([[[2, 0, 0], [8, 0, 4], [1, 1, 0]]], np.float32)
    support, sums = label_sums(cand, ws, col)
    assert support.tolist() == [[1.5, 0.25, 1.5]]
    assert sums.tolist() == [[[2.0, 1.0, 0.0], [2.0, 0.0, 1.0], [2.0, 1.0, 0.0]]]
    rng = np.random.default_rng(11)
    cand = rng.integers(0, 3, (5000, 9)).astype(np.int32)
    ws = rng.random((5000, 9), dtype=np.float32)
    col = (rng.random((5000, 9, 3), dtype=np.float32) * 200 - 100).astype(np.float32)
    same = (cand[:, :, None] == cand[:, None, :]).astype(np.float32)
    support, sums = label_sums(cand, ws, col)
    assert np.array_equal(sums.view(np.uint32), np.einsum("njk,nk,nkc->njc", same, ws, col).view(np.uint32))
    in_order = np.zeros((5000, 9), np.float32)
    for k in range(9):
        in_order += same[:, :, k] * ws[:, None, k]
    assert np.array_equal(support, in_order)
    with pytest.raises(ValueError, match="must agree"):
        label_sums(cand, ws[:, :8].copy(), col)


def test_run_recipe_at_a_working_scale_answers_at_full_resolution():
    img = _blocks(120, 160)
    result = run_recipe(img, SMALL, hierarchy=True, confidence="auto")
    assert result.labels.shape == (120, 160) and result.downscaled_from == (120, 160)
    assert result.image.shape[0] * result.image.shape[1] <= 2048
    assert result.processed_labels.shape == result.image.shape[:2]
    assert all(level.shape == (120, 160) for level in result.levels)
    assert result.confidence.shape == (120, 160)
    truth = np.zeros((120, 160), np.int32)
    truth[:, 45:] = 1
    truth[61:, 45:] = 2
    from scipy import ndimage

    assert len(np.unique(result.labels)) == 3
    off = ndimage.distance_transform_edt(~_edges(truth))[_edges(result.labels)]
    assert np.mean(off <= 2) >= 0.95  # the working grid is 3.1 full pixels wide


def test_images_at_or_below_the_working_scale_run_as_without_one():
    img = _blocks(40, 50)  # 2 000 pixels <= 2 048
    a = run_recipe(img, SMALL, hierarchy=True)
    b = run_recipe(img, SMALL, working_pixels=None, hierarchy=True)
    assert a.downscaled_from is None and np.array_equal(a.labels, b.labels)
    assert all(np.array_equal(x, y) for x, y in zip(a.levels, b.levels))


def test_default_recipe_six_is_five_with_a_working_scale():
    v5, v6 = load_recipe("default@5"), load_recipe("default@6")
    assert v5.working_pixels is None and v6.working_pixels == 154_401
    assert {k: v for k, v in v5.to_dict().items() if k not in ("version", "description", "working_pixels")} == \
        {k: v for k, v in v6.to_dict().items() if k not in ("version", "description", "working_pixels")}
    assert load_recipe("default").working_pixels == v6.working_pixels
    assert load_recipe("seed").working_pixels == load_recipe("classic").working_pixels == 154_401


def test_recipe_files_take_a_working_scale_and_refuse_a_bad_one(tmp_path):

    p = tmp_path / "r.toml"
    p.write_text('name = "r"\nsegmenters = ["slic"]\nmethod = "vote"\nworking_pixels = 50000\n')
    assert load_recipe(p).working_pixels == 50_000
    p.write_text('name = "r"\nsegmenters = ["slic"]\nmethod = "vote"\nworking_pixels = 10\n')
    with pytest.raises(InputError, match="working_pixels"):
        load_recipe(p)


# ------------------------------------------------------------------------------------------------- orientation


def _tagged(path, rgb: np.ndarray, orientation: int, **save):
    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.fromarray(rgb).save(path, exif=exif.tobytes(), **save)
    return path


# The stored grid that a viewer turns into the upright photo, for each EXIF orientation.
_STORED = {1: lambda a: a, 2: lambda a: a[:, ::-1], 3: lambda a: a[::-1, ::-1], 4: lambda a: a[::-1],
           5: lambda a: a.swapaxes(0, 1), 6: lambda a: np.rot90(a, 1), 7: lambda a: a[::-1, ::-1].swapaxes(0, 1),
           8: lambda a: np.rot90(a, -1)}


@pytest.mark.parametrize("orientation", range(1, 9))
def test_apply_orientation_agrees_with_pillow(tmp_path, orientation):
    rgb = (np.random.default_rng(orientation).random((5, 7, 3)) * 255).astype(np.uint8)
    p = _tagged(tmp_path / "t.png", rgb, orientation)
    expected = np.asarray(ImageOps.exif_transpose(Image.open(p)))
    assert np.array_equal(apply_orientation(rgb, orientation), expected)
    assert np.array_equal(decode_image(p), expected) and image_shape(p) == expected.shape[:2]
    assert np.array_equal(decode_image(p, orient=False), rgb)


@pytest.mark.parametrize("orientation", range(1, 9))
def test_a_tagged_photo_is_fused_as_displayed(tmp_path, orientation):
    upright = _blocks(72, 100)
    stored = np.ascontiguousarray(_STORED[orientation](upright))
    assert np.array_equal(apply_orientation(stored, orientation), upright)
    tagged = _tagged(tmp_path / "tagged.png", stored, orientation)
    plain = tmp_path / "upright.png"
    Image.fromarray(upright).save(plain)
    assert np.array_equal(read_image(tagged), read_image(plain))
    a = run_recipe(tagged, SMALL).labels
    b = run_recipe(plain, SMALL).labels
    assert a.shape == (72, 100) and np.array_equal(a, b)  # lossless: identical labels
    jpeg_tagged = _tagged(tmp_path / "tagged.jpg", stored, orientation, quality=95)
    jpeg_plain = tmp_path / "upright.jpg"
    Image.fromarray(upright).save(jpeg_plain, quality=95)
    assert run_recipe(jpeg_tagged, SMALL).labels.shape == (72, 100)
    # lossy: the decoded photo is the upright one up to compression (the segmentation of such a tiny image can
    # change with compression noise, so it is compared on the lossless files above)
    diff = np.abs(read_image(jpeg_tagged) - read_image(jpeg_plain))
    assert diff.mean() < 2 / 255 and np.percentile(diff, 99) < 16 / 255


def test_cli_applies_orientation_unless_told_not_to(tmp_path):
    tagged = _tagged(tmp_path / "p.jpg", np.ascontiguousarray(np.rot90(_blocks(60, 90), 1)), 6, quality=95)
    out, raw = tmp_path / "o.png", tmp_path / "raw.png"
    r = runner.invoke(app, ["segment", str(tagged), "-o", str(out), "-m", "felzenszwalb"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["segment", str(tagged), "-o", str(raw), "-m", "felzenszwalb", "--ignore-orientation"])
    assert r.exit_code == 0, r.output
    assert read_labels(out).shape == (60, 90) and read_labels(raw).shape == (90, 60)
    one = tmp_path / "one.png"  # refined in one thread or several: the same labels
    r = runner.invoke(app, ["segment", str(tagged), "-o", str(one), "-m", "felzenszwalb", "--working-pixels", "2048",
                            "-j", "1"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["segment", str(tagged), "-o", str(out), "-m", "felzenszwalb", "--working-pixels", "2048"])
    assert r.exit_code == 0 and "labels refined at 90x60" in r.stderr, r.output
    assert np.array_equal(read_labels(one), read_labels(out))


def test_heic_photos_are_read(tmp_path):
    import pillow_heif

    pillow_heif.register_heif_opener()
    rgb = _blocks(64, 80)
    p = tmp_path / "phone.heic"
    Image.fromarray(rgb).save(p, quality=95)
    assert image_shape(p) == (64, 80)
    img = decode_image(p)
    assert img.shape == (64, 80, 3) and np.abs(img.astype(int) - rgb).mean() < 4
    out = tmp_path / "o.png"
    r = runner.invoke(app, ["fuse", str(p), "-o", str(out), "-r", "classic", "-k", "3"])
    assert r.exit_code == 0, r.output
    assert read_labels(out).shape == (64, 80)


# ------------------------------------------------------------------------------------------------- many photos


def _folder(tmp_path):
    d = tmp_path / "photos"
    d.mkdir()
    big = np.repeat(np.repeat(_blocks(60, 80), 3, axis=0), 3, axis=1)
    write_image(d / "a.jpg", _blocks(60, 80))
    write_image(d / "b.png", big)
    gray = np.asarray(Image.fromarray(_blocks(50, 70)).convert("L"))
    Image.fromarray(gray).save(d / "gray.png")
    rgba = np.dstack([_blocks(50, 70), np.full((50, 70), 128, np.uint8)])
    Image.fromarray(rgba).save(d / "alpha.png")
    (d / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a jpeg")
    (d / "notes.txt").write_text("not an image")
    return d


def test_fuse_a_folder_resumes_lists_failures_and_matches_one_by_one(tmp_path):
    d = _folder(tmp_path)
    out = tmp_path / "out"
    args = ["fuse", str(d), "--out-dir", str(out), "-r", "classic", "-k", "3", "--overlay", str(out / "ov"), "-j", "1"]
    r = runner.invoke(app, args)
    assert r.exit_code == 1, r.output
    assert "failed: broken:" in r.stderr and "broken.jpg" in r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["images"] == 5 and summary["fused"] == 4 and list(summary["failures"]) == ["broken"]
    assert sorted(p.name for p in out.glob("*.png")) == ["a.png", "alpha.png", "b.png", "gray.png"]
    assert sorted(p.name for p in (out / "ov").iterdir()) == ["a.jpg", "alpha.jpg", "b.jpg", "gray.jpg"]
    before = {p.name: p.read_bytes() for p in out.glob("*.png")}
    r = runner.invoke(app, args)
    assert r.exit_code == 1 and "0 fused, 4 unchanged (skipped), 1 failed" in r.stderr
    for name in ("a", "b", "gray", "alpha"):
        src = next(d.glob(f"{name}.*"))
        one = tmp_path / f"one-{name}.png"
        r = runner.invoke(app, ["fuse", str(src), "-o", str(one), "-r", "classic", "-k", "3"])
        assert r.exit_code == 0, r.output
        assert one.read_bytes() == before[f"{name}.png"]
    (d / "a.jpg").write_bytes((d / "b.png").read_bytes())  # an input changed: that image is fused again
    r = runner.invoke(app, args)
    assert "1 fused, 3 unchanged" in r.stderr


def test_fuse_many_files_in_worker_processes(tmp_path):
    d = _folder(tmp_path)
    (d / "broken.jpg").unlink()
    out = tmp_path / "out"
    r = runner.invoke(app, ["fuse", str(d / "a.jpg"), str(d / "gray.png"), "--out-dir", str(out), "-r", "classic",
                            "-j", "2"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.glob("*.png")) == ["a.png", "gray.png"]


@pytest.mark.parametrize("extra, message", [
    (["-o", "x.png"], "--output"),
    (["--inputs"], "--inputs"),
    (["--overlay", "ov.jpg"], "--overlay"),
    (["--explain"], "--explain"),
])
def test_options_that_do_not_apply_to_many_images_are_refused(tmp_path, extra, message):
    d = _folder(tmp_path)
    r = runner.invoke(app, ["fuse", str(d), "--out-dir", str(tmp_path / "out"), *extra])
    assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_images_sharing_a_stem_are_named_by_file_name_and_one_name_twice_is_refused(tmp_path):
    d, out = _folder(tmp_path), tmp_path / "out"
    write_image(d / "a.png", _blocks(20, 20))  # beside a.jpg, as a phone exports IMG.HEIC and IMG.JPG
    r = runner.invoke(app, ["fuse", str(d), str(d / "b.png"), "--out-dir", str(out)])
    summary = json.loads((out / "summary.json").read_text())
    assert r.exit_code == 1 and list(summary["failures"]) == ["broken"], r.output  # the folder's broken.jpg
    assert read_labels(out / "a.png.png").shape == (20, 20) and (out / "a.jpg.png").exists()  # a.jpg: 60 x 80
    write_image(tmp_path / "a.png", _blocks(20, 20))  # a.png of the folder, in another one
    r = runner.invoke(app, ["fuse", str(d), str(tmp_path / "a.png"), "--out-dir", str(tmp_path / "o2")])
    assert r.exit_code == 2 and "would both write a.png.png; rename one" in r.stderr, r.output


def test_one_image_fuse_draws_its_boundaries_at_full_size(tmp_path):
    p = tmp_path / "p.png"
    write_image(p, _blocks(70, 90))
    out, ov = tmp_path / "o.png", tmp_path / "o.jpg"
    r = runner.invoke(app, ["fuse", str(p), "-o", str(out), "--overlay", str(ov), "-r", "classic", "-k", "3",
                            "--working-pixels", "2048"])
    assert r.exit_code == 0, r.output
    assert "labels refined at 90x70" in r.stderr
    assert read_labels(out).shape == (70, 90) and read_image(ov).shape == (70, 90, 3)
    r = runner.invoke(app, ["fuse", str(p), "-o", str(p), "-r", "classic"])
    assert r.exit_code == 2 and "--output" in r.stderr


def test_a_truncated_photo_is_one_line_and_writes_nothing(tmp_path):
    p = tmp_path / "cut.jpg"
    Image.fromarray(_blocks(200, 300)).save(p, quality=90)
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    out, ov = tmp_path / "o.png", tmp_path / "o.jpg"
    r = runner.invoke(app, ["fuse", str(p), "-o", str(out), "--overlay", str(ov), "-r", "classic"])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and "cut.jpg" in r.stderr
    assert not out.exists() and not ov.exists() and sorted(x.name for x in tmp_path.iterdir()) == ["cut.jpg"]


@pytest.mark.parametrize("kind", ["cmyk.jpg", "16bit.png", "16bit.tif", "photo.webp"])
def test_other_ways_photos_are_stored_still_read(tmp_path, kind):
    import cv2

    rgb = _blocks(40, 60)
    p = tmp_path / kind
    if kind == "cmyk.jpg":
        Image.fromarray(rgb).convert("CMYK").save(p, quality=95)
    elif kind.startswith("16bit"):
        cv2.imwrite(str(p), (rgb.astype(np.uint16) * 257)[:, :, ::-1])
    else:
        Image.fromarray(rgb).save(p, quality=95)
    assert np.abs(read_image(p) - rgb / 255).mean() < 0.02


def test_default_six_is_default_five_byte_for_byte_on_a_bsds_image(bsds_root):
    from segensemble.datasets import BSDS500

    ds = BSDS500(bsds_root)
    path = ds.image_path("val", ds.ids("val")[0])
    a = run_recipe(path, "default@5", hierarchy=True, confidence="auto")
    b = run_recipe(path, "default@6", hierarchy=True, confidence="auto")
    assert b.downscaled_from is None and a.labels.tobytes() == b.labels.tobytes()
    assert all(x.tobytes() == y.tobytes() for x, y in zip(a.levels, b.levels))
    assert a.confidence.tobytes() == b.confidence.tobytes()


def test_a_map_brought_to_full_resolution_is_thinned_to_one_pixel_lines():
    """A working-scale map of a circle's rim and a straight ridge, brought to 7 times the size: the thinned map
    is one pixel wide along both (thinning the upsampled map as a native one keeps bands several pixels wide)."""
    from segensemble.boundarymaps import thin_boundaries
    from segensemble.evaluation.nms import non_maximum_suppression
    from segensemble.pipeline.workscale import thin_upsampled_map, upsample_map

    yy, xx = np.mgrid[0:60, 0:80].astype(np.float64)
    rim = np.exp(-((np.hypot(yy - 30, xx - 30) - 18) ** 2) / 2)  # a soft ring of radius 18
    ridge = np.exp(-((xx - 62) ** 2) / 2) * (yy > 5) * (yy < 55)  # a vertical ridge at x = 62
    p = np.maximum(rim, ridge)
    shape = (420, 560)
    thin = thin_upsampled_map(p, shape)
    assert thin.shape == shape and np.array_equal(thin_boundaries(thin > 0), thin > 0)  # lines one pixel wide
    rows = thin[80:300, 400:480] > 0  # the ridge: one pixel per row, at full pixel 7 * 62 + 3 within 2
    assert all(np.count_nonzero(r) == 1 for r in rows) and np.all(np.abs(np.nonzero(rows)[1] + 400 - 437) <= 2)
    strong = np.nonzero(thin[:, :400] > 0.1)  # the rim's pixels (the Gaussian's far tails leave tiny maxima)
    ring = np.hypot(strong[0] - 213, strong[1] - 213)  # working pixel 30's centre is full pixel 7 * 30 + 3
    assert np.all(np.abs(ring - 126) <= 4) and ring.size > 0.9 * 2 * np.pi * 126  # on the rim, radius 7 * 18
    native = non_maximum_suppression(upsample_map(p, shape))  # the native protocol on the upsampled map: the ring
    assert np.count_nonzero(native[:, :400] > 0.1) > 2 * ring.size  # comes out in bands, not lines


def test_thinning_a_map_brought_to_full_resolution_refuses_a_smaller_shape_and_a_bad_map():
    from segensemble.pipeline.workscale import thin_upsampled_map

    with pytest.raises(InputError, match=r"shape: expected at least the map's \(6, 8\), got \(5, 16\)"):
        thin_upsampled_map(np.zeros((6, 8)), (5, 16))
    with pytest.raises(InputError, match="probability"):
        thin_upsampled_map(np.full((6, 8), np.nan), (12, 16))
