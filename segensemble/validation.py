"""Input validation shared by every public entry point.

Validation happens once, at the public boundary; private helpers trust their
inputs. Every error names the parameter, the value received and what is expected.
"""

from __future__ import annotations

import numbers

import numpy as np

from segensemble.checks import (MAX_PIXELS, check_distinct_paths, check_int, check_n_segments, check_output_path,
                                describe_value)
from segensemble.errors import InputError, warn_deprecated

__all__ = [
    "MAX_PIXELS",
    "FLOAT_SLACK",
    "check_rng",
    "check_random_state",
    "check_image",
    "check_image_8bit",
    "check_label_map",
    "check_int",
    "check_n_segments",
    "check_output_path",
    "check_distinct_paths",
    "check_weights",
    "check_member_weights",
    "check_soft_map",
    "describe_value",
    "float_range_beyond_unit",
]

#: How far outside [0, 1] a float image may stray and still be read (clipped): a resampling's overshoot (cubic or
#: Lanczos ringing stays within a few tenths). Further out the array is not a [0, 1] image — most often an 8-bit
#: picture converted to float without the division by 255, which clipping would turn white — and is refused.
FLOAT_SLACK = 0.5


def float_range_beyond_unit(values: np.ndarray):
    """``(min, max)`` of a float picture's finite samples when they stray from [0, 1] by more than
    :data:`FLOAT_SLACK`; None when they are within it.

    Examples
    --------
    >>> float_range_beyond_unit(np.array([-0.1, 1.2])) is None, float_range_beyond_unit(np.array([0.0, 255.0]))
    (True, (0.0, 255.0))
    """
    lo, hi = float(values.min()), float(values.max())
    return (lo, hi) if lo < -FLOAT_SLACK or hi > 1.0 + FLOAT_SLACK else None


def check_rng(rng) -> np.random.Generator:
    """Resolve ``rng`` (None, int or Generator) to a Generator, once (scikit-image's ``rng``).

    Global random state is never touched. Estimators take scikit-learn's ``random_state`` instead; the image
    pipeline's runner (:func:`segensemble.pipeline.runner.run_recipe`) is where the two meet.

    Examples
    --------
    >>> check_rng(0).integers(10) == check_rng(0).integers(10)
    np.True_
    """
    if rng is None or isinstance(rng, (numbers.Integral, np.integer)):
        if rng is not None and int(rng) < 0:
            raise InputError(f"rng: expected None, a non-negative int or a numpy Generator, got {rng!r}")
        return np.random.default_rng(None if rng is None else int(rng))
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.RandomState):
        return np.random.default_rng(rng.randint(0, 2**31 - 1))
    raise InputError(f"rng: expected None, a non-negative int or a numpy Generator, got {describe_value(rng)}")


def check_random_state(rng) -> np.random.Generator:
    """Deprecated name of :func:`check_rng` (scikit-learn's function of this name returns a RandomState).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     int(check_random_state(0).integers(10)) == int(check_rng(0).integers(10))
    True
    """
    warn_deprecated("segensemble.validation.check_random_state", "segensemble.validation.check_rng")
    return check_rng(rng)


def check_real(values, name: str) -> np.ndarray:
    """An array of real numbers or booleans; complex, string, bytes, structured and object data are refused.

    The one dtype rule of every reader and checker of images, maps and
    labels: a numpy conversion would otherwise drop an imaginary part or
    parse ``"0.5"`` as a number without a word.

    Examples
    --------
    >>> check_real(np.array([1 + 2j]), "boundary")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: boundary: expected real numbers (bool, integer or float), got dtype complex128
    """
    arr = np.asarray(values)
    if arr.dtype == bool or arr.dtype.kind in "iuf":
        return arr
    raise InputError(f"{name}: expected real numbers (bool, integer or float), got dtype {arr.dtype}")


def check_image(image, name: str = "image") -> np.ndarray:
    """Convert an image to a float64 RGB array of shape (H, W, 3) in [0, 1].

    Accepts gray (H, W) or (H, W, 1), RGB (H, W, 3) and RGBA (H, W, 4) arrays of
    any unsigned integer type (scaled by the type's maximum), bool, or float
    in [0, 1] (values within :data:`FLOAT_SLACK` of it are clipped; further
    out, as a float copy of an 8-bit picture in [0, 255], refused). The alpha
    channel is dropped. The input is never modified.

    Examples
    --------
    >>> img = check_image(np.full((2, 2), 255, np.uint8))
    >>> img.shape, float(img.max())
    ((2, 2, 3), 1.0)
    >>> check_image(np.full((2, 2), 255.0))
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: image: expected float values in [0, 1], got values from 255 to 255; divide ...
    """
    arr = np.asarray(image)
    if arr.dtype == object:
        raise InputError(f"{name}: expected a numeric image array, got {describe_value(image)}")
    check_real(arr, name)
    arr = _rgb_channels(arr, name)
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if np.issubdtype(arr.dtype, np.unsignedinteger):
        return arr.astype(np.float64) / float(np.iinfo(arr.dtype).max)
    if np.issubdtype(arr.dtype, np.signedinteger):
        if arr.min() < 0:
            raise InputError(f"{name}: signed integer image with negative values (min {arr.min()})")
        top = 255.0 if arr.max() <= 255 else 65535.0
        return np.clip(arr.astype(np.float64) / top, 0.0, 1.0)
    out = arr.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise InputError(f"{name}: the image contains NaN or infinite values")
    if (beyond := float_range_beyond_unit(out)) is not None:
        raise InputError(f"{name}: expected float values in [0, 1], got values from {beyond[0]:g} to {beyond[1]:g}; "
                         "divide an 8-bit picture by 255 (or pass it as uint8)")
    return np.clip(out, 0.0, 1.0)


def _rgb_channels(arr, name: str) -> np.ndarray:
    """The (H, W, 3) channels of a gray, RGB or RGBA array as stored (gray repeated, alpha dropped); refusals."""
    given = arr.shape
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.ndim == 2:
        arr = np.repeat(arr[:, :, None], 3, axis=2)
    elif arr.ndim == 3 and arr.shape[2] in (3, 4):
        arr = arr[:, :, :3]
    else:
        raise InputError(f"{name}: expected an (H, W), (H, W, 3) or (H, W, 4) image, got shape {given}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError(f"{name}: the image is empty (shape {given})")
    return arr


def check_image_8bit(image, name: str = "image") -> np.ndarray:
    """An image as 8-bit RGB (H, W, 3): ``round(255 * check_image(image))``, without its float copies for an
    8-bit image (taken as stored: gray repeated, alpha dropped; RGB comes back as a view, not a copy).

    Examples
    --------
    >>> rgb = check_image_8bit(np.array([[0, 128], [255, 7]], np.uint8))
    >>> rgb.shape, rgb[0, 1].tolist()
    ((2, 2, 3), [128, 128, 128])
    >>> check_image_8bit(np.array([[[0.5, 0.0, 1.0]]]))[0, 0].tolist()
    [128, 0, 255]
    """
    arr = np.asarray(image)
    if arr.dtype == np.uint8:
        return _rgb_channels(arr, name)
    return np.round(check_image(arr, name) * 255).astype(np.uint8)


def check_label_map(labels, name: str = "labels", *, ndim: int = 2) -> np.ndarray:
    """Validate an integer label array and return it as int64 (a copy or a view).

    Float arrays are accepted only when every value is a whole number. NaN,
    infinite, negative labels and labels beyond the int32 range are refused.

    Examples
    --------
    >>> check_label_map(np.array([[0.0, 2.0]])).tolist()
    [[0, 2]]
    """
    arr = np.asarray(labels)
    if arr.ndim != ndim:
        raise InputError(f"{name}: expected a {ndim}-D label array, got shape {arr.shape}")
    if arr.size == 0:
        raise InputError(f"{name}: the label array is empty (shape {arr.shape})")
    if arr.dtype == bool:
        return arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{name}: labels contain NaN or infinite values")
        if not np.all(arr == np.round(arr)):
            raise InputError(f"{name}: expected integer labels, got non-integer values (dtype {arr.dtype})")
    elif not np.issubdtype(arr.dtype, np.integer):
        raise InputError(f"{name}: expected an integer label array, got dtype {arr.dtype}")
    lo, hi = (float(arr.min()), float(arr.max())) if arr.dtype.kind == "f" else (int(arr.min()), int(arr.max()))
    if lo < 0:
        raise InputError(f"{name}: labels must be non-negative, got minimum {lo}")
    if hi > np.iinfo(np.int32).max:
        raise InputError(f"{name}: labels must fit in int32, got maximum {hi}")
    return arr.astype(np.int64, copy=False)


def check_weights(weights, n: int, name: str = "weights") -> np.ndarray:
    """Validate ``n`` finite positive object weights as float64; errors name the parameter.

    Examples
    --------
    >>> check_weights([1, 2], 2).tolist()
    [1.0, 2.0]
    >>> check_weights([1, 0], 2, "sample_weight")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: sample_weight: expected finite positive object weights, got minimum 0.0
    """
    w = np.asarray(weights, dtype=np.float64) if np.ndim(weights) else np.full(n, np.nan)
    if w.shape != (n,):
        raise InputError(f"{name}: expected shape ({n},), got {describe_value(weights)}")
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        low = np.nanmin(w) if np.any(np.isfinite(w)) else w[0]
        raise InputError(f"{name}: expected finite positive object weights, got minimum {low}")
    return w


def check_member_weights(member_weights, n_members: int) -> np.ndarray:
    """One weight per member as a float array: finite, non-negative, not all zero (one-line error otherwise).

    Examples
    --------
    >>> check_member_weights([1, 3], 2).tolist()
    [1.0, 3.0]
    >>> check_member_weights([1, -1], 2)
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: member_weights: expected 2 non-negative weights (finite, one per member, not \
all zero), got [1, -1]
    """
    try:
        a = np.asarray(member_weights, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        a = np.full(0, np.nan)
    if a.shape != (n_members,) or not np.all(np.isfinite(a)) or np.any(a < 0) or a.sum() <= 0:
        raise InputError(f"member_weights: expected {n_members} non-negative weights (finite, one per member, not "
                         f"all zero), got {describe_value(member_weights)}")
    return a


def check_soft_map(values, name: str = "edges", *, unit_range: bool = False) -> np.ndarray:
    """A soft boundary map (or any per-pixel strength): a non-empty, finite 2-D real array, as float64.

    With ``unit_range``, values must also lie in [0, 1]. Booleans are 0 and 1
    (True: certainly a boundary), as in :func:`segensemble.io.read_boundary_map`.

    Examples
    --------
    >>> check_soft_map([[0, 1]], "boundary", unit_range=True).dtype
    dtype('float64')
    >>> check_soft_map(np.zeros((2, 2, 3)))
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: edges: expected a 2-D numeric array (an (H, W) soft boundary map), got ...
    """
    arr = np.asarray(values)
    if arr.ndim != 2 or arr.size == 0 or not (arr.dtype.kind in "iufbc" or arr.dtype == bool):
        raise InputError(f"{name}: expected a 2-D numeric array (an (H, W) soft boundary map), got "
                         f"{describe_value(values)}")
    check_real(arr, name)
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise InputError(f"{name}: expected finite values, got NaN or infinity")
    if unit_range and (arr.min() < 0 or arr.max() > 1):
        raise InputError(f"{name}: expected values in [0, 1] (a soft boundary map), got values outside")
    return arr

