"""The compiled part of segensemble (the benchmark's sparse assignment solver); everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("segensemble.evaluation._sparse_assignment",
                             ["segensemble/evaluation/_sparse_assignment.pyx"])])
