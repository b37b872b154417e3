"""One dtype rule for every reader: bool is 0/1 where a probability is meant; complex, string, structured refused."""

from __future__ import annotations

import numpy as np
import pytest

from segensemble.errors import FileFormatError, InputError
from segensemble.evaluation.benchmark import MachineResult, evaluate_image
from segensemble.io import read_boundary_map, read_edge_ground_truth
from segensemble.pipeline.runner import run_recipe
from segensemble.validation import check_image, check_soft_map

BAD = {
    "complex": np.zeros((8, 8), complex),
    "unicode": np.full((8, 8), "0.5"),
    "bytes": np.full((8, 8), b"1"),
    "structured": np.zeros((8, 8), dtype=[("a", "f4"), ("b", "f4")]),
}


def test_a_boolean_boundary_file_means_what_it_says(tmp_path):
    """Finding 1: True on the boundary scored F = 0 (read as 1/255). Now True is 1, as uint8 255 is."""
    b = np.zeros((30, 40), bool)
    b[15, :] = True
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "u.npy", b.astype(np.uint8) * 255)
    assert np.array_equal(read_boundary_map(tmp_path / "b.npy"), read_boundary_map(tmp_path / "u.npy"))
    gt_bool = read_edge_ground_truth(tmp_path / "b.npy")
    gt_uint = read_edge_ground_truth(tmp_path / "u.npy")
    machine = MachineResult("boundary", b.astype(float))
    f_bool = evaluate_image(machine, gt_bool, nthresh=3, region=False).scores(1)["f"]
    assert f_bool == evaluate_image(machine, gt_uint, nthresh=3, region=False).scores(1)["f"] and f_bool > 0.99
    assert np.array_equal(check_soft_map(b, "boundary", unit_range=True), b.astype(float))


@pytest.mark.parametrize("kind", sorted(BAD))
def test_boundary_map_files_of_other_kinds_are_refused(tmp_path, kind):
    np.save(tmp_path / "x.npy", BAD[kind])
    with pytest.raises(FileFormatError, match="expected real numbers|not a readable"):
        read_boundary_map(tmp_path / "x.npy")


@pytest.mark.parametrize("kind", sorted(BAD))
def test_arrays_of_other_kinds_are_refused_by_the_library(kind):
    arr = BAD[kind]
    with pytest.raises(InputError):
        check_soft_map(arr, "boundary")
    with pytest.raises(InputError):
        check_image(arr)
    with pytest.raises(InputError):
        run_recipe(np.zeros((8, 8, 3)), "classic", boundary=arr)


def test_a_complex_image_is_refused_not_truncated():
    with pytest.raises(InputError, match="complex"):
        run_recipe(np.zeros((8, 8, 3), complex), "classic")


@pytest.mark.parametrize("kind", sorted(BAD))
def test_the_cli_refuses_them_in_one_line(tmp_path, photo, refused, kind):
    np.save(tmp_path / "b.npy", BAD[kind])
    refused(["fuse", photo, "-o", tmp_path / "o.png", "--boundary", tmp_path / "b.npy", "-r", "classic"],
            "b.npy", folder=tmp_path)


def test_a_float_picture_file_beyond_zero_one_is_refused_naming_it(tmp_path, refused):
    """A 32-bit float TIFF of values 0..255 (how some tools save a gray picture) was read, clipped to white and
    fused into one region with exit 0; now every command that reads a picture refuses it, naming the file. Samples
    in [0, 1] are read as before; NaN is refused with the file's name too."""
    import cv2

    from segensemble.io import decode_image, read_image

    gray = np.random.default_rng(0).random((24, 32)).astype(np.float32)
    for name, values in (("f255.tif", gray * 255), ("fnan.tif", np.where(gray > 0.9, np.nan, gray))):
        assert cv2.imwrite(str(tmp_path / name), values)
        for command in (["fuse", tmp_path / name, "-o", tmp_path / "o.png"], ["segment", tmp_path / name, "-o",
                        tmp_path / "o.png"], ["edges", tmp_path / name, "-o", tmp_path / "o.png"]):
            refused(command, name, "float samples", folder=tmp_path)
        with pytest.raises(FileFormatError, match=f"{name}: float samples"):
            read_image(tmp_path / name)
    assert cv2.imwrite(str(tmp_path / "unit.tif"), gray)
    np.testing.assert_array_equal(read_image(tmp_path / "unit.tif"), np.repeat(gray[:, :, None], 3, axis=2))
    assert decode_image(tmp_path / "f255.tif", depth=False).max() > 250  # a label or boundary map: as stored
