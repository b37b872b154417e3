"""Recipes (built-in and from files) and post-processing."""

import numpy as np
import pytest

from segensemble import InputError
from segensemble.pipeline.postprocess import connected_regions, merge_small, postprocess, postprocess_levels
from segensemble.pipeline.recipes import BUILTIN, VERSIONS, load_recipe, recipe_from_mapping


def test_builtin_recipes_are_valid():
    for recipe in BUILTIN.values():
        assert recipe.validate() is recipe and recipe.version


def test_recipe_files_toml_yaml_json(tmp_path):
    (tmp_path / "r.toml").write_text('name = "t"\nversion = "2"\nsegmenters = ["slic"]\nmethod = "eac"\n'
                                     '[postprocess]\nmin_size = 20\n')
    r = load_recipe(tmp_path / "r.toml")
    assert (r.name, r.version, r.segmenters, r.postprocess) == ("t", "2", ("slic",), {"connected": False, "min_size": 20})
    (tmp_path / "r.yaml").write_text("name: y\nsegmenters: [felzenszwalb]\nmethod: vote\n")
    assert load_recipe(tmp_path / "r.yaml").method == "vote"
    (tmp_path / "r.json").write_text('{"name": "j", "segmenters": ["slic"], "method": "basic", "n_segments": 4}')
    assert load_recipe(tmp_path / "r.json").n_segments == 4


@pytest.mark.parametrize("data, message", [
    ({"name": "x", "segmenters": ["slic"]}, "missing field 'method'"),
    ({"name": "x", "segmenters": "slic", "method": "eac"}, "segmenters: expected a list"),
    ({"name": "x", "segmenters": ["nosuch"], "method": "eac"}, "nosuch"),
    ({"name": "x", "segmenters": ["slic"], "method": "eac", "colour": 1}, "unknown field"),
    ({"name": "x", "segmenters": ["slic"], "method": "eac", "postprocess": {"blur": 1}}, "postprocess"),
])
def test_bad_recipes_are_refused_with_the_reason(data, message):
    with pytest.raises(InputError, match=message):
        recipe_from_mapping(data)


def test_unreadable_or_unknown_recipe(tmp_path):
    (tmp_path / "bad.toml").write_text("name = [unclosed")
    with pytest.raises(InputError, match="bad.toml: not a readable recipe"):
        load_recipe(tmp_path / "bad.toml")
    with pytest.raises(InputError, match="neither a built-in recipe"):
        load_recipe("no-such-recipe")


def test_overrides_merge_params_and_reset_them_for_a_new_method():
    r = VERSIONS["default"]["3"]
    same = r.with_overrides(params={"threshold": 0.4})
    assert same.params["threshold"] == 0.4 and same.params["min_size"] == r.params["min_size"]
    other = r.with_overrides(method="eac")
    assert other.params == {} and other.segmenters == r.segmenters


def test_a_new_method_keeps_the_image_aware_settings_and_merge_reads_them():
    r = BUILTIN["default"]
    other = r.with_overrides(method="sdp")
    assert other.spatial == r.spatial and other.postprocess == r.postprocess and other.params == {}
    merged = r.method_params()
    assert merged["criterion"] == "auto" and merged["threshold"] == r.spatial["threshold"] == 0.45
    assert merged["min_size"] == 200
    assert merged["member_weights"] == r.spatial["member_weights"]
    assert r.method_params(image=False) == {}  # plain label arrays: merge's own defaults
    assert r.with_overrides(method="merge", params={"threshold": 0.3}).method_params()["threshold"] == 0.3


def test_postprocess_connected_and_small_regions():
    lab = np.array([[0, 0, 1, 0], [0, 0, 1, 0], [2, 2, 2, 2]])
    assert len(np.unique(connected_regions(lab))) == 4  # label 0 is two pieces
    img = np.zeros((3, 4, 3))
    img[:, 3] = 0.9
    merged = merge_small(connected_regions(lab), img, 3)
    assert np.bincount(merged.ravel()).min() >= 3  # both 2-pixel pieces joined a neighbour
    assert merged[0, 3] == merged[2, 3]  # the bright right column joins the bottom row, not the dark block
    with pytest.raises(InputError, match="image"):
        postprocess(lab, None, min_size=3)
    assert postprocess(lab, connected=False).tolist() == lab.tolist()


def test_the_levels_of_a_hierarchy_share_one_lab_conversion_and_give_the_same_regions():
    from segensemble.features import lab_colour

    rng = np.random.default_rng(5)
    img = rng.random((30, 40, 3))
    levels = [rng.integers(0, k, (30, 40)) for k in (3, 12, 40)]
    each = [postprocess(level, img, min_size=20) for level in levels]
    assert all(np.array_equal(a, b) for a, b in zip(postprocess_levels(levels, img, min_size=20), each))
    given = merge_small(levels[1], img, 20, lab=lab_colour(img))
    assert np.array_equal(given, merge_small(levels[1], img, 20))
    with pytest.raises(InputError, match="lab: expected shape"):
        merge_small(levels[1], img, 20, lab=np.zeros((30, 40)))


def test_new_segmenters_drop_the_parameters_fitted_to_the_old_members():
    new = BUILTIN["default"].with_overrides(segmenters=["slic", "felzenszwalb"])
    assert set(new.spatial) == {"threshold", "colourless_threshold", "min_size", "engine"}  # the cuts stay
    assert BUILTIN["default"].without_member_params().spatial == new.spatial
    r = VERSIONS["default"]["3"]
    other = r.with_overrides(segmenters=["slic", "felzenszwalb"])
    assert "member_weights" not in other.params and "coefficients" not in other.params
    assert other.params["criterion"] == "learned" and other.params["threshold"] == r.params["threshold"]
    assert r.with_overrides(segmenters=list(r.segmenters)).params == r.params  # same members: kept
    given = r.with_overrides(segmenters=["slic", "felzenszwalb"], params={"member_weights": [1, 2]})
    assert given.params["member_weights"] == [1, 2]


def test_printed_recipe_is_a_recipe_file(tmp_path):
    from typer.testing import CliRunner

    from segensemble.cli import app

    result = CliRunner().invoke(app, ["recipes", "default"])
    assert result.exit_code == 0, result.output
    (tmp_path / "mine.json").write_text(result.stdout)
    assert load_recipe(tmp_path / "mine.json") == BUILTIN["default"]
    # the nested coefficient table also reads from TOML
    c = BUILTIN["default"].spatial["coefficients"]
    (tmp_path / "m.toml").write_text('name = "m"\nsegmenters = ["slic", "felzenszwalb"]\nmethod = "merge"\n'
                                     '[params]\ncriterion = "learned"\nmember_weights = [1.0, 2.0]\n'
                                     '[params.coefficients]\n' + "".join(f"{k} = {v}\n" for k, v in c.items()))
    assert load_recipe(tmp_path / "m.toml").validate().params["coefficients"] == c
    listing = CliRunner().invoke(app, ["recipes"])
    assert listing.exit_code == 0 and "default" in listing.stdout and "classic" in listing.stdout
    assert CliRunner().invoke(app, ["recipes", "nope"]).exit_code == 2


def test_a_recipe_file_names_its_boundary_evidence():
    base = {"name": "x", "segmenters": ["slic"], "method": "merge"}
    assert recipe_from_mapping(base).boundary is None
    assert recipe_from_mapping({**base, "boundary": "learned"}).boundary == "learned"
    with pytest.raises(InputError, match="boundary: expected none or one of learned, learned:boundary-v1, "
                                         "learned:boundary-v2, learned:boundary-v2-train, learned:boundary-v3, "
                                         "learned:boundary-v4, got 'sobel'"):
        recipe_from_mapping({**base, "boundary": "sobel"})
    assert load_recipe("default@4").boundary is None and load_recipe("default@8").boundary == "learned"
    assert load_recipe("default").boundary == "learned:boundary-v3"
    assert load_recipe("fast").boundary == "learned:boundary-v2" and load_recipe("fast") is load_recipe("fast@2")


def test_fast_is_default_six_with_the_fast_detector():
    """fast@1 changes the detector (ucm member and evidence), mean shift's radius and the refitted merge model;
    everything else is default@6's."""
    v6, v7 = load_recipe("default@6"), load_recipe("fast@1")
    changed = {"name", "version", "description", "segmenters", "boundary", "spatial"}
    assert {k: v for k, v in v6.to_dict().items() if k not in changed} == \
        {k: v for k, v in v7.to_dict().items() if k not in changed}
    assert [s for s in v7.segmenters if s not in v6.segmenters] == ["meanshift:spatial_radius=7",
                                                                       "ucm:threshold=0.15,model=boundary-v2"]
    assert {k: v for k, v in v6.spatial.items() if k not in ("member_weights", "coefficients")} == \
        {k: v for k, v in v7.spatial.items() if k not in ("member_weights", "coefficients")}


@pytest.mark.parametrize("numpy_version, compiled_version", [("default@6", "default@7"), ("fast@1", "fast@2")])
def test_a_compiled_version_is_its_numpy_version_with_compiled_merges(numpy_version, compiled_version):
    before, after = load_recipe(numpy_version), load_recipe(compiled_version)
    changed = {"version", "description", "spatial"}
    assert {k: v for k, v in before.to_dict().items() if k not in changed} == \
        {k: v for k, v in after.to_dict().items() if k not in changed}
    assert after.spatial == {**before.spatial, "engine": "compiled"} and "engine" not in before.spatial
    assert after.method_params()["engine"] == "compiled" and before.method_params()["engine"] == "numpy"


def test_default_eight_is_default_seven_with_its_criterion_trained_on_its_own_merges():
    """Only the learned criterion (member weights, coefficients) and the cut changed: the same members, detector,
    post-processing, working scale and compiled merges."""
    v7, v8 = load_recipe("default@7"), load_recipe("default@8")
    changed = {"version", "description", "spatial"}
    assert {k: v for k, v in v7.to_dict().items() if k not in changed} == \
        {k: v for k, v in v8.to_dict().items() if k not in changed}
    refitted = ("member_weights", "coefficients", "threshold")
    assert {k: v for k, v in v7.spatial.items() if k not in refitted} == \
        {k: v for k, v in v8.spatial.items() if k not in refitted}
    assert v8.spatial["threshold"] == 0.45 and v8.method_params()["engine"] == "compiled"
    assert v8.spatial["coefficients"]["vote"] == pytest.approx(sum(v8.spatial["member_weights"]))


def test_default_nine_is_default_eight_on_the_fourier_detector():
    """Only the detector changed (boundary-v3: boundary-v1's trees on the same features computed through the DFT),
    for the ucm member and the boundary evidence alike; everything else is version 8's."""
    v8, v9 = load_recipe("default@8"), load_recipe("default@9")
    changed = {"version", "description", "segmenters", "boundary"}
    assert {k: v for k, v in v8.to_dict().items() if k not in changed} == \
        {k: v for k, v in v9.to_dict().items() if k not in changed}
    assert list(v9.segmenters) == [*v8.segmenters[:-1], "ucm:threshold=0.15,model=boundary-v3"]
    assert v8.segmenters[-1] == "ucm:threshold=0.15"
    assert (v8.boundary, v9.boundary) == ("learned", "learned:boundary-v3")


@pytest.mark.parametrize("key", sorted(f"{n}@{v}" for n, vs in VERSIONS.items() for v in vs))
def test_bench_runs_exactly_the_recipe_it_was_given(key):
    """A bench configuration carries every field that changes a result (default@4/@5 keep their fitted criterion,
    default@5 its learned boundary, default@3 its plain atoms)."""
    from dataclasses import replace

    from segensemble.batch.bench import BenchConfig

    recipe = load_recipe(key)
    assert BenchConfig.from_recipe(recipe).to_recipe() == replace(recipe, description="")


def test_default_ten_is_default_nine_with_an_exposure():
    """Only the exposure changed: a picture whose white point is below 1 is brightened to 1."""
    v9, v10 = load_recipe("default@9"), load_recipe("default@10")
    changed = {"version", "description", "exposure"}
    assert {k: v for k, v in v9.to_dict().items() if k not in changed} == \
        {k: v for k, v in v10.to_dict().items() if k not in changed}
    assert (v9.exposure, v10.exposure) == (None, 1.0)
    assert all(r.exposure is None for name, versions in VERSIONS.items() for r in versions.values()
               if (name, r.version) not in (("default", "10"), ("default", "11")))


def test_default_eleven_is_default_ten_with_a_cut_for_pictures_without_colour():
    """Only the spatial table's colourless_threshold is new: every picture with colour (every BSDS500 image) gets
    version 10's result."""
    v10, v11 = load_recipe("default@10"), load_recipe("default@11")
    assert load_recipe("default") is v11
    changed = {"version", "description", "spatial"}
    assert {k: v for k, v in v10.to_dict().items() if k not in changed} == \
        {k: v for k, v in v11.to_dict().items() if k not in changed}
    assert v11.spatial == {**v10.spatial, "colourless_threshold": 0.25}
    assert all("colourless_threshold" not in r.spatial for name, versions in VERSIONS.items()
               for r in versions.values() if (name, r.version) != ("default", "11"))


def test_built_in_recipes_are_data_files_in_the_user_format():
    """Every built-in recipe is a TOML file a user could have written: load_recipe(file) gives the same recipe."""
    from segensemble.pipeline.recipes import BUILTIN_FOLDER, VERSIONS

    files = sorted(BUILTIN_FOLDER.glob("*.toml"))
    assert len(files) == sum(len(v) for v in VERSIONS.values()) == 15
    for path in files:
        recipe = load_recipe(path)
        assert recipe == VERSIONS[recipe.name][recipe.version], path.name
        assert path.read_text().startswith("# Built-in recipe"), path.name
    from segensemble.pipeline.workscale import WORKING_PIXELS

    assert VERSIONS["default"]["6"].working_pixels == WORKING_PIXELS and VERSIONS["default"]["5"].working_pixels is None
