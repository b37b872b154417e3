"""Every docstring example runs; the installed layout is the documented one."""

import doctest
import importlib
import importlib.util
import pkgutil
import tempfile

import numpy as np
import pytest

import segensemble

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(segensemble.__path__, "segensemble.") if m.name != "segensemble.cli"
)
for sub in ("segensemble.segmenters", "segensemble.consensus", "segensemble.datasets"):
    mod = importlib.import_module(sub)
    MODULES += sorted(m.name for m in pkgutil.walk_packages(mod.__path__, sub + "."))
MODULES = sorted(set(MODULES + ["segensemble", "segensemble.segmenters", "segensemble.consensus", "segensemble.datasets"]))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    # examples write with tempfile.mkdtemp(); keep those under pytest's own, cleaned-up directory
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"np": np}, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_subpackages_install_under_segensemble():
    for sub in ("segmenters", "consensus", "datasets"):
        mod = importlib.import_module(f"segensemble.{sub}")
        assert mod.__name__ == f"segensemble.{sub}"


def test_no_top_level_consensus_or_datasets_installed(tmp_path):
    """In a fresh interpreter outside the repository, 'consensus' and 'datasets'
    are not importable from this project (both names belong to other PyPI packages)."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import importlib.util, json\n"
        "out = {}\n"
        "for n in ('consensus', 'datasets', 'segmenters'):\n"
        "    s = importlib.util.find_spec(n)\n"
        "    out[n] = None if s is None else str(s.origin or list(s.submodule_search_locations or []))\n"
        "import segensemble.consensus as c\n"
        "out['ours'] = c.__file__\n"
        "print(json.dumps(out))\n"
    )
    import json

    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    found = json.loads(res.stdout)
    ours = Path(found.pop("ours")).resolve().parent
    repo_or_site = ours.parent
    for name, origin in found.items():
        assert origin is None or repo_or_site.as_posix() not in origin, f"{name} importable from {origin}"


def test_every_public_function_has_an_example():
    missing = []
    for name in MODULES:
        if any(part.startswith("_") for part in name.split(".")):
            continue  # private modules
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if isinstance(obj, type) and (issubclass(obj, Exception) or hasattr(obj, "__dataclass_fields__")):
                continue  # exception types and plain records
            if callable(obj) and getattr(obj, "__module__", "") == name and "Examples" not in (obj.__doc__ or ""):
                missing.append(f"{name}.{attr}")
    assert not missing, f"public callables without an Examples section: {missing}"
