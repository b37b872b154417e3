"""Sphinx configuration of the segensemble documentation (PyData theme, numpydoc, sphinx-gallery, MyST)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# `python -m sphinx` puts the working directory first on sys.path; from the repository root that is the source
# folder `segensemble/` without the sub-packages the install maps into it (consensus, segmenters, datasets):
# import the installed package instead.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE.parent]

import segensemble  # noqa: E402

os.environ.setdefault("MPLBACKEND", "Agg")

project = "segensemble"
author = "the segensemble developers"
copyright = "2026, the segensemble developers"
version = release = segensemble.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# The command-line reference, generated from the Typer application by Typer's own documentation output.
subprocess.run([sys.executable, "-m", "typer", "segensemble.cli", "utils", "docs", "--name", "segensemble",
                "--output", str(HERE / "guide" / "cli_reference.md")], check=True, capture_output=True, cwd=HERE)

exclude_patterns = ["guide/cli_reference.md", "_build", "examples", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5"]
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

autosummary_generate = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set = set()

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_title = "segensemble"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path: list = []
