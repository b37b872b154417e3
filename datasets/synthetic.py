"""Synthetic images with known ground truth, written in the BSDS500 layout.

Images are piecewise-smooth textured regions with curved boundaries plus noise;
several simulated annotators label each image, differing slightly (boundary
jitter, and some annotators merge two adjacent regions), as human annotators of
BSDS500 do. The same readers, commands and benchmark run on it unchanged.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy import ndimage
from skimage.color import lab2rgb

from segensemble.atomic import atomic_write_bytes
from segensemble.validation import check_int, check_rng
from segensemble.errors import InputError
from segensemble.io import mat_bytes
from segensemble.boundarymaps import ground_truth_boundaries
from segensemble.io import write_image
from segensemble.segmentation import canonical_codes

__all__ = ["synthetic_image", "make_synthetic_dataset"]


def _smooth_field(gen, shape, sigma, amplitude):
    f = ndimage.gaussian_filter(gen.standard_normal(shape), sigma, mode="reflect")
    return f * (amplitude / (np.abs(f).max() + 1e-12))


def _colours(gen, k):
    cols = []
    while len(cols) < k:
        c = np.array([gen.uniform(25, 85), gen.uniform(-45, 45), gen.uniform(-45, 45)])
        if all(np.linalg.norm(c - d) >= 22 for d in cols) or len(cols) > 200:
            cols.append(c)
    return np.clip(lab2rgb(np.array(cols)[None, :, :])[0], 0, 1)


def _adjacent_pairs(lab):
    pairs = set()
    for a, b in ((lab[:, :-1], lab[:, 1:]), (lab[:-1, :], lab[1:, :])):
        d = a != b
        pairs.update(zip(np.minimum(a[d], b[d]).tolist(), np.maximum(a[d], b[d]).tolist()))
    return sorted(pairs)


def synthetic_image(shape=(160, 240), *, n_regions=None, n_annotators=None, noise=0.02, rng=None):
    """One synthetic image with its true regions and simulated annotations.

    Parameters
    ----------
    shape : (int, int), default (160, 240)
        Image height and width.
    n_regions : int, optional
        Number of true regions (default: random in 4..7).
    n_annotators : int, optional
        Number of annotations (default: random in 3..5).
    noise : float, default 0.02
        Standard deviation of the added Gaussian noise (intensity in [0, 1]).
    rng : None, int or numpy Generator

    Returns
    -------
    image : (H, W, 3) uint8
    truth : (H, W) int32, labels 0..k-1
    annotations : list of (H, W) int32, labels from 1 (BSDS convention)

    Examples
    --------
    >>> img, truth, ann = synthetic_image((40, 60), n_regions=3, n_annotators=3, rng=0)
    >>> img.shape, int(truth.max()) + 1, len(ann)
    ((40, 60, 3), 3, 3)
    """
    gen = check_rng(rng)
    if len(shape) != 2 or min(shape) < 8:
        raise InputError(f"shape: expected (height, width) of at least 8 x 8, got {shape!r}")
    h, w = int(shape[0]), int(shape[1])
    k = int(gen.integers(4, 8)) if n_regions is None else check_int(n_regions, "n_regions", minimum=1)
    n_ann = int(gen.integers(3, 6)) if n_annotators is None else check_int(n_annotators, "n_annotators", minimum=1)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    amp = 0.08 * min(h, w)
    wy = yy + _smooth_field(gen, (h, w), min(h, w) / 6, amp)
    wx = xx + _smooth_field(gen, (h, w), min(h, w) / 6, amp)
    seeds = gen.uniform([0, 0], [h, w], size=(k, 2))
    d = (wy[..., None] - seeds[:, 0]) ** 2 + (wx[..., None] - seeds[:, 1]) ** 2
    truth = canonical_codes(np.argmin(d, axis=2).ravel())[0].reshape(h, w)
    k = int(truth.max()) + 1
    cols = _colours(gen, k)
    img = np.zeros((h, w, 3))
    for r in range(k):
        mask = truth == r
        kind = gen.integers(0, 3)
        if kind == 0:
            tex = np.zeros((h, w))
        elif kind == 1:
            theta, freq = gen.uniform(0, np.pi), gen.uniform(0.15, 0.45)
            tex = 0.07 * np.sin(freq * (np.cos(theta) * xx + np.sin(theta) * yy))
        else:
            tex = _smooth_field(gen, (h, w), 2.0, 0.09)
        grad = gen.uniform(-0.08, 0.08) * (xx / w - 0.5) + gen.uniform(-0.08, 0.08) * (yy / h - 0.5)
        img[mask] = cols[r] + (tex + grad)[mask][:, None]
    img += gen.normal(0, noise, size=img.shape)
    image = np.round(np.clip(img, 0, 1) * 255).astype(np.uint8)
    annotations = []
    for _ in range(n_ann):
        jy = np.clip(np.round(yy + _smooth_field(gen, (h, w), 4.0, 1.5)), 0, h - 1).astype(int)
        jx = np.clip(np.round(xx + _smooth_field(gen, (h, w), 4.0, 1.5)), 0, w - 1).astype(int)
        ann = truth[jy, jx]
        if k > 2 and gen.random() < 0.35:
            pairs = _adjacent_pairs(ann)
            a, b = pairs[int(gen.integers(len(pairs)))]
            ann = np.where(ann == b, a, ann)
        annotations.append(canonical_codes(ann.ravel())[0].reshape(h, w) + 1)
    return image, truth.astype(np.int32), annotations


def _ground_truth_mat(annotations) -> bytes:
    cell = np.empty((1, len(annotations)), dtype=object)
    for i, ann in enumerate(annotations):
        cell[0, i] = {
            "Segmentation": ann.astype(np.uint16),
            "Boundaries": ground_truth_boundaries(ann).astype(np.uint8),
        }
    return mat_bytes({"groundTruth": cell})


def make_synthetic_dataset(dest, *, n_images: int = 10, shape=(160, 240), split: str = "test", seed: int = 0) -> Path:
    """Write a small synthetic dataset in the BSDS500 layout.

    Writes ``dest/data/images/<split>/synNNNN.png`` and
    ``dest/data/groundTruth/<split>/synNNNN.mat`` (``groundTruth`` cell of
    structs with ``Segmentation`` and ``Boundaries``). Deterministic for a
    given seed; files that already exist are rewritten identically.

    Parameters
    ----------
    dest : path
    n_images : int, default 10
    shape : (int, int), default (160, 240)
    split : str, default 'test'
    seed : int, default 0

    Returns
    -------
    Path
        ``dest``, usable as a ``--bsds`` root.

    Examples
    --------
    >>> import tempfile
    >>> root = make_synthetic_dataset(tempfile.mkdtemp(), n_images=1, shape=(30, 40))
    >>> sorted(p.name for p in (root / "data" / "images" / "test").iterdir())
    ['syn0001.png']
    """
    n = check_int(n_images, "n_images", minimum=1)
    dest = Path(dest)
    img_dir = dest / "data" / "images" / split
    gt_dir = dest / "data" / "groundTruth" / split
    seeds = np.random.SeedSequence(int(seed)).spawn(n)
    for i in range(n):
        image, _, annotations = synthetic_image(shape, rng=np.random.default_rng(seeds[i]))
        name = f"syn{i + 1:04d}"
        write_image(img_dir / f"{name}.png", image)
        atomic_write_bytes(gt_dir / f"{name}.mat", _ground_truth_mat(annotations))
    return dest
