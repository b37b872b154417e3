"""Images: sizes from file headers, bounded decoding, reading and writing.

Every reader raises :class:`~segensemble.errors.FileFormatError` naming the
file when it is missing, corrupt or of an unsupported kind, and checks the
size the file declares before decoding it; every writer is atomic.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from segensemble.atomic import atomic_write_bytes
from segensemble.errors import FileFormatError, InputError, first_line
from segensemble.validation import MAX_PIXELS  # re-exported here
from segensemble.validation import check_image, check_image_8bit, float_range_beyond_unit
from segensemble.io._imageheader import declared_shape, exif_orientation, register_heif

__all__ = ["IMAGE_SUFFIXES", "MAX_PIXELS", "DECODE_LIMIT", "check_image_file", "check_pixel_limit", "image_shape",
           "image_orientation", "apply_orientation", "decode_image", "read_image", "write_image", "SAMPLE_BITS",
           "significant_bits"]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".bmp", ".ppm", ".pgm", ".webp", ".heic", ".heif")
#: Largest image decoded at full size for ``--downscale`` (8-bit: 3 bytes a pixel). JPEG files decode
#: directly at 1/2, 1/4 or 1/8 of their size, so they may declare up to 64 times this.
DECODE_LIMIT = 64_000_000
#: HEIF brands (the ``ftyp`` box of HEIC/HEIF files): decoded through pillow-heif.
_HEIF_BRANDS = (b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1", b"avif")


def _existing(path) -> Path:
    path = Path(path)
    if not path.exists():
        raise FileFormatError(f"{path}: file not found")
    if not path.is_file():
        raise FileFormatError(f"{path}: not a regular file")
    return path


def check_pixel_limit(shape, max_pixels, name: str) -> None:
    """Refuse an image or label map of ``shape`` (H, W) above ``max_pixels`` (None: no limit).

    Raises
    ------
    InputError
        Naming ``name``, the size and the options that lift the limit.

    Examples
    --------
    >>> check_pixel_limit((2000, 3000), 1_000_000, "big.png")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: big.png: 3000x2000 = 6,000,000 pixels is above the limit of 1,000,000 ...
    """
    if max_pixels is None:
        return
    h, w = int(shape[0]), int(shape[1])
    if h * w > max_pixels:
        raise InputError(
            f"{name}: {w}x{h} = {h * w:,} pixels is above the limit of {max_pixels:,} "
            f"(a guard against decompression bombs); downscale it, or use --downscale / --max-pixels"
        )


def image_shape(path, *, orient: bool = True) -> tuple[int, int]:
    """(height, width) declared by an image file's header, as displayed; nothing is decoded.

    With ``orient`` (default) the EXIF orientation is applied: a photo stored
    sideways and tagged "rotate 90" gives its upright shape.

    Raises
    ------
    FileFormatError
        Missing or empty file, or no readable image header.

    Examples
    --------
    >>> import tempfile, os
    >>> p = write_image(os.path.join(tempfile.mkdtemp(), "a.png"), np.zeros((4, 5, 3)))
    >>> image_shape(p)
    (4, 5)
    """
    path = _existing(path)
    if path.stat().st_size == 0:
        raise FileFormatError(f"{path}: the file is empty")
    shape = declared_shape(path)
    if shape is None or min(shape) < 1:
        raise FileFormatError(f"{path}: not a readable image (corrupt or unsupported format)")
    if orient and image_orientation(path) >= 5:
        return shape[1], shape[0]
    return shape


def image_orientation(path) -> int:
    """The EXIF orientation (1 to 8) of an image file; 1 when untagged. See :func:`apply_orientation`.

    Examples
    --------
    >>> import tempfile, os
    >>> from PIL import Image
    >>> exif = Image.Exif(); exif[0x0112] = 6
    >>> p = os.path.join(tempfile.mkdtemp(), "sideways.jpg")
    >>> Image.new("RGB", (6, 4)).save(p, exif=exif.tobytes())
    >>> image_orientation(p), image_shape(p), image_shape(p, orient=False)
    (6, (6, 4), (4, 6))
    """
    return exif_orientation(path)


def apply_orientation(image: np.ndarray, orientation: int) -> np.ndarray:
    """Turn an image (or label map) stored with EXIF ``orientation`` the way a viewer shows it (a view).

    Examples
    --------
    >>> a = np.arange(6).reshape(2, 3)
    >>> apply_orientation(a, 6).tolist()    # stored sideways: turned 90 degrees clockwise
    [[3, 0], [4, 1], [5, 2]]
    >>> [apply_orientation(a, o).shape for o in (1, 2, 3, 4, 5, 7, 8)]
    [(2, 3), (2, 3), (2, 3), (2, 3), (3, 2), (3, 2), (3, 2)]
    """
    a = image
    if orientation in (5, 6, 7, 8):
        a = a.swapaxes(0, 1)
    flip = {2: (False, True), 3: (True, True), 4: (True, False), 5: (False, False), 6: (False, True),
            7: (True, True), 8: (True, False)}.get(orientation, (False, False))
    if flip[0]:
        a = a[::-1]
    if flip[1]:
        a = a[:, ::-1]
    return a


_REDUCED = {1: cv2.IMREAD_UNCHANGED, 2: cv2.IMREAD_REDUCED_COLOR_2 | cv2.IMREAD_IGNORE_ORIENTATION,
            4: cv2.IMREAD_REDUCED_COLOR_4 | cv2.IMREAD_IGNORE_ORIENTATION,
            8: cv2.IMREAD_REDUCED_COLOR_8 | cv2.IMREAD_IGNORE_ORIENTATION}


def _quiet_imdecode(data: np.ndarray, flags: int):
    """``cv2.imdecode`` without OpenCV's log lines on stderr (a corrupt file is reported once, by us)."""
    from cv2.utils import logging as cvlog

    level = cvlog.getLogLevel()
    cvlog.setLogLevel(cvlog.LOG_LEVEL_SILENT)
    try:
        return cv2.imdecode(data, flags)
    except cv2.error:
        return None
    finally:
        cvlog.setLogLevel(level)


def _is_heif(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(12)
    return head[4:8] == b"ftyp" and head[8:12] in _HEIF_BRANDS


def _decode_heif(path: Path) -> np.ndarray:
    """A HEIC/HEIF file through pillow-heif (turned as displayed), as 8-bit RGB or RGBA."""
    from PIL import Image

    if not register_heif():
        raise FileFormatError(f"{path}: HEIC/HEIF images need pillow-heif (pip install pillow-heif)")
    try:
        with Image.open(path) as im:
            im = im if im.mode in ("RGB", "RGBA", "L") else im.convert("RGB")
            return np.asarray(im)
    except (OSError, ValueError, SyntaxError) as exc:
        raise FileFormatError(f"{path}: not a readable image (corrupt HEIC/HEIF: {first_line(exc)})") from exc


#: Sample depths a 16-bit file may hold in fewer bits (scientific and machine-vision cameras write 10-, 12- and
#: 14-bit samples into 16-bit PNG and TIFF files; a converter can write 8-bit values there).
SAMPLE_BITS = (8, 10, 12, 14)


def significant_bits(image: np.ndarray) -> int:
    """How many bits a decoded image's samples use: 8 for uint8; for uint16, the fewest of :data:`SAMPLE_BITS`
    (else 16) that hold its largest colour value (alpha is not counted).

    Examples
    --------
    >>> significant_bits(np.array([[0, 4095]], np.uint16)), significant_bits(np.array([[4096]], np.uint16))
    (12, 14)
    """
    if image.dtype != np.uint16:
        return 8 * image.dtype.itemsize
    colour = image[:, :, :3] if image.ndim == 3 else image
    top = int(colour.max(initial=0))
    return next((bits for bits in SAMPLE_BITS if top < 1 << bits), 16)


def _to_16_bit_range(image: np.ndarray) -> np.ndarray:
    """A uint16 image whose colour samples use fewer bits, its colour stretched to 0..65535 (v * 65535 / (2^b - 1),
    rounded; alpha as it is): what is read is the picture, not a nearly black one. Anything else as it is."""
    if image.dtype != np.uint16:
        return image
    bits = significant_bits(image)
    if bits == 16:
        return image
    levels = (1 << bits) - 1
    table = np.round(np.arange(levels + 1) * (65535 / levels)).astype(np.uint16)
    if image.ndim == 3 and image.shape[2] == 4:
        return np.dstack([table[image[:, :, :3]], image[:, :, 3]])
    return table[image]


def decode_image(path, *, max_pixels=None, reduce: int = 1, orient: bool = True, depth: bool = True) -> np.ndarray:
    """Decode an image file (uint8/uint16, gray, RGB or RGBA); the size its header declares is checked first.

    ``reduce`` (2, 4 or 8) decodes at that fraction of the size, as 8-bit
    colour (JPEG decodes directly at the reduced size). With ``orient``
    (default) the EXIF orientation is applied, so the array has the shape a
    viewer shows; ``orient=False`` gives the pixel grid as stored. HEIC/HEIF
    files are read through pillow-heif. With ``depth`` (default), a 16-bit
    picture whose colour samples all fit in 8, 10, 12 or 14 bits
    (:func:`significant_bits`) holds samples of that depth: they are stretched
    to the 16-bit range (a 12-bit sample ``v`` reads as ``v / 4095``, not
    ``v / 65535``), and a float file (a 32-bit TIFF) must hold samples in
    [0, 1] (within :data:`~segensemble.validation.FLOAT_SLACK`): one of 0..255
    is refused, naming the file, rather than read as white; ``depth=False``
    gives the values as stored (label maps).

    Examples
    --------
    >>> import tempfile, os
    >>> p = write_image(os.path.join(tempfile.mkdtemp(), "a.png"), np.ones((4, 6, 3)))
    >>> decode_image(p).dtype, decode_image(p).shape
    (dtype('uint8'), (4, 6, 3))
    """
    path = _existing(path)
    if max_pixels is not None:  # None: the caller has checked the header (or sets no limit); not read again
        shape = image_shape(path, orient=False)
        check_pixel_limit((shape[0] // reduce, shape[1] // reduce), max_pixels, str(path))
    if _is_heif(path):
        img = _decode_heif(path)
        if reduce > 1:
            img = cv2.resize(img, (max(1, img.shape[1] // reduce), max(1, img.shape[0] // reduce)),
                             interpolation=cv2.INTER_AREA)
        return np.ascontiguousarray(img)
    img = _quiet_imdecode(np.fromfile(path, dtype=np.uint8), _REDUCED[reduce])
    if img is None or img.size == 0:
        raise FileFormatError(f"{path}: not a readable image (corrupt or unsupported format)")
    if img.ndim == 3 and img.shape[2] == 3:
        img = img[:, :, ::-1]
    elif img.ndim == 3 and img.shape[2] == 4:
        img = img[:, :, [2, 1, 0, 3]]
    if orient:
        img = apply_orientation(img, image_orientation(path))
    if depth and img.dtype.kind == "f":
        _check_float_samples(img, path)
    return np.ascontiguousarray(_to_16_bit_range(img) if depth else img)


def _check_float_samples(img: np.ndarray, path: Path) -> None:
    """A float picture's samples are in [0, 1] (within FLOAT_SLACK, clipped later); others refused with the file."""
    if not np.all(np.isfinite(img)):
        raise FileFormatError(f"{path}: float samples that are NaN or infinite")
    if (beyond := float_range_beyond_unit(img)) is not None:
        raise FileFormatError(f"{path}: float samples from {beyond[0]:g} to {beyond[1]:g}, expected [0, 1]; save "
                              "the picture as 8- or 16-bit, or scaled to [0, 1]")


def read_image(path, *, max_pixels=None, orient: bool = True) -> np.ndarray:
    """Read an image file as float64 RGB in [0, 1], shape (H, W, 3), turned as displayed (EXIF orientation).

    8- and 16-bit, gray, RGB and RGBA files are accepted (alpha is dropped);
    HEIC/HEIF through pillow-heif. ``orient=False``: the pixel grid as stored.
    A 16-bit file of 8-, 10-, 12- or 14-bit samples is read at that depth
    (:func:`decode_image`).

    Parameters
    ----------
    path : path
    max_pixels : int, optional
        Refuse a file whose header declares more pixels, before decoding it
        (a decompression bomb never allocates). None: no limit.

    Raises
    ------
    FileFormatError
        Missing, empty, corrupt or unsupported file.
    InputError
        Above ``max_pixels``.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.png")
    >>> _ = write_image(p, np.zeros((4, 5, 3)))
    >>> read_image(p).shape
    (4, 5, 3)
    """
    path = _existing(path)
    raw = decode_image(path, max_pixels=max_pixels, orient=orient)
    try:
        return check_image(raw)
    except InputError as exc:
        raise FileFormatError(f"{path}: {exc}") from exc


def write_image(path, image) -> Path:
    """Write an image (any form accepted by segensemble) as 8-bit RGB, atomically.

    Examples
    --------
    >>> import tempfile, os
    >>> p = write_image(os.path.join(tempfile.mkdtemp(), "x.png"), np.ones((2, 2)))
    >>> read_image(p)[0, 0].tolist()
    [1.0, 1.0, 1.0]
    """
    path = Path(path)
    rgb = check_image_8bit(image)  # an 8-bit photo or overlay as it is, without float copies
    ok, buf = cv2.imencode(path.suffix or ".png", rgb[:, :, ::-1])
    if not ok:
        raise InputError(f"path: cannot encode an image as {path.suffix!r} ({path})")
    return atomic_write_bytes(path, buf.tobytes())


def check_image_file(path, max_pixels: int = MAX_PIXELS, *, downscale: bool = False):
    """The shape an image file declares and the decoder reduction a reader will use (JPEG); refusals first.

    Reads the header only, so a command can refuse a file before it imports
    or computes anything else.

    Returns
    -------
    shape : (H, W)
    reduce : int
        1, or 2 / 4 / 8 for a JPEG decoded at reduced size with ``downscale``.

    Raises
    ------
    InputError
        Above ``max_pixels`` without ``downscale``; too large to decode even with it.

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.io import write_image
    >>> p = write_image(os.path.join(tempfile.mkdtemp(), "a.png"), np.zeros((100, 200, 3)))
    >>> check_image_file(p, 5000, downscale=True)
    ((100, 200), 1)
    """
    h, w = image_shape(path)
    if max_pixels is None or h * w <= max_pixels:
        return (h, w), 1
    if not downscale:
        check_pixel_limit((h, w), max_pixels, str(path))
    with open(path, "rb") as fh:
        jpeg = fh.read(2) == b"\xff\xd8"
    reduce = max([r for r in (1, 2, 4, 8) if jpeg and h * w >= max_pixels * r * r] or [1])
    if h * w > DECODE_LIMIT * reduce * reduce:
        raise InputError(
            f"{path}: {w}x{h} = {h * w:,} pixels is too large to decode even with --downscale (at most "
            f"{DECODE_LIMIT:,} pixels, JPEG {64 * DECODE_LIMIT:,}); downscale it with an image tool first"
        )
    return (h, w), reduce
