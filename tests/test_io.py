"""Readers and writers: round trips and clear errors naming the file."""

import numpy as np
import pytest

from segensemble import FileFormatError, InputError
from segensemble.io import (
    read_ground_truth,
    read_image,
    read_labels,
    read_segmentations,
    read_ucm2,
    write_image,
    write_labels,
    write_segmentations,
)


@pytest.mark.parametrize("top", [5, 255, 256, 65535])
def test_png_label_round_trip_8_and_16_bit(tmp_path, top):
    lab = np.arange(12 * 10).reshape(12, 10) % (top + 1)
    lab[0, 0] = top
    p = write_labels(tmp_path / "l.png", lab)
    back = read_labels(p)
    assert back.dtype == np.int32 and np.array_equal(back, lab)


def test_png_too_many_labels_refused(tmp_path):
    with pytest.raises(InputError, match="16-bit"):
        write_labels(tmp_path / "l.png", np.array([[0, 70000]]))
    assert not (tmp_path / "l.png").exists()


def test_npy_and_mat_round_trip(tmp_path):
    lab = np.random.default_rng(0).integers(0, 1000, (9, 7))
    assert np.array_equal(read_labels(write_labels(tmp_path / "l.npy", lab)), lab)
    segs = [lab, lab // 2]
    back = read_segmentations(write_segmentations(tmp_path / "s.mat", segs))
    assert all(np.array_equal(a + 1, b) for a, b in zip(segs, back))  # BSDS numbers from 1


def test_pickled_npy_refused(tmp_path):
    p = tmp_path / "evil.npy"
    np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(FileFormatError, match="evil.npy.*pickle"):
        read_labels(p)


@pytest.mark.parametrize("name, data", [("c.png", b"\x89PNG\r\n\x1a\nxxxx"), ("e.png", b""), ("c.jpg", b"\xff\xd8garbage")])
def test_corrupt_images_name_the_file(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(FileFormatError, match=name):
        read_image(p)
    with pytest.raises(FileFormatError, match=name):
        read_labels(p) if name.endswith(".png") else read_image(p)


def test_truncated_png_and_mat(tmp_path):
    p = write_labels(tmp_path / "t.png", np.arange(400).reshape(20, 20) % 7)
    p.write_bytes(p.read_bytes()[:40])
    with pytest.raises(FileFormatError, match="t.png"):
        read_labels(p)
    m = write_segmentations(tmp_path / "t.mat", [np.zeros((5, 5), int)])
    m.write_bytes(m.read_bytes()[:60])
    with pytest.raises(FileFormatError, match="t.mat"):
        read_segmentations(m)


def test_missing_file(tmp_path):
    with pytest.raises(FileFormatError, match="not found"):
        read_image(tmp_path / "nope.jpg")


@pytest.mark.parametrize(
    "arr, match",
    [(np.array([[0.5, 1.0]]), "non-integer"), (np.array([[-1, 2]]), "non-negative"), (np.array([[np.nan, 1]]), "NaN")],
)
def test_invalid_label_values_in_npy(tmp_path, arr, match):
    p = tmp_path / "bad.npy"
    np.save(p, arr)
    with pytest.raises(FileFormatError, match=f"bad.npy.*{match}"):
        read_labels(p)


def test_read_image_gray_rgba_16bit(tmp_path):
    import cv2

    gray16 = (np.arange(20 * 30).reshape(20, 30) * 100).astype(np.uint16)
    cv2.imwrite(str(tmp_path / "g16.png"), gray16)
    img = read_image(tmp_path / "g16.png")
    assert img.shape == (20, 30, 3) and img.dtype == np.float64
    np.testing.assert_allclose(img[..., 0], gray16 / 65535.0)
    rgba = np.zeros((5, 6, 4), np.uint8)
    rgba[..., 2] = 255  # BGR(A) order on disk: red channel is index 2
    rgba[..., 3] = 128
    cv2.imwrite(str(tmp_path / "rgba.png"), rgba)
    np.testing.assert_allclose(read_image(tmp_path / "rgba.png")[0, 0], [1.0, 0.0, 0.0])


def test_colour_png_labels_one_per_colour(tmp_path):
    import cv2

    img = np.zeros((4, 4, 3), np.uint8)
    img[:, 2:] = (10, 200, 30)
    cv2.imwrite(str(tmp_path / "col.png"), img)
    assert read_labels(tmp_path / "col.png").tolist() == [[0, 0, 1, 1]] * 4


def test_write_image_round_trip(tmp_path):
    img = np.random.default_rng(0).random((6, 7, 3))
    back = read_image(write_image(tmp_path / "i.png", img))
    np.testing.assert_allclose(back, np.round(img * 255) / 255)


def test_bsds_files(bsds_bench):
    gt = read_ground_truth(bsds_bench / "groundTruth" / "2018.mat")
    assert len(gt) == 5 and gt.segmentations[0].shape == (481, 321)
    assert gt.segmentations[0].min() == 1 and gt.boundaries[0].dtype == bool
    assert len(read_segmentations(bsds_bench / "segs" / "2018.mat")) == 5
    assert read_ucm2(bsds_bench / "ucm2" / "2018.mat").shape == (963, 643)


def test_ground_truth_errors(tmp_path):
    import scipy.io

    scipy.io.savemat(tmp_path / "empty.mat", {"groundTruth": np.empty((1, 0), dtype=object)})
    with pytest.raises(FileFormatError, match="zero annotations"):
        read_ground_truth(tmp_path / "empty.mat")
    scipy.io.savemat(tmp_path / "other.mat", {"x": 1})
    with pytest.raises(FileFormatError, match="groundTruth"):
        read_ground_truth(tmp_path / "other.mat")


def test_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    import segensemble.atomic as atomic

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        write_labels(tmp_path / "x.png", np.zeros((3, 3), int))
    assert list(tmp_path.iterdir()) == []


def test_write_image_of_8bit_rgb_writes_the_bytes_of_its_float_round_trip(tmp_path):
    """8-bit RGB (an overlay drawn on a photo) is encoded as it is: the same file as through the float image."""
    from segensemble.io import write_image

    rgb = np.random.default_rng(0).integers(0, 256, (9, 7, 3)).astype(np.uint8)
    for suffix in (".png", ".jpg"):
        direct = write_image(tmp_path / f"a{suffix}", rgb).read_bytes()
        assert direct == write_image(tmp_path / f"b{suffix}", rgb / 255.0).read_bytes()


def test_check_image_8bit_is_the_rounded_float_image_without_copying_8bit_rgb():
    """round(255 * check_image(x)) for gray, (H, W, 1), RGB and RGBA images of 8-bit, 16-bit, bool and float
    types; an 8-bit RGB array is returned as a view (no copy), and bad shapes are refused with check_image's words."""
    from segensemble.errors import InputError
    from segensemble.validation import check_image, check_image_8bit

    rng = np.random.default_rng(1)
    for shape in ((5, 4), (5, 4, 1), (5, 4, 3), (5, 4, 4)):
        for image in (rng.integers(0, 256, shape).astype(np.uint8), rng.integers(0, 65536, shape).astype(np.uint16),
                      rng.random(shape) > 0.5, rng.random(shape)):
            got = check_image_8bit(image)
            assert got.dtype == np.uint8 and got.shape == (5, 4, 3)
            assert np.array_equal(got, np.round(check_image(image) * 255).astype(np.uint8)), (shape, image.dtype)
    rgb = rng.integers(0, 256, (5, 4, 3)).astype(np.uint8)
    assert np.shares_memory(check_image_8bit(rgb), rgb)  # a view of the 8-bit RGB given, not a copy
    for bad in (np.zeros((0, 4), np.uint8), np.zeros((5, 4, 2), np.uint8)):
        with pytest.raises(InputError) as want:
            check_image(bad)
        with pytest.raises(InputError) as got:
            check_image_8bit(bad)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("bits", [8, 10, 12, 14])
def test_a_16_bit_file_of_fewer_significant_bits_reads_at_its_depth(tmp_path, bits):
    """A 10/12/14-bit camera's samples (or 8-bit values) in a 16-bit file read as v / (2^b - 1), not v / 65535: a
    12-bit picture was read as one 6 % as bright and fused into one region."""
    import cv2

    from segensemble.io import decode_image, significant_bits

    top = (1 << bits) - 1
    rgb = np.random.default_rng(bits).integers(0, top + 1, (6, 7, 3)).astype(np.uint16)
    rgb[0, 0] = top
    cv2.imwrite(str(tmp_path / "c.png"), rgb[:, :, ::-1])
    np.testing.assert_allclose(read_image(tmp_path / "c.png"), rgb / top, atol=0.5 / 65535)
    rgba = np.dstack([rgb, np.full((6, 7), 65535, np.uint16)])  # an opaque 16-bit alpha is not counted
    cv2.imwrite(str(tmp_path / "a.png"), rgba[:, :, [2, 1, 0, 3]])
    assert significant_bits(cv2.imread(str(tmp_path / "a.png"), cv2.IMREAD_UNCHANGED)) == bits
    np.testing.assert_allclose(read_image(tmp_path / "a.png"), rgb / top, atol=0.5 / 65535)
    assert decode_image(tmp_path / "a.png")[..., 3].min() == 65535
    rgb[0, 0] = top + 1  # one sample above the depth: the next one (16 after 14)
    cv2.imwrite(str(tmp_path / "d.png"), rgb[:, :, ::-1])
    deeper = 16 if bits == 14 else bits + 2
    np.testing.assert_allclose(read_image(tmp_path / "d.png"), rgb / ((1 << deeper) - 1), atol=0.5 / 65535)


def test_a_12_bit_picture_is_fused_into_its_regions(tmp_path):
    import cv2
    from typer.testing import CliRunner

    from segensemble.cli import app

    img = np.zeros((96, 128, 3))
    img[:] = (200, 40, 40)
    img[:, 45:] = (40, 180, 60)
    img[61:, 45:] = (30, 40, 200)
    noisy = img / 255 * 4095 + np.random.default_rng(0).normal(0, 40, img.shape)
    cv2.imwrite(str(tmp_path / "b12.png"), np.clip(np.round(noisy), 0, 4095).astype(np.uint16)[:, :, ::-1])
    r = CliRunner().invoke(app, ["fuse", str(tmp_path / "b12.png"), "-o", str(tmp_path / "f.png")])
    assert r.exit_code == 0, r.output
    labels = read_labels(tmp_path / "f.png")
    assert len({labels[30, 20], labels[30, 90], labels[80, 90]}) == 3  # the three blocks apart (one region before)
