"""Checks of scalars and paths, shared by every public entry point: NumPy-free.

The command line checks its options with these before any numeric layer is
imported, so ``segensemble --help`` and a refused option cost no NumPy import.
:mod:`segensemble.validation` re-exports them beside the array checks; every
error names the parameter, the value received and what is expected.
"""

from __future__ import annotations

import numbers
import os
import sys
from pathlib import Path

from segensemble.errors import InputError

__all__ = ["MAX_PIXELS", "describe_value", "check_int", "check_n_segments", "check_output_path",
           "check_distinct_paths"]

#: Largest image, label map or ground truth (pixels) read: a guard against decompression bombs that real
#: photos never reach (a 24-megapixel phone photo, a 100-megapixel panorama). Recipes process large images
#: at their working scale (:mod:`segensemble.pipeline.workscale`), so memory does not grow with the pixel count
#: beyond a few bytes a pixel. Every reader checks the size a file *declares* before decoding it.
MAX_PIXELS = 100_000_000


def describe_value(value) -> str:
    """Short description of a value for error messages.

    Examples
    --------
    >>> import numpy as np
    >>> describe_value(np.zeros((2, 3))), describe_value("x" * 100)[-5:]
    ('array of shape (2, 3) and dtype float64', 'xx...')
    """
    np = sys.modules.get("numpy")  # not imported: the value cannot be an array
    if np is not None and isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Validate an integer parameter within optional bounds.

    Examples
    --------
    >>> check_int(3, "k", minimum=1)
    3
    >>> check_int(0, "k", minimum=1)
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: k: expected an integer >= 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):  # NumPy's integers included
        raise InputError(f"{name}: expected an integer, got {describe_value(value)}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise InputError(f"{name}: expected an integer >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise InputError(f"{name}: expected an integer <= {maximum}, got {value}")
    return value


def check_n_segments(value, name: str = "n_segments", *, allow_auto: bool = True):
    """Validate a number of output regions: a positive int or ``'auto'``.

    Examples
    --------
    >>> check_n_segments("auto"), check_n_segments("8"), check_n_segments(3)
    ('auto', 8, 3)
    """
    if allow_auto and isinstance(value, str):
        if value == "auto":
            return "auto"
        if value.strip().isdigit():
            value = int(value)
        else:
            raise InputError(f"{name}: expected a positive integer or 'auto', got {value!r}")
    return check_int(value, name, minimum=1)


def check_output_path(path, name: str, *, folder: bool = False):
    """Refuse an output location that cannot be created: a file in the way, or a folder where a file goes.

    Every existing ancestor must be a folder; an existing ``path`` must be a
    folder when ``folder`` is True and must not be one otherwise.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "a.txt"; _ = f.write_text("x")
    >>> check_output_path(f / "x.png", "--output")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: --output: cannot write ...x.png: ...a.txt is a file, not a folder
    """
    path = Path(path)
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{name}: cannot write {path}: {parent} is a file, not a folder")
            break
    if path.exists():
        if folder and not path.is_dir():
            raise InputError(f"{name}: {path} exists and is not a folder")
        if not folder and path.is_dir():
            raise InputError(f"{name}: {path} is a directory")
    return path


def check_distinct_paths(outputs: dict, inputs: dict = None) -> None:
    """Refuse outputs that would overwrite each other or an input (``{option: path}`` each).

    The same file is recognised through symbolic links, relative paths and
    hard links (same device and inode).

    Examples
    --------
    >>> check_distinct_paths({"--output": "a.png", "--confidence": "./a.png"})
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: --confidence: a.png is also the --output file; give different paths
    """
    seen = {}
    for name, p in list((inputs or {}).items()) + list(outputs.items()):
        if p is None:
            continue
        keys = [os.path.realpath(p)]  # the same file through symbolic links or '..'
        try:
            st = os.stat(p)
            keys.append((st.st_dev, st.st_ino))  # the same file through a hard link
        except OSError:
            pass
        other = next((seen[k] for k in keys if k in seen), None)
        if other is not None and name in outputs:
            what = f"the {other} file" if other in outputs else f"the input {other}"
            raise InputError(f"{name}: {os.path.normpath(p)} is also {what}; give different paths")
        for k in keys:
            seen.setdefault(k, name)
