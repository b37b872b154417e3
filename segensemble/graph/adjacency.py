"""Region adjacency on label maps: pairs of touching regions, merging of small regions.

Shared by segmenters (normalized cuts' superpixel graph), consensus (the
boundary-merge atom graph) and post-processing (small-region merging).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from segensemble.abstentions import separation_share
from segensemble.segmentation import canonical_codes
from segensemble.features import region_means

__all__ = ["adjacent_pairs", "pair_pixel_values", "merge_small_regions", "atom_adjacency"]


def adjacent_pairs(labels: np.ndarray, *, return_inverse: bool = False):
    """Unordered pairs of 4-adjacent regions (a < b) and their shared border length.

    With ``return_inverse``, also the mask of the 4-adjacent pixel pairs
    (horizontal pairs first, then vertical) that straddle a border, and the
    pair index of each of them — to average any per-pixel quantity along
    every border.

    Examples
    --------
    >>> pairs, length = adjacent_pairs(np.array([[0, 0, 1], [2, 2, 1]]))
    >>> pairs.tolist(), length.tolist()
    ([[0, 1], [0, 2], [1, 2]], [1, 2, 1])
    """
    a = np.concatenate([labels[:, :-1].ravel(), labels[:-1, :].ravel()])
    b = np.concatenate([labels[:, 1:].ravel(), labels[1:, :].ravel()])
    d = a != b
    lo, hi = np.minimum(a[d], b[d]).astype(np.int64), np.maximum(a[d], b[d]).astype(np.int64)
    k = int(labels.max()) + 1
    key, inverse, counts = np.unique(lo * k + hi, return_inverse=True, return_counts=True)
    pairs = np.stack([key // k, key % k], axis=1)
    if return_inverse:
        return pairs, counts, d, inverse.ravel()
    return pairs, counts


def pair_pixel_values(image, straddle) -> tuple[np.ndarray, np.ndarray]:
    """Values of a per-pixel map at both pixels of the border-straddling 4-adjacent pixel pairs.

    ``straddle`` is the mask :func:`adjacent_pairs` returns with
    ``return_inverse`` (horizontal pairs first, then vertical); the results
    line up with its ``inverse``, so ``np.bincount(inverse, weights=f(a, b))``
    sums any function of the two values along every border.

    Examples
    --------
    >>> labels = np.array([[0, 0, 1]])
    >>> _, _, straddle, _ = adjacent_pairs(labels, return_inverse=True)
    >>> [v.tolist() for v in pair_pixel_values(np.array([[0.0, 0.2, 0.9]]), straddle)]
    [[0.2], [0.9]]
    """
    g = np.asarray(image, dtype=np.float64)
    first = np.concatenate([g[:, :-1].ravel(), g[:-1, :].ravel()])[straddle]
    second = np.concatenate([g[:, 1:].ravel(), g[1:, :].ravel()])[straddle]
    return first, second


def merge_small_regions(labels: np.ndarray, features: np.ndarray, min_size: int, max_passes: int = 20) -> np.ndarray:
    """Merge every region smaller than ``min_size`` pixels into its most similar neighbour.

    Similarity is the distance between mean feature vectors. Each pass merges
    all small regions at once (union-find over the chosen pairs), so the cost is
    a few vectorised passes, not one per region.

    Returns
    -------
    (H, W) int32 labels numbered 0..k-1.

    Examples
    --------
    >>> lab = np.array([[0, 0, 1, 1], [0, 0, 1, 2]])
    >>> feat = np.array([[0.0, 0, 5, 5], [0, 0, 5, 4.5]])
    >>> merge_small_regions(lab, feat, 2).tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1]]
    """
    lab = canonical_codes(labels.ravel())[0].reshape(labels.shape).astype(np.int64)
    feats = features if features.ndim == 3 else features[:, :, None]
    for _ in range(max_passes):
        k = int(lab.max()) + 1
        counts = np.bincount(lab.ravel(), minlength=k)
        small = counts < min_size
        if not small.any() or k == 1:
            break
        means = region_means(feats, lab)
        pairs, _ = adjacent_pairs(lab)
        both = np.concatenate([pairs, pairs[:, ::-1]])
        src = both[small[both[:, 0]]]
        if len(src) == 0:
            break
        dist = np.linalg.norm(means[src[:, 0]] - means[src[:, 1]], axis=1)
        order = np.lexsort((dist, src[:, 0]))
        src = src[order]
        first = np.r_[True, src[1:, 0] != src[:-1, 0]]
        chosen = src[first]
        g = sp.coo_matrix((np.ones(len(chosen)), (chosen[:, 0], chosen[:, 1])), shape=(k, k))
        _, comp = connected_components(g, directed=False)
        lab = comp[lab]
        lab = canonical_codes(lab.ravel())[0].reshape(lab.shape).astype(np.int64)
    return lab.astype(np.int32)


def atom_adjacency(index, labels, gradient=None, *, member_weights=None):
    """Adjacent atom pairs with their border length, member vote and mean gradient.

    Parameters
    ----------
    index : (H, W) int array
        Atom of every pixel.
    labels : (n_atoms, m) int array
        Member labels of every atom.
    gradient : (H, W) array, optional
        Boundary-strength image; averaged over the two pixels of every
        4-adjacent pixel pair on the border.
    member_weights : (m,) array, optional
        Weights of the members in the vote, summing to 1 (equal by default).

    Returns
    -------
    pairs : (E, 2) int array (a < b)
    length : (E,) float array
        Number of 4-adjacent pixel pairs across the border.
    vote : (E,) float array
        (Weighted) share of members that separate the two atoms.
    grad : (E,) float array or None

    Examples
    --------
    >>> idx = np.array([[0, 0, 1], [2, 2, 1]])
    >>> L = np.array([[0, 0], [1, 0], [1, 1]])
    >>> pairs, length, vote, _ = atom_adjacency(idx, L)
    >>> pairs.tolist(), length.tolist(), vote.tolist()
    ([[0, 1], [0, 2], [1, 2]], [1.0, 2.0, 1.0], [0.5, 1.0, 0.5])
    """
    pairs, counts, d, inverse = adjacent_pairs(index, return_inverse=True)
    length = counts.astype(np.float64)
    m = labels.shape[1]
    w = np.full(m, 1.0 / m) if member_weights is None else np.asarray(member_weights, dtype=np.float64)
    vote = separation_share(labels[pairs[:, 0]], labels[pairs[:, 1]], w)  # over the members that label both
    grad = None
    if gradient is not None:
        ga, gb = pair_pixel_values(gradient, d)
        grad = np.bincount(inverse, weights=(ga + gb) / 2, minlength=len(pairs)) / length
    return pairs, length, vote, grad
