"""The memo of an image's derived arrays: keyed by content, one image, nothing kept for large images."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from segensemble.memo import ImageMemo, image_key


def _counted(memo, img, name="x"):
    calls = []
    value = memo.get(image_key(img), name, lambda: calls.append(1) or img.sum(), pixels=img.size)
    return value, len(calls)


def test_an_equal_image_hits_and_an_image_changed_in_place_does_not():
    memo, img = ImageMemo(), np.ones((3, 4))
    assert _counted(memo, img) == (12.0, 1)
    assert _counted(memo, img.copy()) == (12.0, 0)  # content, not the object
    img[0, 0] = 5  # in place: a new image
    assert _counted(memo, img) == (16.0, 1)
    assert _counted(memo, img.astype(np.float32)) == (16.0, 1)  # the dtype is part of the key


def test_keys_of_views_empty_arrays_and_other_byte_orders():
    a = np.arange(12.0).reshape(3, 4)
    assert image_key(a[:, ::2]) == image_key(a[:, ::2].copy())  # a strided view: its content
    assert image_key(np.zeros((0, 3)))[1:] == ((0, 3), "<f8")
    assert image_key(a.astype(">f8")) != image_key(a)


def test_one_image_at_a_time_and_nothing_kept_above_max_pixels():
    memo = ImageMemo(max_pixels=12)
    a, b = np.ones((3, 4)), np.zeros((3, 4))
    _counted(memo, a, "x"), _counted(memo, a, "y")
    assert len(memo) == 2
    _counted(memo, b, "x")  # another image: the last one's entries go
    assert len(memo) == 1 and _counted(memo, a, "y")[1] == 1
    assert _counted(memo, np.ones((4, 4)))[1] == 1  # 16 pixels: computed, memo cleared, not kept
    assert len(memo) == 0
    memo.clear()
    assert len(memo) == 0


def test_threads_asking_at_once_wait_for_one_computation():
    memo, img = ImageMemo(), np.arange(6.0)
    started, release, calls, got = threading.Event(), threading.Event(), [], []

    def compute():
        calls.append(1)
        started.set()
        release.wait()
        return img.sum()

    def ask():
        got.append(memo.get(image_key(img), "sum", compute, pixels=img.size))

    first = threading.Thread(target=ask)
    first.start()
    started.wait()  # the first thread is computing; the second either waits for it or finds its entry
    second = threading.Thread(target=ask)
    second.start()
    release.set()
    first.join()
    second.join()
    assert len(calls) == 1 and got == [15.0, 15.0]


def test_a_failed_computation_is_not_remembered():
    memo, img = ImageMemo(), np.ones(4)

    def fail():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        memo.get(image_key(img), "x", fail, pixels=img.size)
    assert _counted(memo, img) == (4.0, 1)
