"""Objects of the image-aware frame: atoms made connected, and superatoms voted by their atoms' members.

:mod:`segensemble.pipeline.frame` builds the frame on them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from skimage.measure import label

from segensemble.ensemble import Ensemble
from segensemble.segmentation import canonical_codes

__all__ = ["majority_ensemble", "connected_atoms", "MIN_PIECE"]


def majority_ensemble(ensemble: Ensemble, groups) -> Ensemble:
    """The ensemble whose objects are groups of ``ensemble``'s objects (e.g. superatoms).

    A member's label of a group is its label covering most of the group's
    weight (ties: the smaller label), over the objects it labels: a member
    that labels none of the group abstains on it (``-1``); weights are
    summed; the pixel index, image and names are carried over.

    Parameters
    ----------
    ensemble : Ensemble
    groups : (n_objects,) int array
        Group 0..g-1 of every object.

    Examples
    --------
    >>> ens = Ensemble.from_labels([[0, 0], [0, 1], [1, 1]], weights=[1, 3, 1])
    >>> red = majority_ensemble(ens, np.array([0, 0, 1]))
    >>> red.labels.tolist(), red.weights.tolist()
    ([[0, 0], [1, 0]], [4.0, 1.0])
    """
    groups = np.asarray(groups, dtype=np.int64)
    n = int(groups.max()) + 1
    cols = []
    for j, k in enumerate(ensemble.n_clusters):
        lj, speaks = ensemble.labels[:, j], ensemble.labels[:, j] >= 0
        table = sp.coo_matrix((ensemble.weights[speaks], (groups[speaks], lj[speaks])), shape=(n, k)).toarray()
        cols.append(np.where(table.sum(axis=1) > 0, table.argmax(axis=1), -1) if not speaks.all() else
                    table.argmax(axis=1))
    index = None if ensemble.index is None else groups[ensemble.index]
    return Ensemble(np.stack(cols, axis=1), np.bincount(groups, weights=ensemble.weights, minlength=n),
                    index=index, image=ensemble.image, names=ensemble.names)


#: Pieces of atoms below this many pixels stay with their atom instead of becoming atoms of their own.
MIN_PIECE = 16


def connected_atoms(ensemble: Ensemble, min_piece: int = MIN_PIECE) -> Ensemble:
    """The ensemble whose atoms are the 4-connected pieces of ``ensemble``'s atoms (same members, image, names).

    Members that are not spatially coherent (colour clusters, Chan-Vese
    phases) make atoms of many separate pieces; the frame merges adjacent
    atoms, so with connected atoms its regions are connected. Most pieces
    are specks of a few pixels: pieces below ``min_piece`` pixels are not
    split off but stay together with their atom's other specks (the
    pipeline's connected relabelling and minimum size take care of them).

    Examples
    --------
    >>> a = np.array([[0, 1, 0, 0]])
    >>> connected_atoms(Ensemble.from_segmentations([a]), min_piece=1).weights.tolist()
    [1.0, 1.0, 2.0]
    >>> connected_atoms(Ensemble.from_segmentations([a]), min_piece=2).weights.tolist()
    [1.0, 1.0, 2.0]
    >>> connected_atoms(Ensemble.from_segmentations([a]), min_piece=3).weights.tolist()
    [3.0, 1.0]
    """
    pieces = (label(ensemble.index, background=-1, connectivity=1) - 1).ravel()
    big = np.bincount(pieces) >= min_piece
    n = ensemble.n_objects
    atom = ensemble.index.ravel().astype(np.int64)
    index, _ = canonical_codes(np.where(big[pieces], pieces.astype(np.int64) + n, atom))
    if int(index.max()) + 1 == n:
        return ensemble
    k = int(index.max()) + 1
    parent = np.zeros(k, dtype=np.int64)
    parent[index] = atom
    return Ensemble(ensemble.labels[parent], np.bincount(index, minlength=k).astype(np.float64),
                    index=index.reshape(ensemble.index.shape), image=ensemble.image, names=ensemble.names)
