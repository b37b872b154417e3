"""The compiled parts of segensemble (the thinning of boundary maps, the comparisons of their non-maximum
suppression, codes by first occurrence, the benchmark's
sparse assignment solver and its threshold sweep's steps, the boundary detector's tree walker and oriented-response
statistics, the greedy region merger, Felzenszwalb's merge pass, the NMF consensus's update, the k-means metric's
row norms, BOEM's steepest descent, CAP's hill climbing, the sums of the photos' label refinement); everything
else is in pyproject.toml.

The modules are translated by Cython and compiled by the C compiler on every core at once, without debug
information (``-g0``: a quarter less compiler time, and nothing in the package reads it).
"""

import os

from Cython.Build import cythonize
from setuptools import Extension, setup

JOBS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
NO_DEBUG_INFO = [] if os.name == "nt" else ["-g0"]
#: No fused multiply-add: the module's arithmetic repeats a NumPy or Python computation bit for bit.
NO_FMA = ["-ffp-contract=off"]


def _module(name: str, source: str, flags=()) -> Extension:
    return Extension(name, [source], extra_compile_args=[*NO_DEBUG_INFO, *flags])


EXTENSIONS = [
    _module("segensemble._thinning", "segensemble/_thinning.pyx"),
    _module("segensemble._first_occurrence", "segensemble/_first_occurrence.pyx"),
    _module("segensemble.evaluation._sparse_assignment", "segensemble/evaluation/_sparse_assignment.pyx"),
    _module("segensemble.evaluation._sweep_graph", "segensemble/evaluation/_sweep_graph.pyx"),
    # the readings repeat SciPy's map_coordinates(order=1)
    _module("segensemble.evaluation._suppress", "segensemble/evaluation/_suppress.pyx", NO_FMA),
    _module("segensemble.edges._forest", "segensemble/edges/_forest.pyx"),
    _module("segensemble.edges._oriented", "segensemble/edges/_oriented.pyx"),
    # the colour sums repeat NumPy's einsum
    _module("segensemble.pipeline._vote_sums", "segensemble/pipeline/_vote_sums.pyx", NO_FMA),
    # sqrt without errno (vectorisable); the AVX2 and baseline clones agree
    _module("segensemble.consensus._nmf_sweep", "consensus/_nmf_sweep.pyx", ["-fno-math-errno", *NO_FMA]),
    _module("segensemble.consensus._metric_norms", "consensus/_metric_norms.pyx"),
    _module("segensemble.consensus._agreement_climb", "consensus/_agreement_climb.pyx"),
    _module("segensemble.consensus._best_moves", "consensus/_best_moves.pyx", NO_FMA),
    _module("segensemble.segmenters._graph_fh", "segmenters/_graph_fh.pyx", NO_FMA),
    # the mean-key walk repeats the Python walk's arithmetic
    _module("segensemble.graph._merge", "segensemble/graph/_merge.pyx", NO_FMA),
]

setup(ext_modules=cythonize(EXTENSIONS, nthreads=JOBS, quiet=True),
      options={"build_ext": {"parallel": JOBS}})
