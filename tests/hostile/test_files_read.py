"""Findings 3, 4, 9, 10, 12, 13 and 15: every file a command reads (models, recipes, summaries) is checked
for kind, size and range before anything is computed, drawn or printed; a command's outputs appear together."""

from __future__ import annotations

import gzip
import json

import pytest

from segensemble.edges.detector import DEFAULT_MODEL

_DOC = json.loads(gzip.decompress(DEFAULT_MODEL.read_bytes()))


def _model(tmp_path, **changes):
    doc = {**_DOC, **changes}
    p = tmp_path / "m.json.gz"
    p.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return p


@pytest.mark.parametrize("changes, words", [
    ({"strides": [-1, 2]}, "strides"),
    ({"strides": [0, 0]}, "strides"),
    ({"strides": [2.5, 2]}, "strides"),
    ({"stages": [1, 2]}, "stages"),
    ({"stages": ["tree\nbroken", "tree\nbroken"]}, "not a readable LightGBM model"),
    ({"format": "other"}, "not a boundary model"),
])
def test_edges_refuses_a_damaged_model_before_detecting(tmp_path, photo, refused, changes, words, capfd):
    refused(["edges", photo, "-o", tmp_path / "e.png", "--model", _model(tmp_path, **changes)], words,
            folder=tmp_path)
    assert "[LightGBM]" not in capfd.readouterr().err  # the library's own log line is not shown either


def test_a_gzip_bomb_model_is_stopped_at_its_cap(tmp_path, photo, refused):
    p = tmp_path / "bomb.json.gz"
    with gzip.open(p, "wb") as fh:
        block = b" " * (1 << 20)
        for _ in range(80):
            fh.write(block)
    assert p.stat().st_size < 1_000_000
    refused(["edges", photo, "-o", tmp_path / "e.png", "--model", p], "decompresses to more than", folder=tmp_path)


def test_a_yaml_recipe_with_aliases_is_refused_at_once(tmp_path, photo, refused):
    laughs = ["name: x", "segmenters: [slic]", "method: vote", 'a: &a ["lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        laughs.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    laughs.append("description: [*i,*i,*i,*i,*i,*i,*i,*i,*i]")
    recipe = tmp_path / "r.yaml"
    recipe.write_text("\n".join(laughs) + "\n")
    assert recipe.stat().st_size < 1000
    for command in (["fuse", photo, "-o", tmp_path / "o.png", "--recipe", recipe],
                    ["bench", "--synthetic", "--limit", "1", "--out", tmp_path / "b", "--recipe", recipe]):
        refused(command, "aliases", folder=tmp_path)


def test_a_huge_recipe_file_is_refused_unread(tmp_path, photo, refused):
    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "x"\nsegmenters = ["slic"]\nmethod = "vote"\n' + "# padding\n" * 200_000)
    refused(["fuse", photo, "-o", tmp_path / "o.png", "--recipe", recipe], "at most", folder=tmp_path)


@pytest.mark.parametrize("spec", ["felzenszwalb:scale=nan", "felzenszwalb:scale=inf", "slic:n_segments=many"])
def test_bench_refuses_bad_segmenter_values_before_the_first_image(tmp_path, refused, spec):
    refused(["bench", "--synthetic", "--limit", "2", "-s", spec, "--out", tmp_path / "b"], spec.split(":")[0],
            folder=tmp_path)
    assert not (tmp_path / "b").exists()


_GOOD = {"n_images": 3, "boundary": {"ods": {"f": 0.7, "recall": 0.7, "precision": 0.7}, "ois": {"f": 0.72},
                                     "ap": 0.6},
         "pr_curve": {"recall": [0.1, 0.5], "precision": [0.9, 0.6]},
         "region": {"covering": {"ods": 0.5, "ois": 0.6}, "voi": {"ods": 1.8, "ois": 1.6}}}


@pytest.mark.parametrize("path, value", [
    (("boundary", "ods", "f"), float("nan")),
    (("boundary", "ods", "f"), float("inf")),
    (("boundary", "ap"), -5.0),
    (("n_images",), -3),
    (("n_images",), "3"),
    (("region",), [1, 2]),
    (("region", "voi", "ods"), None),
    (("region", "covering", "ods"), "0.5"),
    (("pr_curve", "recall"), [0.1]),
    (("region", "covering", "ods"), 1.5),
])
def test_compare_refuses_a_damaged_summary(tmp_path, refused, path, value):
    doc = json.loads(json.dumps(_GOOD))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.json").write_text(json.dumps(doc))
    good = tmp_path / "good"
    good.mkdir()
    (good / "summary.json").write_text(json.dumps(_GOOD))
    refused(["compare", good, bad, "--out", tmp_path / "cmp"], "summary.json", folder=tmp_path)
    assert not (tmp_path / "cmp").exists()  # nothing half-written: no figure without its tables


def test_compare_labels_are_text(tmp_path):
    from typer.testing import CliRunner

    from segensemble.cli import app

    good = tmp_path / "good"
    good.mkdir()
    (good / "summary.json").write_text(json.dumps(_GOOD))
    r = CliRunner().invoke(app, ["compare", str(good), str(good), "--labels", "a|b,$\\evil{$", "--out",
                                 str(tmp_path / "cmp")])
    assert r.exit_code == 0, r.output
    rows = (tmp_path / "cmp" / "compare.md").read_text().splitlines()[2:]
    assert all(row.count(" | ") == rows[0].count(" | ") for row in rows) and "a\\|b" in rows[0]
    assert sorted(p.name for p in (tmp_path / "cmp").iterdir()) == ["compare.csv", "compare.html", "compare.md",
                                                                   "compare.png"]


def test_compare_into_an_existing_file_is_one_line(tmp_path, refused):
    good = tmp_path / "good"
    good.mkdir()
    (good / "summary.json").write_text(json.dumps(_GOOD))
    (tmp_path / "taken").write_text("x")
    refused(["compare", good, "--out", tmp_path / "taken"], "--out", folder=tmp_path)


def test_compare_shows_every_method_on_a_narrow_terminal(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from segensemble.cli import app

    folders = []
    for i in range(50):
        f = tmp_path / f"method{i:02d}"
        f.mkdir()
        (f / "summary.json").write_text(json.dumps(_GOOD))
        folders.append(str(f))
    monkeypatch.setenv("COLUMNS", "100")
    r = CliRunner().invoke(app, ["compare", *folders])
    assert r.exit_code == 0, r.output
    assert all(f"method{i:02d}" in r.stdout for i in range(50))


def test_an_empty_channel_map_is_refused_not_averaged(tmp_path, photo, refused):
    import numpy as np

    np.save(tmp_path / "b.npy", np.zeros((40, 60, 0)))
    refused(["fuse", photo, "-o", tmp_path / "o.png", "--boundary", tmp_path / "b.npy", "-r", "classic"],
            "b.npy", folder=tmp_path)
