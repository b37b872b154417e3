"""LightGBM text models predicted through LightGBM's C interface, without importing the ``lightgbm`` package.

The ``lightgbm`` Python package imports scikit-learn (and with it SciPy's
statistics) whenever scikit-learn is installed, for its estimator classes:
about a second of start-up that a command predicting with a stored model
does not need. :class:`TextBooster` loads the shared library that package
ships (``lightgbm/lib/lib_lightgbm.*``, located without importing the
package) and calls the functions prediction needs —
``LGBM_BoosterLoadModelFromString`` and ``LGBM_BoosterPredictForMat`` —
with the arguments ``lightgbm.Booster(model_str=...).predict(rows,
num_threads=n)`` passes them, so the probabilities are the same numbers.
Where the shared library is not found (an install that keeps it elsewhere),
:func:`load_booster` returns a ``lightgbm.Booster``, which predicts alike.

:func:`load_booster` gives these only for models that
:class:`~segensemble.edges.forest.CompiledForest` does not walk itself (the
shipped detector models it does: the same numbers, faster); they remain the
reference its tests compare with.

References
----------
LightGBM C API (``c_api.h``): https://lightgbm.readthedocs.io/en/stable/C-API.html
"""

from __future__ import annotations

import ctypes
import importlib.util
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

from segensemble.edges.forest import CompiledForest, UnsupportedModel

__all__ = ["TextBooster", "ModelTextError", "load_booster", "shared_library"]

# c_api.h constants
_FLOAT32, _FLOAT64 = 0, 1
_ROW_MAJOR = 1
_PREDICT_NORMAL = 0


class ModelTextError(ValueError):
    """LightGBM could not read a model text (the library's own message)."""


@lru_cache(maxsize=1)
def shared_library():
    """LightGBM's shared library (a :class:`ctypes.CDLL`), or None where the installed package has none to find.

    Examples
    --------
    >>> shared_library() is None or hasattr(shared_library(), "LGBM_BoosterPredictForMat")
    True
    """
    spec = importlib.util.find_spec("lightgbm")  # finds the package without running it
    if spec is None or not spec.submodule_search_locations:
        return None
    name = {"win32": "lib_lightgbm.dll", "darwin": "lib_lightgbm.dylib"}.get(sys.platform, "lib_lightgbm.so")
    for folder in spec.submodule_search_locations:
        for path in (Path(folder) / "lib" / name, Path(folder) / name):
            if path.is_file():
                try:
                    lib = ctypes.cdll.LoadLibrary(str(path))
                except OSError:
                    return None
                lib.LGBM_GetLastError.restype = ctypes.c_char_p
                return lib
    return None


def _check(lib, code: int) -> None:
    if code != 0:
        raise ModelTextError(lib.LGBM_GetLastError().decode("utf-8", "replace"))


class TextBooster:
    """A LightGBM model read from its text, predicting like ``lightgbm.Booster(model_str=text)``.

    Parameters
    ----------
    text : str
        The model as LightGBM writes it (``Booster.model_to_string()``).

    Raises
    ------
    ModelTextError
        LightGBM cannot read ``text`` (its message).
    RuntimeError
        LightGBM's shared library was not found (use :func:`load_booster`, which falls back to the package).

    Examples
    --------
    >>> import gzip, json
    >>> from segensemble.edges.detector import DEFAULT_MODEL
    >>> text = json.loads(gzip.open(DEFAULT_MODEL).read())["stages"][0]
    >>> booster = TextBooster(text)
    >>> p = booster.predict(np.zeros((3, booster.num_feature()), np.float32))
    >>> p.shape, bool(((p > 0) & (p < 1)).all())
    ((3,), True)
    """

    def __init__(self, text: str):
        lib = shared_library()
        if lib is None:
            raise RuntimeError("LightGBM's shared library was not found next to the lightgbm package")
        self._lib = lib
        self._text = text
        self._handle = ctypes.c_void_p()
        iterations, classes = ctypes.c_int(0), ctypes.c_int(0)
        _check(lib, lib.LGBM_BoosterLoadModelFromString(text.encode("utf-8"), ctypes.byref(iterations),
                                                        ctypes.byref(self._handle)))
        _check(lib, lib.LGBM_BoosterGetNumClasses(self._handle, ctypes.byref(classes)))
        self.num_classes = int(classes.value)
        features = ctypes.c_int(0)
        _check(lib, lib.LGBM_BoosterGetNumFeature(self._handle, ctypes.byref(features)))
        self._num_features = int(features.value)

    def num_feature(self) -> int:
        """Number of features (columns) the model reads."""
        return self._num_features

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._lib.LGBM_BoosterFree(handle)
            self._handle = None

    def model_to_string(self) -> str:
        """The model text it was read from."""
        return self._text

    def __reduce__(self):  # pickled as its text (the library handle is this process's)
        return TextBooster, (self._text,)

    def predict(self, rows, num_threads: int = 1) -> np.ndarray:
        """Predicted values (probabilities of a binary model) of the rows of a 2-D array, all trees.

        ``rows`` is read as float32 or float64 (other types are converted to float32, as LightGBM does).
        """
        rows = np.asarray(rows)
        if rows.ndim != 2:
            raise ValueError(f"rows: expected a 2-D array, got {rows.ndim} dimensions")
        data = np.ascontiguousarray(rows, dtype=rows.dtype if rows.dtype in (np.float32, np.float64) else np.float32)
        n = data.shape[0] * self.num_classes
        out = np.empty(n, dtype=np.float64)
        got = ctypes.c_int64(0)
        _check(self._lib, self._lib.LGBM_BoosterPredictForMat(
            self._handle, data.ctypes.data_as(ctypes.c_void_p),
            ctypes.c_int(_FLOAT32 if data.dtype == np.float32 else _FLOAT64),
            ctypes.c_int32(data.shape[0]), ctypes.c_int32(data.shape[1]), ctypes.c_int(_ROW_MAJOR),
            ctypes.c_int(_PREDICT_NORMAL), ctypes.c_int(0), ctypes.c_int(-1),
            f"num_threads={int(num_threads)}".encode(), ctypes.byref(got), out.ctypes.data_as(ctypes.c_void_p)))
        if got.value != n:
            raise RuntimeError(f"LightGBM returned {got.value} predictions for {n}")
        return out if self.num_classes == 1 else out.reshape(data.shape[0], self.num_classes)


def load_booster(text: str):
    """A model text as a :class:`~segensemble.edges.forest.CompiledForest` (the same predictions, 2–3x faster),
    or, for a model it does not walk itself, a :class:`TextBooster` — or a ``lightgbm.Booster`` where the shared
    library is not found.

    Raises
    ------
    ModelTextError
        LightGBM cannot read ``text``.

    Examples
    --------
    >>> load_booster("not a model")
    Traceback (most recent call last):
    ...
    segensemble.edges.booster.ModelTextError: Model file doesn't specify the number of classes
    """
    try:
        return CompiledForest(text)
    except UnsupportedModel:
        pass
    if shared_library() is not None:
        return TextBooster(text)
    import lightgbm

    try:
        return lightgbm.Booster(model_str=text)
    except lightgbm.basic.LightGBMError as exc:
        raise ModelTextError(str(exc)) from exc
