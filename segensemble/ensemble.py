"""The :class:`Ensemble` type: the one input of every consensus function."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.sparse as sp

from segensemble.abstentions import (ABSTAIN, check_member_labels, check_someone_labels, coassociation_with_abstentions,
                                     member_codes)
from segensemble.validation import check_image, check_label_map, check_member_weights, check_weights, describe_value
from segensemble.errors import InputError
from segensemble.segmentation import Segmentation, canonical_codes, signature_codes
from segensemble.features import group_means as _aggregate_mean, pixel_feature_names, pixel_features

__all__ = ["Ensemble", "DENSE_OBJECT_LIMIT"]

#: Largest number of objects for which an n x n dense matrix is formed
#: (16000^2 float64 values = 2 GB).
DENSE_OBJECT_LIMIT = 16000


class Ensemble:
    """A clustering ensemble: m labellings of the same n objects.

    The objects are pixels grouped into *atoms* (:meth:`from_segmentations`) or
    plain rows (:meth:`from_labels`, the scikit-learn layout). Every column is
    relabelled ``0..k_j-1`` in order of first occurrence, so the ensemble, and
    every consensus computed from it, is the same for any relabelling of any
    member.

    Parameters
    ----------
    labels : (n_objects, n_members) array of non-negative ints
        Label of every object in every member; ``-1`` (or NaN) where the
        member leaves the object unlabelled (:mod:`segensemble.abstentions`).
    weights : (n_objects,) array, optional
        Positive object weights (pixels per atom). Default: all ones. An object
        of weight w stands for w identical objects.
    index : (H, W) int array, optional
        Object id of every pixel, for :meth:`to_image`.
    memberships : list of (n_objects, k_j) arrays, optional
        Soft memberships of each member (rows sum to 1); ``None`` entries mean
        one-hot. Column order follows the member's original labels and is
        permuted together with them.
    features : (n_objects, n_features) array, optional
        Mean image features per object.
    names : list of str, optional
        Member names.
    feature_names : list of str, optional
        Names of the feature columns (default ``feature0``, ...).
    image : (H, W[, C]) array, optional
        The image the members segment (needs ``index``), for methods that
        look at pixels (boundary merging).

    Attributes
    ----------
    labels : (n_objects, n_members) int32
    weights : (n_objects,) float64
    n_clusters : tuple of int
        k_j of every member.

    Examples
    --------
    >>> ens = Ensemble.from_labels([[0, 1], [0, 1], [1, 0]])
    >>> ens.n_objects, ens.n_members, ens.n_clusters
    (3, 2, (2, 2))
    >>> ens.coassociation_matvec(np.ones(3)).tolist()
    [2.0, 2.0, 1.0]
    """

    def __init__(self, labels, weights=None, *, index=None, memberships=None, features=None, names=None,
                 feature_names=None, image=None):
        lab = check_member_labels(labels, "labels")
        (n, m), columns = lab.shape, lab.T.astype(np.int32, order="C")  # members contiguous (strided: 6x slower)
        w = np.ones(n) if weights is None else check_weights(weights, n)
        mem_in = memberships if memberships is not None else [None] * m
        if len(mem_in) != m:
            raise InputError(f"memberships: expected {m} entries (one per member), got {len(mem_in)}")
        cols, mems = [], []
        for j in range(m):
            mj = mem_in[j]
            if mj is not None:
                mj = np.asarray(mj, dtype=np.float64)
                if mj.ndim != 2 or mj.shape[0] != n or columns[j].max() >= mj.shape[1]:
                    raise InputError(f"memberships[{j}]: expected ({n}, k) with k above every label of member {j}, "
                                     f"got {describe_value(mem_in[j])}")
            if mj is not None and (columns[j] == ABSTAIN).any():
                raise InputError(f"memberships[{j}]: member {j} abstains on some objects (-1); give its soft "
                                 "memberships for every object, or no memberships")
            codes, old = member_codes(columns[j], None if mj is None else mj.shape[1])
            cols.append(codes)
            mems.append(None if mj is None else mj[:, old])
        self.labels = np.stack(cols, axis=1).astype(np.int32, copy=False)
        self.weights = w
        self.memberships = None if all(x is None for x in mems) else mems
        self.n_clusters = tuple(int(c.max()) + 1 if mm is None else mm.shape[1] for c, mm in zip(cols, mems))
        if index is not None:
            index = np.asarray(index)
            if index.ndim != 2 or not np.issubdtype(index.dtype, np.integer):
                raise InputError(f"index: expected an (H, W) integer array, got {describe_value(index)}")
            if index.min() < 0 or index.max() >= n:
                raise InputError(f"index: object ids must lie in 0..{n - 1}")
            index = index.astype(np.int32)
        self.index = index
        if features is not None:
            features = np.asarray(features, dtype=np.float64)
            if features.ndim != 2 or features.shape[0] != n:
                raise InputError(f"features: expected shape ({n}, n_features), got {describe_value(features)}")
        self._features = features
        if features is None or feature_names is None:
            feature_names = None if features is None else [f"feature{i}" for i in range(features.shape[1])]
        elif len(feature_names) != features.shape[1]:
            raise InputError(f"feature_names: expected {features.shape[1]} names, got {len(feature_names)}")
        self._feature_names = None if feature_names is None else [str(x) for x in feature_names]
        if image is not None:
            image = check_image(image)
            if index is None or image.shape[:2] != index.shape:
                raise InputError(f"image: expected an image the shape of the pixel index, got {describe_value(image)}")
        self.image = image
        self.names = [str(x) for x in names] if names is not None else [f"member{j}" for j in range(m)]
        if len(self.names) != m:
            raise InputError(f"names: expected {m} names, got {len(self.names)}")

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_labels(cls, labels, weights=None, *, names=None) -> Ensemble:
        """Ensemble from an (n_objects, n_members) label array (rows = objects).

        Examples
        --------
        >>> Ensemble.from_labels([[3, 0], [3, 1], [8, 1]]).labels.tolist()
        [[0, 0], [0, 1], [1, 1]]
        """
        return cls(labels, weights, names=names)

    def _rows(self, rows, weights) -> Ensemble:
        """Objects ``rows`` with ``weights``, unchecked (in order, each label's first among them: canonical)."""
        out = object.__new__(type(self))
        out.__dict__.update(labels=self.labels[rows], weights=weights, memberships=None, n_clusters=self.n_clusters,
                            index=None, _features=None, _feature_names=None, image=None, names=list(self.names))
        return out

    @classmethod
    def from_segmentations(cls, segmentations, image=None, *, features=None) -> Ensemble:
        """Ensemble whose objects are the atoms of a set of segmentations.

        An atom is a maximal set of pixels with the same label in every member.
        This reduction is exact: pixels of one atom are indistinguishable to any
        consensus function, and each atom carries its pixel count as weight.

        Parameters
        ----------
        segmentations : sequence of Segmentation or (H, W) label arrays
            The members; all of the same shape.
        image : (H, W[, C]) array, optional
            Stored as ``image``; unless ``features`` is given, ``features``
            are then the mean standardised pixel features of every atom —
            CIE Lab colour and texture energy
            (:func:`segensemble.features.pixel_features`), named in
            ``feature_names`` — computed when first used.
        features : (H, W, F) array, optional
            Per-pixel features, averaged per atom with pixel weights.

        Returns
        -------
        Ensemble
            Atoms numbered in raster order of their first pixel; ``index`` maps
            every pixel to its atom. Soft memberships are averaged per atom.

        Examples
        --------
        >>> a = np.array([[0, 0, 1], [0, 0, 1]])
        >>> b = np.array([[0, 1, 1], [0, 1, 1]])
        >>> ens = Ensemble.from_segmentations([a, b])
        >>> ens.index.tolist(), ens.weights.tolist()
        ([[0, 1, 2], [0, 1, 2]], [2.0, 2.0, 2.0])
        """
        segs = list(segmentations)
        if not segs:
            raise InputError("segmentations: expected at least one segmentation, got none")
        segs = [s if isinstance(s, Segmentation) else Segmentation(s) for s in segs]
        shape = segs[0].shape
        for j, s in enumerate(segs):
            if s.shape != shape:
                raise InputError(
                    f"segmentations: all members must have the same shape; member 0 is {shape}, "
                    f"member {j} ({s.name or 'unnamed'}) is {s.shape}"
                )
        cols = [s.labels.ravel() for s in segs]
        check_someone_labels(cols, shape)
        key = signature_codes([c + 1 for c in cols])  # +1: unlabelled pixels (-1) are one more value
        atom, _ = canonical_codes(key)
        n_atoms = int(atom.max()) + 1
        first = np.full(n_atoms, len(atom), dtype=np.int64)
        np.minimum.at(first, atom, np.arange(len(atom)))
        weights = np.bincount(atom, minlength=n_atoms).astype(np.float64)
        labels = np.stack([c[first] for c in cols], axis=1)
        memberships = None
        if any(s.memberships is not None for s in segs):
            memberships = [
                None
                if s.memberships is None
                else _aggregate_mean(atom, n_atoms, weights, s.memberships.reshape(-1, s.memberships.shape[2]))
                for s in segs
            ]
        feats = None
        img = None if image is None else check_image(image)
        if img is not None and img.shape[:2] != shape:
            raise InputError(f"image: expected shape {shape} like the segmentations, got {img.shape[:2]}")
        if features is not None:
            f = np.asarray(features, dtype=np.float64)
            if f.ndim == 2:
                f = f[:, :, None]
            if f.shape[:2] != shape:
                raise InputError(f"features: expected shape {shape + ('F',)}, got {describe_value(features)}")
            feats = _aggregate_mean(atom, n_atoms, weights, f.reshape(-1, f.shape[2]))
        names = [s.name or f"member{j}" for j, s in enumerate(segs)]
        return cls(
            labels,
            weights,
            index=atom.reshape(shape),
            memberships=memberships,
            features=feats,
            names=names,
            image=img,
        )

    _KEEP = object()

    def copy_with(self, *, labels=None, weights=None, memberships=_KEEP) -> Ensemble:
        """The same ensemble (pixel index, image, features, names) with new labels, weights or memberships.

        Features already computed are carried over, not recomputed.

        Examples
        --------
        >>> ens = Ensemble.from_labels([[0, 1], [0, 1], [1, 0]])
        >>> ens.copy_with(weights=[1.0, 2.0, 3.0]).weights.tolist()
        [1.0, 2.0, 3.0]
        """
        kept = self.memberships if memberships is Ensemble._KEEP else memberships
        return Ensemble(self.labels if labels is None else labels, self.weights if weights is None else weights,
                        index=self.index, memberships=kept, features=self._features, names=self.names,
                        feature_names=self._feature_names, image=self.image)

    # ---------------------------------------------------------------- properties
    @property
    def features(self):
        """(n_objects, n_features) mean features per object, or None.

        For an ensemble built from segmentations with an image and no explicit
        features, they are the atoms' mean standardised pixel features
        (:func:`segensemble.features.pixel_features`), computed on first use
        only — most consensus methods never look at them.
        """
        if self._features is None and self.image is not None and self.index is not None:
            f = pixel_features(self.image)
            idx = self.index.ravel()
            counts = np.bincount(idx, minlength=self.n_objects).astype(np.float64)
            self._features = _aggregate_mean(idx, self.n_objects, counts, f.reshape(-1, f.shape[2]))
            self._feature_names = pixel_feature_names()
        return self._features

    @property
    def feature_names(self):
        """Names of the feature columns (None without features)."""
        return None if self.features is None else self._feature_names

    @property
    def n_objects(self) -> int:
        """Number of objects n (atoms or rows)."""
        return self.labels.shape[0]

    @property
    def n_members(self) -> int:
        """Number of members m."""
        return self.labels.shape[1]

    @property
    def shape(self) -> tuple[int, int] | None:
        """Image shape (H, W) when built from segmentations, else None."""
        return None if self.index is None else self.index.shape

    @cached_property
    def offsets(self) -> np.ndarray:
        """Column offset of every member's block in :attr:`incidence`, shape (m + 1,)."""
        return np.concatenate([[0], np.cumsum(self.n_clusters)]).astype(np.int64)

    @cached_property
    def incidence(self) -> sp.csr_matrix:
        """One-hot incidence H = [Z_1 | ... | Z_m], sparse (n_objects, sum k_j).

        Examples
        --------
        >>> Ensemble.from_labels([[0, 1], [1, 0]]).incidence.toarray().tolist()
        [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
        """
        n, m = self.labels.shape
        cols = (self.labels + self.offsets[:-1][None, :]).ravel()  # row by row, increasing within a row: CSR order
        starts = np.arange(0, n * m + 1, m)
        if self.abstains:  # an abstaining member has no entry in that row
            speaks = self.labels != ABSTAIN
            cols, starts = cols[speaks.ravel()], np.concatenate([[0], np.cumsum(np.count_nonzero(speaks, axis=1))])
        return sp.csr_matrix((np.ones(len(cols)), cols, starts), shape=(n, int(self.offsets[-1])))

    @cached_property
    def member_labels(self) -> np.ndarray:
        """(n_members, n_objects): each member's labels as one contiguous row (strided columns are ~6x slower)."""
        return np.ascontiguousarray(self.labels.T)

    @cached_property
    def abstains(self) -> bool:
        """True when some member leaves some object unlabelled (``-1``; :mod:`segensemble.abstentions`)."""
        return bool((self.labels == ABSTAIN).any())

    # ---------------------------------------------------------------- operations
    def _member_weights(self, member_weights) -> np.ndarray:
        if member_weights is None:
            return np.ones(self.n_members)
        return check_member_weights(member_weights, self.n_members)

    def coassociation_matvec(self, v, member_weights=None) -> np.ndarray:
        """Product X @ v with the co-association matrix X, never forming X.

        ``X = sum_j a_j Z_j Z_j^T / sum_j a_j`` (``a_j = 1`` by default, i.e.
        ``X = H H^T / m``); cost O(n * m) per column of ``v``.

        Parameters
        ----------
        v : (n_objects,) or (n_objects, r) array
        member_weights : (n_members,) array, optional

        Returns
        -------
        (n_objects,) or (n_objects, r) float64 array

        Examples
        --------
        >>> ens = Ensemble.from_labels([[0, 0], [0, 1], [1, 1]])
        >>> ens.coassociation_matvec([1.0, 0.0, 0.0]).tolist()
        [1.0, 0.5, 0.0]
        """
        v = np.asarray(v, dtype=np.float64)
        if self.abstains:
            raise InputError("X @ v is not a product through H when members abstain; use coassociation()")
        if v.shape[0] != self.n_objects:
            raise InputError(f"v: expected {self.n_objects} rows, got {describe_value(v)}")
        a = self._member_weights(member_weights)
        col_w = np.repeat(a / a.sum(), self.n_clusters)
        H = self.incidence
        t = H.T @ v
        t = t * (col_w if t.ndim == 1 else col_w[:, None])
        return np.asarray(H @ t)

    def coassociation(self, member_weights=None) -> np.ndarray:
        """Dense co-association matrix X (n_objects x n_objects), for small n only.

        Raises
        ------
        InputError
            When n_objects exceeds :data:`DENSE_OBJECT_LIMIT`.
        """
        if self.n_objects > DENSE_OBJECT_LIMIT:
            raise InputError(
                f"n_objects: a dense co-association matrix is limited to {DENSE_OBJECT_LIMIT} objects, "
                f"got {self.n_objects}; use a method that works through the incidence matrix "
                "(e.g. 'basic', 'spectral') or fewer atoms"
            )
        a = self._member_weights(member_weights)
        if self.abstains:  # each pair over the members that label both
            return coassociation_with_abstentions(self.incidence, self.labels, self.n_clusters, a / a.sum())
        Hd = self.incidence.toarray() * np.sqrt(np.repeat(a / a.sum(), self.n_clusters))[None, :]
        return Hd @ Hd.T

    def to_image(self, object_labels) -> np.ndarray:
        """Paint per-object values back onto the image grid.

        Parameters
        ----------
        object_labels : (n_objects,) array
            Labels (integers) or any per-object values (e.g. confidences).

        Returns
        -------
        (H, W) array
            int32 for integer input, else the input's dtype.

        Examples
        --------
        >>> ens = Ensemble.from_segmentations([np.array([[0, 1], [1, 1]])])
        >>> ens.to_image([4, 7]).tolist()
        [[4, 7], [7, 7]]
        """
        if self.index is None:
            raise InputError("to_image: this ensemble has no pixel index (it was not built from segmentations)")
        lab = np.asarray(object_labels)
        if lab.shape != (self.n_objects,):
            raise InputError(f"object_labels: expected shape ({self.n_objects},), got {describe_value(object_labels)}")
        if np.issubdtype(lab.dtype, np.integer) and lab.size:
            check_label_map(lab[None, :], "object_labels")  # labels: non-negative, within int32
        out = lab[self.index]
        return out.astype(np.int32) if np.issubdtype(lab.dtype, np.integer) else out

    def __repr__(self) -> str:
        return (
            f"Ensemble(n_objects={self.n_objects}, n_members={self.n_members}, "
            f"n_clusters={self.n_clusters}, shape={self.shape})"
        )
