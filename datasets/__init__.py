"""Datasets: BSDS500/BSDS300 readers, synthetic generators.

Examples
--------
>>> import tempfile
>>> from segensemble.datasets import make_synthetic_dataset, BSDS500
>>> root = make_synthetic_dataset(tempfile.mkdtemp(), n_images=2, shape=(40, 60))
>>> ds = BSDS500(root)
>>> ds.ids("test")
['syn0001', 'syn0002']
"""

from segensemble.datasets.bsds import BSDS500, find_bsds_root, read_bsds300_seg
from segensemble.datasets.fetch import fetch_bsds500
from segensemble.datasets.projective import lac, make_subspace_clusters, projective_ensemble
from segensemble.datasets.rpm import rpm_ensemble
from segensemble.datasets.synthetic import make_synthetic_dataset, synthetic_image

__all__ = [
    "BSDS500",
    "fetch_bsds500",
    "find_bsds_root",
    "lac",
    "make_subspace_clusters",
    "projective_ensemble",
    "make_synthetic_dataset",
    "read_bsds300_seg",
    "rpm_ensemble",
    "synthetic_image",
]
