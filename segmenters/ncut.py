"""Normalized cuts on a superpixel graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import skimage.graph
import skimage.segmentation
from scipy.linalg import eigh

from segensemble.validation import check_image, check_int, check_rng
from segensemble.features import boundary_strength, lab_colour, region_means, standardise, texture_features
from segensemble.segmentation import Segmentation
from segensemble.graph.adjacency import adjacent_pairs
from segensemble.segmenters._common import check_choice, check_eigen_size, check_positive, seed_of
from segensemble.segmenters._registry import REGISTRY
from segensemble.errors import InputError

__all__ = ["ncut", "discretize_yu_shi"]


def _superpixel_graph(img, sp_labels, sigma_colour, sigma_texture, sigma_boundary):
    """Affinity between adjacent superpixels (colour, texture, intervening contour) x border length."""
    k = int(sp_labels.max()) + 1
    colour = region_means(lab_colour(img), sp_labels)
    texture = region_means(standardise(texture_features(img)), sp_labels)
    edge = boundary_strength(img)
    pairs, length = adjacent_pairs(sp_labels)
    # mean boundary strength on the pixels along each shared border
    a = np.concatenate([sp_labels[:, :-1].ravel(), sp_labels[:-1, :].ravel()])
    b = np.concatenate([sp_labels[:, 1:].ravel(), sp_labels[1:, :].ravel()])
    e = np.concatenate([np.maximum(edge[:, :-1], edge[:, 1:]).ravel(), np.maximum(edge[:-1, :], edge[1:, :]).ravel()])
    d = a != b
    key = np.minimum(a[d], b[d]).astype(np.int64) * k + np.maximum(a[d], b[d])
    sums = np.bincount(np.searchsorted(pairs[:, 0] * k + pairs[:, 1], key), weights=e[d], minlength=len(pairs))
    contour = sums / length
    dc = np.linalg.norm(colour[pairs[:, 0]] - colour[pairs[:, 1]], axis=1)
    dt = np.linalg.norm(texture[pairs[:, 0]] - texture[pairs[:, 1]], axis=1)
    # scales relative to the typical distance, floored so that flat images (median 0) stay connected;
    # the mean guards against a few strong texture responses along colour edges disconnecting a region
    sc = sigma_colour * max(float(np.median(dc)), 2.0)
    st = sigma_texture * max(float(np.median(dt)), float(np.mean(dt)), 0.5)
    w = np.exp(-(dc / sc) ** 2) * np.exp(-(dt / st) ** 2) * np.exp(-contour / sigma_boundary)
    w = w * length + 1e-12
    W = sp.coo_matrix((np.r_[w, w], (np.r_[pairs[:, 0], pairs[:, 1]], np.r_[pairs[:, 1], pairs[:, 0]])), shape=(k, k))
    return W.tocsr()


def discretize_yu_shi(embedding: np.ndarray, gen: np.random.Generator, n_iter: int = 50) -> np.ndarray:
    """Discrete K-way partition nearest to a spectral embedding (Yu & Shi 2003).

    Rows of the (n, K) eigenvector matrix are normalised; an orthonormal
    rotation R and a one-hot assignment X are alternately optimised
    (X = argmax of rows of V R; R from the SVD of X^T V). Every cluster is then
    made non-empty by moving to it the object that fits it best among those of
    clusters with more than one member, so exactly K clusters come out
    (n >= K).

    Examples
    --------
    >>> V = np.array([[1.0, 0.1], [0.9, 0.0], [0.1, 1.0], [0.0, 0.8]])
    >>> lab = discretize_yu_shi(V, np.random.default_rng(0))
    >>> bool(lab[0] == lab[1] != lab[2] == lab[3])
    True
    """
    n, k = embedding.shape
    V = embedding / (np.linalg.norm(embedding, axis=1, keepdims=True) + 1e-12)
    R = np.zeros((k, k))
    R[:, 0] = V[gen.integers(n)]
    c = np.zeros(n)
    for j in range(1, k):
        c += np.abs(V @ R[:, j - 1])
        R[:, j] = V[int(np.argmin(c))]
    last = None
    for _ in range(n_iter):
        labels = np.argmax(V @ R, axis=1)
        X = np.zeros((n, k))
        X[np.arange(n), labels] = 1
        U, _, Wt = np.linalg.svd(X.T @ V)
        R = (U @ Wt).T
        if last is not None and np.array_equal(labels, last):
            break
        last = labels
    score = V @ R
    labels = np.argmax(score, axis=1)
    for c_empty in range(k):
        if np.any(labels == c_empty):
            continue
        sizes = np.bincount(labels, minlength=k)
        movable = sizes[labels] > 1
        cand = np.flatnonzero(movable)
        labels[cand[int(np.argmax(score[cand, c_empty] - score[cand, labels[cand]]))]] = c_empty
    return labels


def _superpixels(img, n, compactness, k):
    """SLIC superpixels; at least k of them (without connectivity, then a regular grid, if needed)."""
    h, w = img.shape[:2]
    if k > h * w:
        raise InputError(f"n_segments: expected at most the number of pixels ({h * w}), got {k}")
    for enforce in (True, False):
        lab = skimage.segmentation.slic(
            img, n_segments=n, compactness=compactness, start_label=0, channel_axis=-1, convert2lab=True,
            enforce_connectivity=enforce,
        )
        lab = Segmentation(lab).labels
        if lab.max() + 1 >= k:
            return lab
    side = max(1, int(np.floor(np.sqrt(h * w / max(n, k)))))
    while side > 1 and (-(-h // side)) * (-(-w // side)) < k:
        side -= 1
    yy, xx = np.mgrid[0:h, 0:w]
    return Segmentation((yy // side) * (-(-w // side)) + xx // side).labels


@REGISTRY.register("ncut", imports=("skimage.segmentation:slic", "skimage.graph:rag_mean_color",
                                     "skimage.graph:cut_normalized"))
def ncut(
    image, *, n_segments: int = 8, mode: str = "kway", n_superpixels: int = 400, compactness: float = 10.0,
    sigma_colour: float = 1.0, sigma_texture: float = 1.5, sigma_boundary: float = 0.15, threshold: float = 0.2,
    rng=None,
) -> Segmentation:
    """Normalized cuts (Shi & Malik 2000) on a graph of SLIC superpixels.

    Nodes are superpixels; adjacent superpixels are linked with affinity
    ``exp(-(dc/sc)^2) exp(-(dt/st)^2) exp(-b/sb)`` times their shared border
    length, where dc and dt are the distances of their mean Lab colours and
    texture energies (scales ``sigma_* x`` the median distance) and b is the
    mean boundary strength along the border (an intervening-contour cue). The
    default ``mode='kway'`` takes the top-K eigenvectors of the normalised
    affinity ``D^-1/2 W D^-1/2`` and discretises them as Yu & Shi (2003),
    returning exactly ``n_segments`` regions. ``mode='recursive'`` runs
    scikit-image's recursive two-way cut (:func:`skimage.graph.cut_normalized`)
    on the colour RAG; the number of regions then follows from its threshold.

    Parameters
    ----------
    image : (H, W[, C]) array
    n_segments : int, default 8
        Number of regions K (``'kway'``).
    mode : {'kway', 'recursive'}, default 'kway'
    n_superpixels : int, default 400
        SLIC superpixels forming the graph nodes.
    compactness : float, default 10
        SLIC compactness.
    sigma_colour, sigma_texture, sigma_boundary : float
        Affinity scales (colour and texture relative to the median distance).
    threshold : float, default 0.2
        ``'recursive'`` only: stop splitting a region when its best cut's
        normalized-cut value exceeds this.
    rng : None, int or numpy Generator
        Seeds the discretisation.

    Returns
    -------
    Segmentation

    References
    ----------
    J. Shi, J. Malik, "Normalized cuts and image segmentation", IEEE TPAMI
    22(8), 2000; S. X. Yu, J. Shi, "Multiclass spectral clustering", ICCV 2003;
    J. Malik et al., "Contour and texture analysis for image segmentation",
    IJCV 2001 (intervening contour).

    Examples
    --------
    >>> img = np.zeros((30, 30, 3)); img[:, 15:] = [1, 0, 0]; img[15:, :15] = [0, 0, 1]
    >>> ncut(img, n_segments=3, n_superpixels=30, rng=0).n_segments
    3
    """
    img = check_image(image)
    k = check_int(n_segments, "n_segments", minimum=1)
    mode = check_choice(mode, "mode", ("kway", "recursive"))
    nsp = check_int(n_superpixels, "n_superpixels", minimum=1)
    comp = check_positive(compactness, "compactness")
    sc = check_positive(sigma_colour, "sigma_colour")
    st = check_positive(sigma_texture, "sigma_texture")
    sb = check_positive(sigma_boundary, "sigma_boundary")
    threshold = check_positive(threshold, "threshold")
    gen = check_rng(rng)
    check_eigen_size(max(nsp, k), "n_segments" if k >= nsp else "n_superpixels",
                     "normalized cuts solves a dense eigenproblem over at least that many superpixels")
    sp_labels = _superpixels(img, max(nsp, k), comp, k)
    n_sp = int(sp_labels.max()) + 1
    params = {"n_segments": k, "mode": mode, "n_superpixels": nsp}
    if mode == "recursive":
        lab = lab_colour(img)
        means = region_means(lab, sp_labels)
        pairs, _ = adjacent_pairs(sp_labels)
        d2 = np.sum((means[pairs[:, 0]] - means[pairs[:, 1]]) ** 2, axis=1)
        scale = float(np.median(d2)) * sc if len(d2) else 1.0
        rag = skimage.graph.rag_mean_color(lab, sp_labels, mode="similarity", sigma=max(scale, 1e-9))
        labels = skimage.graph.cut_normalized(sp_labels, rag, thresh=threshold, rng=seed_of(gen))
        return Segmentation(labels, name="ncut", params={**params, "threshold": threshold})
    if n_sp <= k:
        return Segmentation(sp_labels, name="ncut", params=params)
    W = _superpixel_graph(img, sp_labels, sc, st, sb)
    deg = np.asarray(W.sum(axis=1)).ravel()
    dinv = 1.0 / np.sqrt(deg)
    M = (W.multiply(dinv[:, None]).multiply(dinv[None, :])).toarray()
    _, vecs = eigh(M, subset_by_index=[n_sp - k, n_sp - 1])
    emb = vecs * dinv[:, None]  # generalized eigenvectors of (D - W) x = l D x
    sp_cluster = discretize_yu_shi(emb, gen)
    return Segmentation(sp_cluster[sp_labels], name="ncut", params=params)
