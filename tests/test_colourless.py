"""A picture without colour is cut at its recipe's ``colourless_threshold``: its hierarchy reaches the colour
photos' cut early (fewer member boundaries, no colour differences)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from segensemble.errors import InputError
from segensemble.pipeline.colourless import COLOURLESS_SPREAD, colourless_spatial, is_colourless
from segensemble.pipeline.recipes import Recipe, recipe_from_mapping
from segensemble.pipeline.runner import run_recipe

#: The learned merge on two Felzenszwalb members: its hierarchy is cut at the spatial table's threshold.
MERGE = Recipe("gray", "1", ("felzenszwalb:scale=100,sigma=0,min_size=10",
                             "felzenszwalb:scale=300,sigma=0,min_size=10"), "merge", "auto",
               spatial={"threshold": 0.8, "min_size": 20})


def _blocks(h=60, w=80) -> np.ndarray:
    """Gray blocks of close levels and a little noise (a float picture, every channel equal)."""
    rng = np.random.default_rng(5)
    g = np.full((h, w), 0.50)
    g[:, 30:] = 0.56
    g[35:, 30:] = 0.44
    g[:20, :15] = 0.6
    g = np.clip(g + rng.normal(0, 0.015, g.shape), 0, 1)
    return np.repeat(g[..., None], 3, axis=2)


def test_a_gray_picture_is_colourless_and_a_colour_one_is_not():
    gray = _blocks()
    assert is_colourless(gray)
    noisy = gray + np.random.default_rng(0).uniform(-2 / 255, 2 / 255, gray.shape)  # a gray JPEG decoded as RGB
    assert is_colourless(np.clip(noisy, 0, 1))
    caption = gray.copy()
    caption[0, :40] = (1.0, 0.0, 0.0)  # 40 of 4 800 pixels in red: under 1 %
    assert is_colourless(caption)
    tint = gray * (1.0, 1.0, 1.0 - 2 * COLOURLESS_SPREAD)
    assert not is_colourless(tint)
    assert not is_colourless(np.random.default_rng(1).random((20, 20, 3)))


def test_the_colourless_cut_takes_the_place_of_the_threshold_only_when_given():
    assert colourless_spatial({"threshold": 0.45, "colourless_threshold": 0.2})["threshold"] == 0.2
    assert colourless_spatial({"threshold": 0.45}) == {"threshold": 0.45}
    assert colourless_spatial({"threshold": 0.45, "colourless_threshold": None})["threshold"] == 0.45


def test_a_recipe_file_takes_a_colourless_threshold_and_refuses_a_bad_one():
    base = {"name": "x", "segmenters": ["slic"], "method": "merge"}
    assert recipe_from_mapping({**base, "spatial": {"colourless_threshold": 0.25}}).spatial["colourless_threshold"] \
        == 0.25
    for bad in (1.5, -0.1, "0.2", True):
        with pytest.raises(InputError, match=r"spatial: colourless_threshold: expected a number in \[0, 1\] "
                                             r"\(or none\), got "):
            recipe_from_mapping({**base, "spatial": {"colourless_threshold": bad}})


def test_a_gray_picture_is_cut_at_the_colourless_threshold():
    gray = _blocks()
    low = replace(MERGE, spatial={**MERGE.spatial, "threshold": 0.3})
    own = replace(MERGE, spatial={**MERGE.spatial, "colourless_threshold": 0.3})
    coarse, fine, result = run_recipe(gray, MERGE), run_recipe(gray, low), run_recipe(gray, own)
    assert coarse.labels.max() < fine.labels.max()  # the two cuts differ on this picture
    assert result.colourless and not coarse.colourless
    assert np.array_equal(result.labels, fine.labels)
    assert result.recipe is own  # the result names the recipe given, not the one it was cut with
    overridden = run_recipe(gray, own.with_overrides(params={"threshold": 0.8}))
    assert np.array_equal(overridden.labels, coarse.labels) and not overridden.colourless  # -p threshold wins
    assert not run_recipe(gray, own.with_overrides(n_segments=3)).colourless  # K given: cut at K, not at a threshold


def test_a_colour_picture_is_not_touched_by_the_colourless_cut():
    colour = _blocks() * (1.0, 0.9, 0.75)
    own = replace(MERGE, spatial={**MERGE.spatial, "colourless_threshold": 0.3})
    result = run_recipe(colour, own)
    assert not result.colourless
    assert np.array_equal(result.labels, run_recipe(colour, MERGE).labels)
    low = replace(MERGE, spatial={**MERGE.spatial, "threshold": 0.3})
    assert not np.array_equal(result.labels, run_recipe(colour, low).labels)  # the cut would change it


def test_fuse_says_it_cut_a_gray_picture_lower_and_a_folder_records_it(tmp_path):
    import json

    from typer.testing import CliRunner

    from segensemble.cli import app
    from segensemble.io import write_image

    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "r"\nsegmenters = ["felzenszwalb:scale=100", "felzenszwalb:scale=300"]\n'
                      'method = "merge"\n[spatial]\nthreshold = 0.8\ncolourless_threshold = 0.3\n')
    folder = tmp_path / "photos"
    folder.mkdir()
    write_image(folder / "gray.png", np.rint(_blocks()[..., 0] * 255).astype(np.uint8))
    write_image(folder / "colour.png", np.rint(_blocks() * (1.0, 0.9, 0.75) * 255).astype(np.uint8))
    runner = CliRunner()
    one = runner.invoke(app, ["fuse", str(folder / "gray.png"), "-r", str(recipe), "-o", str(tmp_path / "o.png")])
    assert one.exit_code == 0, one.output
    assert "regions, no colour: cut at 0.3 (the recipe's colourless_threshold) ->" in one.stderr
    other = runner.invoke(app, ["fuse", str(folder / "colour.png"), "-r", str(recipe), "-o", str(tmp_path / "c.png")])
    assert other.exit_code == 0 and "no colour" not in other.stderr
    many = runner.invoke(app, ["fuse", str(folder), "-r", str(recipe), "--out-dir", str(tmp_path / "out")])
    assert many.exit_code == 0, many.output
    records = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "out" / "per_image").glob("*.json")}
    assert records["gray"]["colourless"] is True and records["colour"]["colourless"] is False
