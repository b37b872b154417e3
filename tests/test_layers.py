"""The import structure: no circle between modules, function-level imports included (read from the AST)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Where each installed package's source lives (pyproject's package-dir mapping).
PACKAGES = {"segensemble": REPO / "segensemble", "segensemble.segmenters": REPO / "segmenters",
            "segensemble.consensus": REPO / "consensus", "segensemble.datasets": REPO / "datasets"}
#: Imports of the project's own modules inside functions hide circles and make the layers unreadable. The only
#: ones are deliberate deferrals, one place per package: the image pipeline's ``deferred`` module (the consensus and
#: segmenter layers, imported by the first recipe that runs), the datasets package's projective-clustering generator
#: (the consensus layer, not needed to read BSDS500), and the CLI's ``_deferred`` module (every numeric layer:
#: ``--version`` and ``--help`` import none of them).
#: The package's front door defers its heavy names by PEP 562 and declares them under ``TYPE_CHECKING``.
DEFERRALS = {"segensemble.pipeline.deferred": 3, "segensemble.datasets.projective": 2,
             "segensemble.cli._deferred": 17}


def _modules() -> dict:
    mods = {}
    for pkg, folder in PACKAGES.items():
        for path in [*folder.rglob("*.py"), *folder.rglob("*.pyx")]:  # compiled modules (Cython) are modules too
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join([pkg, *parts])] = path
    return mods


def _python_imports(path) -> str:
    """The Python-level ``import``/``from`` statements of a Cython module (its ``cimport`` lines are C-level)."""
    return "\n".join(line for line in path.read_text().splitlines()
                     if line.startswith(("import ", "from ")) and " cimport " not in line)


def _graph():
    mods = _modules()

    def owner(name):
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    edges, inner = {m: set() for m in mods}, {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(_python_imports(path) if path.suffix == ".pyx" else path.read_text())
        declared = {id(n) for top in tree.body if isinstance(top, ast.If) and getattr(top.test, "id", "") == "TYPE_CHECKING"
                    for n in ast.walk(top)}  # imports for type checkers: edges of the graph, not deferrals
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                subs = [f"{base}.{a.name}" for a in node.names]
                targets = subs if all(s in mods for s in subs) else [base, *subs]
            else:
                continue
            own = {owner(t) for t in targets if t.startswith("segensemble")} - {"", name}
            edges[name] |= own
            if own and node.col_offset > 0 and id(node) not in declared:
                inner[name] = inner.get(name, 0) + 1
    return edges, inner


def _circles(edges) -> list:
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan's strongly connected components, iteratively deep enough for this tree
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_back():
    edges, _ = _graph()
    aliases = _aliases()
    assert _circles({a: set() if a in aliases else t for a, t in edges.items()}) == []


#: The sub-packages, each one node of the package graph (the modules at the package root are nodes of their own).
SUBPACKAGES = ("io", "evaluation", "edges", "graph", "cli", "segmenters", "consensus", "datasets", "pipeline",
               "batch")
#: The layers, bottom up: a module may import its own layer and the ones below. "base" is every module at the
#: package root (errors, validation, registry, segmentation, ensemble, features, ...); "api" is the package's
#: own ``__init__`` (the public front door, over the image pipeline); ``__main__`` (``python -m segensemble``) is
#: the command line's other entry point, on top with it.
LAYERS = {"base": 0, "io": 1, "graph": 1, "evaluation": 2, "segmenters": 3, "consensus": 3, "edges": 3,
          "datasets": 3, "pipeline": 4, "api": 5, "batch": 5, "cli": 6, "__main__": 6}


def test_no_package_imports_itself_back():
    """io, evaluation, graph, edges, segmenters, consensus, datasets, cli: no circle between them either (a
    circle through two packages is hidden from the module graph when it passes through different modules)."""
    edges, _ = _graph()

    def node(name):
        parts = name.split(".")
        return ".".join(parts[:2]) if len(parts) > 1 and parts[1] in SUBPACKAGES else name

    packages, aliases = {}, _aliases()
    for a, targets in edges.items():
        if a in aliases:
            continue
        packages.setdefault(node(a), set()).update(node(b) for b in targets if node(b) != node(a))
    for targets in list(packages.values()):
        for b in targets:
            packages.setdefault(b, set())
    assert _circles(packages) == []


def _layer(name: str) -> str:
    parts = name.split(".")
    if name == "segensemble":
        return "api"
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "base"


def _aliases() -> set:
    """Deprecated module locations kept for one release: they point at the new place, wherever it is."""
    return {m for m, p in _modules().items() if p.read_text().startswith('"""Deprecated location')}


def test_layers_only_point_down():
    edges, _ = _graph()
    aliases = _aliases()
    up = sorted(f"{a} -> {b}" for a, targets in edges.items() if a not in aliases for b in targets
                if LAYERS[_layer(b)] > LAYERS[_layer(a)])
    assert up == []


def test_every_alias_says_so_when_imported():
    import importlib
    import sys
    import warnings

    for name in sorted(_aliases()):
        sys.modules.pop(name, None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            importlib.import_module(name)
        assert any(issubclass(w.category, DeprecationWarning) for w in caught), name


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_function_level_project_imports_are_the_declared_deferrals_only():
    _, inner = _graph()
    assert inner == DEFERRALS
    packages = [m.split(".")[1] for m in DEFERRALS]
    assert len(packages) == len(set(packages))  # one place per package


def test_batch_runs_never_change_the_callers_config(tmp_path):
    import copy

    from segensemble.batch.bench import BenchConfig, run_bench
    from segensemble.batch.score import ScoreConfig, score_results
    from segensemble.io import write_labels

    config = BenchConfig(n_segments="3")
    before = copy.deepcopy(config.__dict__)
    run_bench(tmp_path / "b", config=config, synthetic_images=1, limit=1)
    assert config.__dict__ == before
    gt = tmp_path / "gt"
    gt.mkdir()
    import numpy as np

    write_labels(gt / "1.png", np.array([[0, 0, 255, 255]] * 4, np.uint8))
    res = tmp_path / "res"
    write_labels(res / "1.png", np.array([[0, 0, 1, 1]] * 4))
    scfg = ScoreConfig(nthresh=1)
    before = copy.deepcopy(scfg.__dict__)
    score_results(res, gt, tmp_path / "s", config=scfg)
    assert scfg.__dict__ == before and scfg.what == "all"  # edge-map ground truth ran the boundary benchmark


def _cli_in_fresh_interpreter(args, modules, *, cwd=None, timeout=120):
    """Run ``segensemble ARGS`` in a new interpreter: (its exit code, which of ``modules`` it imported, its stderr)."""
    import json
    import subprocess
    import sys

    code = ("import json, sys\nfrom segensemble.cli import main\nwatched = sys.argv[1].split(',')\n"
            "sys.argv = ['segensemble', *sys.argv[2:]]\ncode = 0\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
            "print(json.dumps([code, sorted(m for m in watched if m in sys.modules)]), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, ",".join(modules), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)
    exit_code, loaded = json.loads(done.stderr.strip().splitlines()[-1])
    return exit_code, loaded, done.stderr


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["fuse", "--help"], ["score", "--help"]])
def test_the_command_line_starts_without_the_numeric_libraries(args):
    """``--version`` and every ``--help`` import no NumPy, SciPy, OpenCV, scikit-image or scikit-learn: they are
    the start-up cost of every call (NumPy alone is about half of it); nor Pydantic, which Typer 0.29 imports to
    coerce a flag that was not given (the group's --help) unless it reads False."""
    _, loaded, err = _cli_in_fresh_interpreter(args, ("numpy", "scipy", "cv2", "skimage", "sklearn", "pydantic"))
    assert loaded == [], err


def test_the_default_fusion_imports_neither_scikit_learn_nor_the_lightgbm_package(tmp_path):
    """``segensemble fuse IMAGE`` with the default recipe (learned detector, learned merge) reads the model through
    LightGBM's C interface and fits estimators of the plain protocol: no scikit-learn, SciPy statistics or
    optimizers, no ``lightgbm`` package (a second of start-up on every call)."""
    import numpy as np
    from PIL import Image

    Image.fromarray((np.random.default_rng(0).random((24, 24, 3)) * 255).astype(np.uint8)).save(tmp_path / "in.png")
    exit_code, loaded, err = _cli_in_fresh_interpreter(
        ["fuse", str(tmp_path / "in.png"), "-o", str(tmp_path / "o.png")],
        ("sklearn", "scipy.stats", "scipy.optimize", "lightgbm"), cwd=tmp_path, timeout=300)  # the installed package
    assert (exit_code, loaded) == (0, []), err
    assert (tmp_path / "o.png").is_file()
