"""Image sizes from file headers, read before anything is decoded.

A small file can declare a huge image (a PNG of a few hundred kilobytes
declaring 20000x20000 pixels decompresses to gigabytes); its size must be
known, and refused, before the decoder allocates anything. PNG and JPEG
headers are parsed here directly; other formats through Pillow's lazy
``Image.open``, which reads the header only.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from pathlib import Path

__all__ = ["declared_shape", "exif_orientation", "register_heif"]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: JPEG start-of-frame markers (baseline, progressive, lossless, arithmetic); C4, C8 and CC are not frames.
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _png_shape(head: bytes):
    if len(head) < 24 or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return height, width


def _jpeg_shape(fh):
    """Walk the JPEG markers up to the first start-of-frame segment; its header gives the size."""
    fh.seek(2)
    while True:
        byte = fh.read(1)
        while byte == b"\xff":  # fill bytes
            byte = fh.read(1)
        if not byte:
            return None
        marker = byte[0]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            continue
        length = fh.read(2)
        if len(length) < 2:
            return None
        (size,) = struct.unpack(">H", length)
        if marker in _SOF:
            frame = fh.read(5)
            if len(frame) < 5:
                return None
            height, width = struct.unpack(">HH", frame[1:5])
            return height, width
        if size < 2:
            return None
        fh.seek(size - 2, 1)
        # read the next marker's 0xFF
        if fh.read(1) != b"\xff":
            return None


@lru_cache(maxsize=None)
def register_heif() -> bool:
    """Let Pillow open HEIC/HEIF files (phones' default format) through pillow-heif; False when it is missing.

    Done once per process (every header read asks for it)."""
    try:
        import pillow_heif
    except ImportError:
        return False
    pillow_heif.register_heif_opener()
    return True


def exif_orientation(path) -> int:
    """The EXIF orientation tag (1 to 8) of an image file, 1 when it has none; read from the header only.

    Phones store a photo taken upright as the sensor saw it and tag how a
    viewer must turn it. HEIC files come from pillow-heif already turned
    (their tag then reads 1).
    """
    import warnings

    from PIL import Image, UnidentifiedImageError

    register_heif()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(path) as im:
                value = im.getexif().get(0x0112, 1)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, struct.error, TypeError, KeyError,
            Image.DecompressionBombError):
        return 1
    return value if isinstance(value, int) and 1 <= value <= 8 else 1


def _pillow_shape(path: Path):
    import warnings

    from PIL import Image, UnidentifiedImageError

    register_heif()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(path) as im:
                width, height = im.size
    except Image.DecompressionBombError as exc:  # its message states the pixel count only
        import re

        m = re.search(r"\((\d+) pixels\)", str(exc))
        return (int(m.group(1)), 1) if m else None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, struct.error):
        return None
    return height, width


def declared_shape(path) -> tuple[int, int] | None:
    """(height, width) that an image file's header declares, or None when no header can be read.

    Nothing is decoded: PNG (IHDR) and JPEG (start of frame) are parsed
    directly, other formats by Pillow's header reader.

    Examples
    --------
    >>> import tempfile, os, zlib
    >>> ihdr = struct.pack(">IIBBBBB", 20000, 15000, 8, 2, 0, 0, 0)
    >>> png = _PNG_SIGNATURE + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    >>> p = os.path.join(tempfile.mkdtemp(), "bomb.png"); _ = open(p, "wb").write(png)
    >>> declared_shape(p)
    (15000, 20000)
    """
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(32)
        if head.startswith(_PNG_SIGNATURE):
            return _png_shape(head)
        if head.startswith(b"\xff\xd8"):
            return _jpeg_shape(fh)
    return _pillow_shape(path)
