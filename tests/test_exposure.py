"""A recipe's exposure: a dark picture is brightened to the recipe's white point before its members see it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from segensemble.errors import InputError
from segensemble.pipeline.exposure import MAX_GAIN, apply_gain, check_exposure, exposure_gain
from segensemble.pipeline.recipes import Recipe, load_recipe, recipe_from_mapping
from segensemble.pipeline.runner import run_recipe
from segensemble.pipeline.workscale import working_image, working_shape

#: Felzenszwalb's merges depend on absolute colour differences: at half the brightness its regions change.
CHEAP = Recipe("cheap", "1", ("felzenszwalb:scale=300,sigma=0,min_size=20",
                              "felzenszwalb:scale=600,sigma=0,min_size=20"), "eac", "auto")


def _picture(h=60, w=80, white=0.8) -> np.ndarray:
    """Soft blocks whose brightest channel's 99th percentile is exactly ``white`` (a float picture)."""
    rng = np.random.default_rng(3)
    img = np.empty((h, w, 3))
    img[:, :] = (0.5, 0.45, 0.4)
    img[:, 30:] = (0.42, 0.5, 0.44)
    img[35:, 30:] = (0.4, 0.42, 0.5)
    img += rng.normal(0, 0.02, img.shape)
    img = np.clip(img, 0, None)
    return img * (white / np.percentile(img.max(axis=2), 99))


def test_the_gain_brings_the_white_point_up_to_the_target_and_no_further():
    img = _picture(white=0.45)
    assert exposure_gain(img, 0.9) == pytest.approx(2.0)
    assert exposure_gain(img, 0.45) == 1.0 and exposure_gain(img, 0.3) == 1.0 and exposure_gain(img, None) == 1.0
    assert exposure_gain(img * 0.001, 0.9) == MAX_GAIN  # a black frame is not stretched beyond the cap
    lamp = img.copy()
    lamp[:1, :24] = 1.0  # 24 of 4 800 pixels, half of 1 %: a lamp in the picture does not set its white point
    assert exposure_gain(lamp, 0.9) == pytest.approx(2.0, rel=0.02)
    out = apply_gain(img, exposure_gain(img, 0.9))
    assert np.percentile(out.max(axis=2), 99) == pytest.approx(0.9) and out.max() <= 1.0
    assert apply_gain(img, 1.0) is img


@pytest.mark.parametrize("working_pixels", [None, 1024])
def test_a_picture_at_half_its_brightness_fuses_as_the_picture_itself(working_pixels):
    """Exactly: halving and doubling are exact in floating point, so the members see the same picture; at a
    working scale the full-resolution refinement compares the same brightened colours."""
    img = _picture(white=0.8)
    plain = replace(CHEAP, working_pixels=working_pixels)
    seen = img if working_pixels is None else working_image(img, working_shape(img.shape, working_pixels))
    exposed = replace(plain, exposure=float(np.percentile(seen.max(axis=2), 99)))  # the white point it is seen at
    bright = run_recipe(img, exposed)
    dark = run_recipe(img * 0.5, exposed)
    assert bright.exposure_gain == 1.0 and dark.exposure_gain == 2.0
    assert np.array_equal(bright.labels, dark.labels) and np.array_equal(dark.image, bright.image)
    assert np.array_equal(bright.labels, run_recipe(img, plain).labels)  # bright enough: nothing changes
    assert not np.array_equal(run_recipe(img * 0.5, plain).labels, bright.labels)  # without it the dark one differs
    if working_pixels:
        assert bright.downscaled_from == img.shape[:2] and bright.labels.shape == img.shape[:2]


def test_a_recipe_file_takes_an_exposure_and_refuses_a_bad_one():
    base = {"name": "x", "segmenters": ["slic"], "method": "vote"}
    assert recipe_from_mapping(base).exposure is None
    assert recipe_from_mapping({**base, "exposure": 0.9}).exposure == 0.9
    assert recipe_from_mapping({**base, "exposure": 1}).to_dict()["exposure"] == 1
    for bad in (0, 1.5, -0.2, "0.9", True):
        with pytest.raises(InputError, match=rf"recipe 'x': exposure: expected none or a white point in \(0, 1\], "
                                             rf"got {bad!r}"):
            recipe_from_mapping({**base, "exposure": bad})
    assert check_exposure(None) is None
    assert load_recipe("default@9").exposure is None


def test_a_bench_configuration_carries_every_field_of_its_recipe():
    """The bench rebuilds its recipe from its configuration (in worker processes): a field left out there would
    run another recipe than the one named (as the exposure was, before this test)."""
    from dataclasses import fields

    from segensemble.batch.bench import BenchConfig

    r = replace(load_recipe("default@9"), exposure=0.8, working_pixels=5000, image_aware=False)
    back = BenchConfig.from_recipe(r).to_recipe()
    assert {f.name: getattr(back, f.name) for f in fields(Recipe) if f.name != "description"} == \
        {f.name: getattr(r, f.name) for f in fields(Recipe) if f.name != "description"}


def test_fuse_says_what_gain_it_applied_and_a_folder_records_it(tmp_path):
    import json
    import re

    from typer.testing import CliRunner

    from segensemble.cli import app
    from segensemble.io import write_image

    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "r"\nsegmenters = ["felzenszwalb:scale=300", "felzenszwalb:scale=600"]\n'
                      'method = "eac"\nexposure = 0.9\n')
    folder = tmp_path / "photos"
    folder.mkdir()
    write_image(folder / "dark.png", np.rint(_picture(white=0.45) * 255).astype(np.uint8))
    write_image(folder / "bright.png", np.rint(_picture(white=0.95) * 255).astype(np.uint8))
    runner = CliRunner()
    one = runner.invoke(app, ["fuse", str(folder / "dark.png"), "-r", str(recipe), "-o", str(tmp_path / "o.png")])
    assert one.exit_code == 0, one.output
    gain = float(re.search(r"regions?, brightened x([0-9.]+) \(the recipe's exposure\) ->", one.stderr).group(1))
    assert gain == pytest.approx(2.0, abs=0.02)
    other = runner.invoke(app, ["fuse", str(folder / "bright.png"), "-r", str(recipe), "-o", str(tmp_path / "b.png")])
    assert other.exit_code == 0 and "brightened" not in other.stderr
    many = runner.invoke(app, ["fuse", str(folder), "-r", str(recipe), "--out-dir", str(tmp_path / "out")])
    assert many.exit_code == 0, many.output
    records = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "out" / "per_image").glob("*.json")}
    assert records["bright"]["exposure_gain"] == 1.0
    assert records["dark"]["exposure_gain"] == pytest.approx(gain, abs=0.005)


def test_the_bench_records_the_gain_of_every_image(tmp_path):
    import json

    from typer.testing import CliRunner

    from segensemble.cli import app

    gains = {}
    for white in (None, 1.0):
        recipe = tmp_path / f"r{white}.toml"
        recipe.write_text('name = "r"\nsegmenters = ["felzenszwalb:scale=300", "felzenszwalb:scale=600"]\n'
                          'method = "eac"\n' + ("" if white is None else f"exposure = {white}\n"))
        out = tmp_path / f"b{white}"
        result = CliRunner().invoke(app, ["bench", "--synthetic", "--out", str(out), "--limit", "2",
                                          "--no-hierarchy", "-r", str(recipe)])
        assert result.exit_code == 0, result.output
        gains[white] = [json.loads(p.read_text())["exposure_gain"] for p in sorted((out / "per_image").glob("*.json"))]
    assert gains[None] == [1.0, 1.0] and len(gains[1.0]) == 2 and all(g > 1.0 for g in gains[1.0])  # a bit dim
