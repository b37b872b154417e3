"""The compiled parts of segensemble (the benchmark's sparse assignment solver, the boundary detector's tree walker);
everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("segensemble.evaluation._sparse_assignment",
                             ["segensemble/evaluation/_sparse_assignment.pyx"]),
                   Extension("segensemble.edges._forest", ["segensemble/edges/_forest.pyx"])])
