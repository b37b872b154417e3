"""The compiled parts of segensemble (the thinning of boundary maps, the comparisons of their non-maximum
suppression, codes by first occurrence, the benchmark's
sparse assignment solver and its threshold sweep's steps, the boundary detector's tree walker and oriented-response
statistics, the greedy region merger, Felzenszwalb's merge pass, the NMF consensus's update, the k-means metric's
row norms, BOEM's steepest descent, CAP's hill climbing, the sums of the photos' label refinement); everything
else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("segensemble._thinning", ["segensemble/_thinning.pyx"]),
                   Extension("segensemble._first_occurrence", ["segensemble/_first_occurrence.pyx"]),
                   Extension("segensemble.evaluation._sparse_assignment",
                             ["segensemble/evaluation/_sparse_assignment.pyx"]),
                   Extension("segensemble.evaluation._sweep_graph", ["segensemble/evaluation/_sweep_graph.pyx"]),
                   # no fused multiply-add: the readings repeat SciPy's map_coordinates(order=1) bit for bit
                   Extension("segensemble.evaluation._suppress", ["segensemble/evaluation/_suppress.pyx"],
                             extra_compile_args=["-ffp-contract=off"]),
                   Extension("segensemble.edges._forest", ["segensemble/edges/_forest.pyx"]),
                   Extension("segensemble.edges._oriented", ["segensemble/edges/_oriented.pyx"]),
                   # no fused multiply-add: the colour sums repeat NumPy's einsum bit for bit
                   Extension("segensemble.pipeline._vote_sums", ["segensemble/pipeline/_vote_sums.pyx"],
                             extra_compile_args=["-ffp-contract=off"]),
                   # sqrt without errno (vectorisable), no fused multiply-add: the AVX2 and baseline clones agree
                   Extension("segensemble.consensus._nmf_sweep", ["consensus/_nmf_sweep.pyx"],
                             extra_compile_args=["-fno-math-errno", "-ffp-contract=off"]),
                   Extension("segensemble.consensus._metric_norms", ["consensus/_metric_norms.pyx"]),
                   Extension("segensemble.consensus._agreement_climb", ["consensus/_agreement_climb.pyx"]),
                   Extension("segensemble.consensus._best_moves", ["consensus/_best_moves.pyx"],
                             extra_compile_args=["-ffp-contract=off"]),
                   Extension("segensemble.segmenters._graph_fh", ["segmenters/_graph_fh.pyx"],
                             extra_compile_args=["-ffp-contract=off"]),
                   # no fused multiply-add: the mean-key walk repeats the Python walk's arithmetic bit for bit
                   Extension("segensemble.graph._merge", ["segensemble/graph/_merge.pyx"],
                             extra_compile_args=["-ffp-contract=off"])])
