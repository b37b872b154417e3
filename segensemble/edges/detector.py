"""The learned boundary detector: gradient-boosted trees on oriented-gradient features, then non-maximum suppression.

A model file is gzip-compressed JSON (no pickle): the format name, the
feature set it was trained on, the prediction stride and one LightGBM text
model per stage (a second stage reads the first stage's probabilities
through :func:`segensemble.edges.features.context_features`). The model
that ships in the package was trained on BSDS500 train and selected on val
by ``benchmarks/train_boundary_detector.py``.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from segensemble.errors import FileFormatError, InputError, first_line
from segensemble.threads import available_cores, thread_map
from segensemble.validation import check_image, check_int
from segensemble.atomic import atomic_write_bytes
from segensemble.checks import MAX_PIXELS
from segensemble.memo import ImageMemo, image_key
from segensemble.edges.booster import load_booster
from segensemble.edges.features import FEATURE_SETS, boundary_features, context_features
from segensemble.evaluation.nms import non_maximum_suppression

__all__ = ["BoundaryModel", "MODEL_FORMAT", "FEATURE_SET", "DEFAULT_MODEL", "RECOMMENDED_MODEL", "load_boundary_model",
           "detect_boundaries", "predict_probability", "boundary_models"]

MODEL_FORMAT = "segensemble-boundary-model"
#: The feature set of :func:`segensemble.edges.features.boundary_features` the shipped model reads (a model
#: names the one it needs; every set in ``FEATURE_SETS`` is computed).
FEATURE_SET = FEATURE_SETS[0]
#: The model that ships in the package: the library's default, which recipes up to ``default@8`` use without naming it.
DEFAULT_MODEL = Path(__file__).parent / "models" / "boundary-v1.json.gz"
#: The shipped model with the best boundary scores (BSDS500 test ODS F 0.7419, AP 0.7991; ``boundary-v1`` 0.7360 /
#: 0.7928), at ``boundary-v3``'s speed: the default of ``segensemble edges``.
RECOMMENDED_MODEL = "boundary-v4"
#: The last image's raw probability, by content, strides and model (the detector is deterministic): a recipe's
#: ucm member and its boundary evidence share it. Kept at any size (one float32 plane).
_RECENT = ImageMemo(max_pixels=MAX_PIXELS)


@dataclass(frozen=True)
class BoundaryModel:
    """A trained detector: LightGBM boosters per stage, the stride they predict at, and where it came from.

    Attributes
    ----------
    stages : tuple of boosters
        LightGBM models (:class:`~segensemble.edges.booster.TextBooster`
        when read from a file; any object with ``predict(rows,
        num_threads=1)`` and ``model_to_string()``, e.g. ``lightgbm.Booster``).
        Stage 1 reads :func:`boundary_features`; stage ``s > 1`` those and
        the :func:`context_features` of stage ``s - 1``.
    strides : tuple of int
        Per stage: predict on every ``stride``-th pixel of each axis and
        interpolate bilinearly (1: every pixel). A first stage that only
        feeds the context of the next can be sparser.
    info : dict
        What the training script recorded (data, settings, validation scores).
    features : str
        The feature set of :func:`~segensemble.edges.features.boundary_features` it reads.
    candidates : float or None
        A later stage predicts only where the previous stage's probability
        reaches this (elsewhere it keeps that probability); None: everywhere.
    """

    stages: tuple
    strides: tuple
    info: dict
    features: str = FEATURE_SET
    candidates: float | None = None

    def to_file(self, path) -> Path:
        """Write the model as gzip-compressed JSON (atomically)."""
        doc = {"format": MODEL_FORMAT, "features": self.features, "strides": list(self.strides), "info": self.info,
               "stages": [b.model_to_string() for b in self.stages]}
        if self.candidates is not None:
            doc["candidates"] = self.candidates
        return atomic_write_bytes(path, gzip.compress(json.dumps(doc).encode(), mtime=0))


def boundary_models() -> list:
    """Names of the detector models that ship in the package (``load_boundary_model(name)`` reads one).

    Examples
    --------
    >>> "boundary-v1" in boundary_models()
    True
    """
    return sorted(p.name[: -len(".json.gz")] for p in DEFAULT_MODEL.parent.glob("*.json.gz"))


def load_boundary_model(path=None) -> BoundaryModel:
    """Read a boundary model file, or a shipped model by name (default: ``boundary-v1``, the one recipes use).

    :data:`RECOMMENDED_MODEL` (``"boundary-v4"``) names the shipped model with the best boundary scores.

    Raises
    ------
    FileFormatError
        Not a boundary model file, or one for another feature set.

    Examples
    --------
    >>> load_boundary_model().strides
    (3, 2)
    """
    if path is None:
        path = DEFAULT_MODEL
    elif isinstance(path, (str, Path)) and str(path) in boundary_models():
        path = DEFAULT_MODEL.parent / f"{path}.json.gz"
    return _load(str(path))


#: Largest decompressed model read (bytes): the shipped model is 4.3 MB of JSON; a gzip bomb stops here.
MAX_MODEL_BYTES = 64 * 1024 * 1024


def _read_gzip(path: str, limit: int = MAX_MODEL_BYTES) -> bytes:
    """A gzip file's content, refused past ``limit`` bytes (read in chunks; nothing larger is ever held)."""
    out, size = [], 0
    with gzip.open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            size += len(chunk)
            if size > limit:
                raise FileFormatError(f"{path}: decompresses to more than {limit:,} bytes; not a boundary model")
            out.append(chunk)
    return b"".join(out)


class _silent_stderr:
    """Standard error closed at the file-descriptor level (for C++ libraries that write to it directly)."""

    def __enter__(self):
        import os
        import sys

        sys.stderr.flush()
        self.saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)

    def __exit__(self, *exc):
        import os

        os.dup2(self.saved, 2)
        os.close(self.saved)


@lru_cache(maxsize=4)
def _load(path: str) -> BoundaryModel:
    try:
        doc = json.loads(_read_gzip(path))
    except FileFormatError:
        raise
    except (OSError, EOFError, ValueError, gzip.BadGzipFile) as exc:
        raise FileFormatError(f"{path}: not a boundary model file ({type(exc).__name__})") from exc
    if not isinstance(doc, dict) or doc.get("format") != MODEL_FORMAT:
        raise FileFormatError(f"{path}: not a boundary model file (format {MODEL_FORMAT!r} expected)")
    if doc.get("features") not in FEATURE_SETS:
        raise FileFormatError(f"{path}: a model for features {doc.get('features')!r}; this version computes "
                              f"{' and '.join(repr(f) for f in FEATURE_SETS)}")
    candidates = doc.get("candidates")
    if candidates is not None and not (isinstance(candidates, (int, float)) and not isinstance(candidates, bool)
                                       and 0.0 <= candidates < 1.0):
        raise FileFormatError(f"{path}: candidates: expected a probability in [0, 1), got {candidates!r}")
    stages, strides = doc.get("stages"), doc.get("strides")
    if not (isinstance(stages, list) and 1 <= len(stages) <= 4 and all(isinstance(t, str) for t in stages)):
        raise FileFormatError(f"{path}: stages: expected a list of 1 to 4 LightGBM model texts")
    if not (isinstance(strides, list) and len(strides) == len(stages)
            and all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 16 for v in strides)):
        raise FileFormatError(f"{path}: strides: expected one whole number from 1 to 16 per stage, got {strides!r}")
    try:
        with _silent_stderr():  # LightGBM prints "[LightGBM] [Fatal] ..." itself before raising
            boosters = tuple(load_booster(t) for t in stages)
    except (ValueError, TypeError) as exc:  # ModelTextError is a ValueError
        raise FileFormatError(f"{path}: stages: not a readable LightGBM model ({first_line(exc)})") from exc
    return BoundaryModel(boosters, tuple(strides), doc.get("info", {}), doc["features"],
                         None if candidates is None else float(candidates))


#: Fewest rows a thread predicts when :func:`predict_probability` splits the rows between threads.
MIN_ROWS_PER_THREAD = 4096


def _predict_rows(booster, rows, workers: int) -> np.ndarray:
    """``booster.predict`` of the rows, in up to ``workers`` threads on contiguous blocks of them.

    Each row's prediction reads that row alone, so the blocks' predictions are the whole's. The C call
    releases the GIL, and LightGBM's prediction on one model with one iteration count is safe from several
    threads (each call builds its own predictor).
    """
    parts = min(workers, len(rows) // MIN_ROWS_PER_THREAD)
    if parts <= 1:
        return booster.predict(rows, num_threads=1)
    bounds = np.linspace(0, len(rows), parts + 1).astype(np.int64)
    blocks = [rows[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    return np.concatenate(thread_map(lambda block: booster.predict(block, num_threads=1), blocks, parts,
                                     name="predict"))


def predict_probability(booster, features, stride: int, *, previous=None, candidates=None,
                        n_jobs: int = 1) -> np.ndarray:
    """One stage's probability: ``booster`` on every ``stride``-th pixel of ``features``, interpolated bilinearly.

    ``features`` is (H, W, F), or a sequence of (H, W, F_i) and (H, W) arrays
    read as their concatenation along the last axis (only the predicted
    pixels are copied); pixel (y, x) of the result reads the subgrid at (y, x) / stride. With ``previous``
    (the last stage's (H, W) probability) and ``candidates``, only the subgrid points where ``previous``
    reaches ``candidates`` are predicted; the others keep ``previous``. ``n_jobs`` threads predict blocks of the
    rows at once (-1: every core); the probabilities do not depend on it.

    Examples
    --------
    >>> class Column:  # a stand-in booster that returns feature 0
    ...     def predict(self, rows, num_threads=1):
    ...         return rows[:, 0]
    >>> x = np.broadcast_to(np.arange(6, dtype=np.float32), (4, 6))[..., None]
    >>> predict_probability(Column(), x, 2)[0].tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 4.0]
    """
    from scipy import ndimage

    workers = available_cores(n_jobs)
    parts = list(features) if isinstance(features, (list, tuple)) else [features]
    h, w = parts[0].shape[:2]
    if previous is None or candidates is None:
        # one feature after the other (the rows column-major): each plane is copied in one contiguous run
        sub = np.concatenate([np.moveaxis(np.atleast_3d(f[::stride, ::stride]), -1, 0) for f in parts], axis=0)
        rows = sub.reshape(len(sub), -1).T
        p = _predict_rows(booster, rows, workers).reshape(sub.shape[1:]).astype(np.float32)
    else:
        p = np.asarray(previous, dtype=np.float32)[::stride, ::stride].copy()
        where = np.flatnonzero(p.ravel() >= candidates)
        if len(where):  # only the candidates' rows are gathered (a few % of the subgrid)
            y, x = np.divmod(where, p.shape[1])
            y, x = y * stride, x * stride
            rows = np.concatenate([np.asarray(f[y, x]).reshape(len(where), -1) for f in parts], axis=1)
            p.ravel()[where] = _predict_rows(booster, rows, workers)
    if stride == 1:
        return p
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32) / stride  # pixel (y, x) is subgrid point (y, x) / stride
    return ndimage.map_coordinates(p, [yy, xx], order=1, mode="nearest").astype(np.float32)


def detect_boundaries(image, *, model=None, nms: bool = True, stride: int | None = None,
                      n_jobs: int = 1) -> np.ndarray:
    """Soft boundary map of an image: the learned probability that a human marks a boundary there.

    Parameters
    ----------
    image : (H, W[, C]) array
        Any image segensemble accepts (BSDS500 size, 481 x 321, is what the model was trained at).
    model : BoundaryModel or path, optional
        Default: the model that ships in the package (:data:`DEFAULT_MODEL`).
    nms : bool, default True
        Thin the map by :func:`segensemble.evaluation.nms.non_maximum_suppression` (what the Berkeley
        boundary benchmark expects); False gives the raw probability.
    stride : int, optional
        Prediction stride of every stage (default: the model's strides); 1 predicts every pixel (slower).
    n_jobs : int, default 1
        Threads that compute the features and predict at once (-1: every core); the map does not depend on it.

    Returns
    -------
    (H, W) float32 array in [0, 1]

    References
    ----------
    D. Martin, C. Fowlkes, J. Malik, IEEE TPAMI 26(5), 2004; P. Dollár, C. L. Zitnick, IEEE TPAMI 37(8), 2015;
    Z. Tu, X. Bai, "Auto-context and its application to high-level vision tasks", IEEE TPAMI 32(10), 2010.

    Examples
    --------
    The strongest response of a row lies at the step between columns 29 and 30 (within two pixels):
    >>> img = np.zeros((40, 60, 3)); img[:, 30:] = 1
    >>> e = detect_boundaries(img)
    >>> abs(int(np.argmax(e[20])) - 29.5) <= 2
    True
    """
    img = check_image(image)
    if model is None or isinstance(model, (str, Path)):
        model = load_boundary_model(model)
    elif not isinstance(model, BoundaryModel):
        raise InputError(f"model: expected a BoundaryModel or a path, got {type(model).__name__}")
    if stride is None:
        steps = model.strides
    else:
        steps = (check_int(stride, "stride", minimum=1, maximum=8),) * len(model.stages)
    available_cores(n_jobs)  # checked even when the map is remembered
    model_seen, p = _RECENT.get(image_key(img), (steps, id(model)),
                                lambda: (model, _probability(img, model, steps, n_jobs)),
                                pixels=img.shape[0] * img.shape[1])
    if model_seen is not model:  # another model at the id of a collected one
        p = _probability(img, model, steps, n_jobs)
    return (non_maximum_suppression(p) if nms else p.copy()).astype(np.float32)


def _probability(img, model, steps, n_jobs) -> np.ndarray:
    """The model's raw probability of every pixel (the stages in turn, at their strides), clipped to [0, 1]."""
    features = boundary_features(img, stack=False, feature_set=model.features, n_jobs=n_jobs)
    p = predict_probability(model.stages[0], features, steps[0], n_jobs=n_jobs)
    for booster, step in zip(model.stages[1:], steps[1:]):
        p = predict_probability(booster, features + context_features(p, stack=False), step, previous=p,
                                candidates=model.candidates, n_jobs=n_jobs)
    return np.clip(p, 0.0, 1.0).astype(np.float32)
