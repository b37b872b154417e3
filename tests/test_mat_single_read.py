"""A .mat file is checked and decompressed once: the reader gets the same file, uncompressed."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from segensemble.errors import FileFormatError
from segensemble.io._matscan import scan_mat
from segensemble.io.matfiles import _load_mat

VARIABLES = {
    "segs": np.array([np.arange(12).reshape(3, 4), np.ones((3, 4))], dtype=object),
    "ucm2": np.linspace(0, 1, 35).reshape(5, 7),
    "gt": {"Segmentation": np.eye(3, dtype=np.uint16), "Boundaries": np.eye(3, dtype=bool)},
    "sp": sp.random(20, 30, density=0.1, format="csc", random_state=0),
    "name": "text",
}


def _top_level_types(data: bytes) -> list[int]:
    types, pos = [], 128
    while pos + 8 <= len(data):
        dtype, nbytes = struct.unpack("<II", data[pos:pos + 8])
        types.append(dtype)
        pos += 8 + nbytes + (-nbytes) % 8
    return types


@pytest.mark.parametrize("compressed", [True, False])
def test_the_reader_gets_the_same_file_uncompressed(tmp_path, compressed):
    path = tmp_path / "v.mat"
    scipy.io.savemat(path, VARIABLES, do_compression=compressed)
    data = scan_mat(path, 10**6, 10**7, keep=True)
    assert set(_top_level_types(data)) == {14}  # miMATRIX only: nothing left to decompress
    ours, ref = _load_mat(path), scipy.io.loadmat(path)
    assert sorted(k for k in ours if not k.startswith("__")) == sorted(k for k in ref if not k.startswith("__"))
    assert np.array_equal(ours["ucm2"], ref["ucm2"]) and (ours["sp"] != ref["sp"]).nnz == 0
    assert np.array_equal(ours["segs"][0, 1], ref["segs"][0, 1]) and ours["name"][0] == "text"
    assert np.array_equal(ours["gt"]["Segmentation"][0, 0], ref["gt"]["Segmentation"][0, 0])


def test_an_element_with_more_data_than_its_dimensions_hold_is_refused(tmp_path):
    buf = io.BytesIO()
    scipy.io.savemat(buf, {"x": np.zeros((2, 2))}, do_compression=False)
    raw = bytearray(buf.getvalue())
    extra = 1 << 20  # a 2 x 2 array whose element declares a megabyte more
    dtype, nbytes = struct.unpack("<II", raw[128:136])
    raw[128:136] = struct.pack("<II", dtype, nbytes + extra)
    path = tmp_path / "padded.mat"
    path.write_bytes(bytes(raw) + bytes(extra))
    with pytest.raises(FileFormatError, match=r"1,048,616 bytes of data for x \(2x2\), which holds at most 344"):
        _load_mat(path)
