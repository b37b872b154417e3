"""Arrays derived from one image, remembered for the next caller that asks about the same image.

A recipe's members, its consensus and its post-processing derive the same
image-wide arrays: the Lab colour (the detector's channels, the watershed's
boundary strength, the merge's region statistics, the small-region merge),
texture energies, Felzenszwalb's sorted pixel graph (one per recipe, four
scales read it). The first caller computes an entry; the others read it.

Entries are keyed by the image's content (a SHA-256 digest with its shape and
dtype, :func:`image_key`; SHA-256 rather than BLAKE2 because processors with
SHA extensions hash it twice as fast), never by the array object, so an image changed in
place is a new image. One image is remembered at a time (an entry for another
image clears the last one's), and nothing is kept for images of more than
``max_pixels`` pixels: a call on a full-size photo clears the memo and holds no
memory after it.
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np

__all__ = ["ImageMemo", "image_key", "KEEP_PIXELS"]

#: Largest image (pixels) whose derived arrays are kept: a BSDS500 image or a photo at a recipe's working scale
#: (154 401 pixels) is; a full-size photo is not.
KEEP_PIXELS = 1 << 20


def image_key(image) -> tuple:
    """The content key of an array: (SHA-256 digest of its bytes, shape, dtype name).

    Examples
    --------
    >>> a = np.zeros((2, 3))
    >>> image_key(a) == image_key(a.copy()), image_key(a) == image_key(a.astype(np.float32))
    (True, False)
    """
    a = np.ascontiguousarray(image)
    return hashlib.sha256(a.reshape(-1).view(np.uint8)).digest(), a.shape, a.dtype.str  # no copy, empty too


class ImageMemo:
    """Entries (by name) derived from the last image (by content key).

    Thread-safe: threads asking for one entry at once wait for one
    computation (four Felzenszwalb members in threads sort one graph, not
    four); entries of other images or names are computed meanwhile.

    Parameters
    ----------
    max_pixels : int, default :data:`KEEP_PIXELS`
        Images of more pixels are computed for and not kept.

    Examples
    --------
    >>> memo, calls = ImageMemo(), []
    >>> img = np.ones((4, 4))
    >>> for _ in range(2):
    ...     value = memo.get(image_key(img), "sum", lambda: calls.append(1) or img.sum(), pixels=img.size)
    >>> float(value), len(calls), len(memo)
    (16.0, 1, 1)
    """

    def __init__(self, max_pixels: int = KEEP_PIXELS):
        self.max_pixels = max_pixels
        self._lock = threading.Lock()
        self._key = None
        self._entries: dict = {}
        self._pending: dict = {}  # (key, name) -> Event of the computation under way

    def __len__(self) -> int:
        """Number of entries kept."""
        return len(self._entries)

    def get(self, key, name, compute, *, pixels: int):
        """The entry ``name`` of the image with content key ``key``, from ``compute()`` the first time.

        ``pixels``: the image's pixel count (above ``max_pixels`` the memo is cleared and the value not kept).
        Callers must not modify the value they get: it is the one every later caller reads.
        """
        while True:
            with self._lock:
                if self._key == key and name in self._entries:
                    return self._entries[name]
                running = self._pending.get((key, name))
                if running is None:
                    running = self._pending[key, name] = threading.Event()
                    break
            running.wait()  # another thread computes it: then read it (or compute it, if it was not kept)
        try:
            value = compute()
            with self._lock:
                if self._key != key or pixels > self.max_pixels:
                    self._key, self._entries = None, {}
                if pixels <= self.max_pixels:
                    self._key = key
                    self._entries[name] = value
            return value
        finally:
            with self._lock:
                del self._pending[key, name]
            running.set()

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._key, self._entries = None, {}
