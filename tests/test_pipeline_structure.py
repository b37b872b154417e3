"""One image pipeline: the recipe runner behind fuse/bench/segensemble.fuse, pinned recipes, declared
capabilities, no cross-package private imports, one name per concept."""

from __future__ import annotations

import ast
import hashlib
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import segensemble
from segensemble import consensus
from segensemble.cli import app
from segensemble.pipeline.recipes import BUILTIN, VERSIONS, load_recipe
from segensemble.pipeline.runner import FusionResult, run_recipe

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]

#: SHA-256 of ``segensemble fuse test/<id>.jpg --recipe default -o <id>.png`` made by the code before the pipeline
#: was restructured (commit b1b4931): the restructured runner must reproduce them byte for byte.
DEFAULT_V3_PNG_SHA256 = {
    "100007": "dc8cfa2c1b83f7566e95e0e483229770acbcddcb389b9a74241fb19c0e7ebf3f",
    "141012": "bc1dfcb3ebc60ca46818dd8d788922c8cd44d05c423212cc4f165294910e7476",
    "196088": "0265c6872ed5312dd50d32337ad2ee3cd42213b145bc8b9dce2044b286899dd7",
    "259060": "2d86cff7a99caeda900580fa7604dbf61635b2f0e664c9f2ff66f0e558953b4a",
    "388006": "975e5dd29cf501e90415da3553f4926ea08f16d3a67dbd3da96804adf74b8512",
}


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ["default@3", "default@4"])
@pytest.mark.parametrize("image_id", sorted(DEFAULT_V3_PNG_SHA256))
def test_pinned_default_recipe_gives_byte_identical_pngs(bsds_root, tmp_path, image_id, recipe):
    """default@3 is reproduced byte for byte, and so is version 4 (the same consensus, its settings the frame's)."""
    image = bsds_root / "data" / "images" / "test" / f"{image_id}.jpg"
    out = tmp_path / f"{image_id}.png"
    result = runner.invoke(app, ["fuse", str(image), "--recipe", recipe, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert hashlib.sha256(out.read_bytes()).hexdigest() == DEFAULT_V3_PNG_SHA256[image_id]


@pytest.mark.slow
def test_fuse_without_options_is_the_newest_default_recipe_on_a_photo(bsds_root, tmp_path):
    image = bsds_root / "data" / "images" / "test" / "100007.jpg"
    outs = []
    for options in ([], ["--recipe", f"default@{BUILTIN['default'].version}"]):
        outs.append(tmp_path / f"{len(outs)}.png")
        result = runner.invoke(app, ["fuse", str(image), *options, "-o", str(outs[-1])])
        assert result.exit_code == 0, result.output
    assert outs[0].read_bytes() == outs[1].read_bytes()


def test_recipes_are_pinnable_by_version():
    assert load_recipe("default") is BUILTIN["default"]
    assert load_recipe("default@3") is VERSIONS["default"]["3"]
    assert load_recipe("classic@1").method == "eac"
    with pytest.raises(segensemble.InputError, match="'default' has no version '99'; versions: 3"):
        load_recipe("default@99")
    listing = runner.invoke(app, ["recipes"])
    assert listing.exit_code == 0 and "default" in listing.stdout and "(newest)" in listing.stdout
    assert runner.invoke(app, ["recipes", "default@3"]).exit_code == 0


def _blocks():
    img = np.zeros((32, 48, 3))
    img[:, 24:, 0] = 1
    img[16:, :, 2] = 1
    return img + np.random.default_rng(0).normal(0, 0.02, img.shape)


def test_run_recipe_returns_everything_and_callers_agree(tmp_path):
    from segensemble.io import read_labels, write_image
    from segensemble.pipeline.recipes import Recipe

    recipe = Recipe("t", "1", ("slic:n_segments=12", "felzenszwalb:scale=50"), "merge",
                    params={"threshold": 0.5}, postprocess={"connected": True, "min_size": 20})
    img = np.clip(_blocks(), 0, 1)
    result = run_recipe(img, recipe, hierarchy=True, confidence="auto", rng=0)
    assert isinstance(result, FusionResult)
    assert result.labels.shape == img.shape[:2] and len(result.members) == 2
    assert result.estimator.capabilities.hierarchy and len(result.levels) == 19
    assert result.confidence_kind == "hierarchy" and result.confidence.shape == img.shape[:2]
    assert result.downscaled_from is None
    # the CLI is a thin caller: same labels
    path = write_image(tmp_path / "i.png", img)
    rec = tmp_path / "r.json"
    import json

    rec.write_text(json.dumps(recipe.to_dict()))
    done = runner.invoke(app, ["fuse", str(path), "--recipe", str(rec), "-o", str(tmp_path / "o.png")])
    assert done.exit_code == 0, done.output
    again = run_recipe(path, recipe, rng=0)
    assert np.array_equal(read_labels(tmp_path / "o.png"), again.labels)
    # segensemble.fuse is the runner without post-processing
    plain = segensemble.fuse(result.members, "merge", "auto", image=img, threshold=0.5)
    unprocessed = run_recipe(img, recipe, members=result.members, postprocess=False)
    assert np.array_equal(plain, unprocessed.labels)


def test_run_recipe_downscales_and_upscales_back():
    img = np.clip(_blocks(), 0, 1)
    result = run_recipe(img, "classic", max_pixels=400, downscale=True, hierarchy=True, confidence="auto")
    assert result.downscaled_from == img.shape[:2]
    assert result.labels.shape == img.shape[:2] and all(lv.shape == img.shape[:2] for lv in result.levels)
    assert result.image.shape[0] * result.image.shape[1] <= 400
    with pytest.raises(segensemble.InputError, match="above the limit of 400"):
        run_recipe(img, "classic", max_pixels=400)


def test_every_method_declares_its_capabilities_and_they_hold():
    from segensemble import Ensemble

    img = np.clip(_blocks(), 0, 1)
    members = segensemble.run_segmenters(img, ["slic:n_segments=8", "felzenszwalb:scale=50"], rng=0)
    ens = Ensemble.from_segmentations(members, image=img)
    for name in consensus.available():
        cls = consensus.get(name)
        caps = cls.__dict__.get("capabilities") or cls.capabilities
        assert isinstance(caps, consensus.Capabilities), name
        est = consensus.make(name, 3, random_state=0).fit(ens)
        assert hasattr(est, "memberships_") == caps.soft, name
        assert hasattr(est, "merges_") == caps.hierarchy, name
        assert hasattr(est, "feature_weights_") == caps.feature_weights == hasattr(cls, "top_features"), name
        assert cls.gives_memberships == caps.soft, name


def test_no_state_is_kept_on_the_estimator_between_fits():
    est = consensus.get("merge")(criterion="mean", gradient_weight=0.5)
    img = np.clip(_blocks(), 0, 1)
    members = segensemble.run_segmenters(img, ["slic:n_segments=8", "felzenszwalb:scale=50"], rng=0)
    ens = segensemble.Ensemble.from_segmentations(members, image=img)
    est.fit(ens, gradient=np.zeros(img.shape[:2]))
    assert not [k for k in vars(est) if k.startswith("_")]


SUBPACKAGES = ("consensus", "segmenters", "datasets", "evaluation", "cli", "io", "graph", "pipeline", "batch", "edges")


def _package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in SUBPACKAGES else "core"


def test_no_cross_package_private_import():
    """A helper used by two packages is public API of a shared module: no `from x._y import z` or
    `from x import _y` across segensemble's packages (core, consensus, segmenters, datasets, evaluation, cli, io)."""
    roots = {"segensemble": "segensemble", "consensus": "segensemble.consensus",
             "segmenters": "segensemble.segmenters", "datasets": "segensemble.datasets"}
    bad = []
    for folder, package in roots.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO / folder).with_suffix("")
            module = ".".join([package, *rel.parts]).removesuffix(".__init__")
            for node in ast.walk(ast.parse(path.read_text())):
                if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("segensemble")):
                    continue
                if _package_of(node.module) == _package_of(module):
                    continue
                private_module = any(p.startswith("_") for p in node.module.split(".")[1:])
                private_names = [a.name for a in node.names if a.name.startswith("_")]
                if private_module or private_names:
                    bad.append(f"{path.relative_to(REPO)}:{node.lineno} from {node.module} import "
                               f"{', '.join(a.name for a in node.names)}")
    assert bad == []


def test_sklearn_private_parameter_validation_is_not_used():
    import re

    imports = re.compile(r"^\s*(from|import)\s+sklearn\.utils\._param_validation", re.M)
    uses = [str(p.relative_to(REPO)) for folder in ("segensemble", "consensus", "segmenters", "datasets")
            for p in (REPO / folder).rglob("*.py") if imports.search(p.read_text())]
    assert uses == []
    with pytest.raises(segensemble.InputError, match=r"^linkage: expected one of 'average', 'complete', 'single'"):
        consensus.get("eac")(linkage="bogus").fit([[0, 1], [1, 0]])


def test_old_names_still_work_with_a_deprecation_warning(tmp_path):
    from segensemble import errors
    from segensemble.batch.bench import BenchConfig
    from segensemble.datasets import lac, make_subspace_clusters

    with pytest.warns(DeprecationWarning, match="random_state"):
        assert BenchConfig(seed=4).random_state == 4
    with pytest.warns(DeprecationWarning, match="random_state"):
        assert BenchConfig.from_recipe(BUILTIN["classic"], seed=5).random_state == 5
    with pytest.warns(DeprecationWarning, match="describe_exception"):
        assert errors.describe(OSError("x")) == "OSError: x"
    with pytest.warns(DeprecationWarning, match="consensus.lac"):
        X, _, _ = make_subspace_clusters(30, 4, 2, rng=0)
        assert lac(X, 2, rng=0)[0].shape == (30,)
    a = np.array([[0, 0, 1, 1]] * 2)
    with pytest.warns(DeprecationWarning, match="n_segments"):
        assert segensemble.fuse([a, a], "eac", n_clusters=2).max() == 1
    from segensemble.batch.score import score_results

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new names do not warn
        BenchConfig(random_state=1)
        with pytest.raises(segensemble.InputError):
            score_results(tmp_path, tmp_path, tmp_path / "o", n_jobs=1)


def test_cli_help_lists_choices_and_examples_one_per_line():
    from segensemble import segmenters
    from segensemble.cli._app import CONSENSUS_METHODS, SEGMENTERS

    assert list(CONSENSUS_METHODS) == consensus.available() and list(SEGMENTERS) == segmenters.available()
    fuse_help = runner.invoke(app, ["fuse", "--help"]).stdout
    assert "max|entropy" in fuse_help and all(name in " ".join(fuse_help.split()) for name in CONSENSUS_METHODS)
    lines = [ln.strip() for ln in fuse_help.splitlines()]
    assert sum(ln.startswith("segensemble fuse ") for ln in lines) >= 5
    score_help = runner.invoke(app, ["score", "--help"]).stdout
    assert "all|boundary|region" in score_help and "auto|segs|ucm2|boundary" in score_help


def test_cli_modules_are_small_and_commands_short():
    for folder in ("segensemble", "consensus", "segmenters", "datasets"):
        for path in sorted((REPO / folder).rglob("*.py")):
            assert len(path.read_text().splitlines()) <= 410, path
    for path in sorted((REPO / "segensemble" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                assert node.end_lineno - node.lineno + 1 <= 60, (path.name, node.name)
