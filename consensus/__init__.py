"""Consensus functions: scikit-learn style estimators, registered by name.

Every method takes an :class:`~segensemble.Ensemble` or an (n_objects,
n_members) label array in ``fit`` and sets ``labels_``.

Examples
--------
>>> from segensemble import consensus
>>> est = consensus.get("eac")(n_clusters=2)
>>> est.fit_predict(np.array([[0, 1], [0, 1], [1, 0]])).tolist()
[0, 0, 1]
"""

import inspect

from segensemble.consensus._base import Capabilities, ConsensusClusterer, as_ensemble, methods_with
from segensemble.consensus._registry import REGISTRY
from segensemble.errors import InputError

get = REGISTRY.get
available = REGISTRY.available
describe = REGISTRY.describe
register = REGISTRY.register


def soft_methods() -> list[str]:
    """Registered methods that give soft ``memberships_`` (and so confidence maps).

    Examples
    --------
    >>> "borda" in soft_methods(), "eac" in soft_methods()
    (True, False)
    """
    return methods_with("soft")


def abstaining_methods() -> list[str]:
    """Registered methods that accept members leaving objects unlabelled (``-1``; :mod:`segensemble.abstentions`).

    Examples
    --------
    >>> "vote" in abstaining_methods(), "cbpce" in abstaining_methods()
    (True, False)
    """
    return methods_with("abstain")


def make(name: str, n_clusters="auto", *, random_state=None, **params):
    """An estimator of the registered method ``name``; ``random_state`` is passed only to randomised methods.

    Raises
    ------
    InputError
        Unknown method or parameter (naming the method and the valid parameters).

    Examples
    --------
    >>> make("eac", 2, random_state=0).get_params()["n_clusters"], "random_state" in make("eac").get_params()
    (2, False)
    """
    cls = get(name)
    accepted = inspect.signature(cls).parameters
    if "random_state" in accepted:
        params["random_state"] = random_state
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise InputError(f"params: {name} has no parameter {unknown[0]!r}; expected one of "
                         f"{', '.join(p for p in accepted if p != 'n_clusters')}")
    return cls(n_clusters=n_clusters, **params)


from segensemble.consensus.agreement import CAP  # noqa: E402
from segensemble.consensus.bestofk import BestOfK  # noqa: E402
from segensemble.consensus.bipartite import HBGF  # noqa: E402
from segensemble.consensus.coassociation import KCC, Basic, Spectral  # noqa: E402
from segensemble.consensus.correlation import BOEM, CCPivot  # noqa: E402
from segensemble.consensus.eac import EAC  # noqa: E402
from segensemble.consensus.merging import BoundaryMerge  # noqa: E402
from segensemble.consensus.metis import CSPA, HGPA, MCLA  # noqa: E402
from segensemble.consensus.mixture import EM  # noqa: E402
from segensemble.consensus.nmf import NMFConsensus  # noqa: E402
from segensemble.consensus.pce import CBPCE, ECBPCE, ProjectiveEnsemble  # noqa: E402
from segensemble.consensus.sccc import SCCC  # noqa: E402
from segensemble.consensus.sdp import SDP  # noqa: E402
from segensemble.consensus.soft import DWH, Borda, VoteProduct, VoteSum, confidence  # noqa: E402
from segensemble.consensus.voting import Vote  # noqa: E402

__all__ = [
    "BOEM", "Basic", "BestOfK", "Borda", "BoundaryMerge", "CAP", "CBPCE", "CCPivot", "CSPA", "ECBPCE",
    "ProjectiveEnsemble", "ConsensusClusterer", "DWH", "EAC", "EM", "HBGF", "HGPA", "KCC", "MCLA", "NMFConsensus",
    "SCCC", "SDP", "Spectral",
    "Vote", "VoteProduct", "VoteSum", "as_ensemble", "confidence",
    "available", "describe",
    "get", "make", "register", "soft_methods", "abstaining_methods", "methods_with", "Capabilities",
]
