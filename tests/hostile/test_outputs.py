"""Finding 6 and its class: no command writes over one of its inputs, named directly, through a symbolic link
or through a hard link; the input's bytes are unchanged and the command exits 2 with one line."""

from __future__ import annotations

import os

import numpy as np
import pytest

from segensemble.io import write_image, write_labels


def _alias(path, how: str, where):
    """``path`` itself, a symbolic link to it, or a hard link to it (in ``where``)."""
    if how == "same":
        return path
    alias = where / f"alias-{how}{path.suffix}"
    (os.symlink if how == "symlink" else os.link)(path, alias)
    return alias


HOW = ["same", "symlink", "hardlink"]


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("option", ["-o", "--overlay"])
def test_segment(tmp_path, photo, refused, how, option):
    target = _alias(photo, how, tmp_path)
    other = ["-o", tmp_path / "o.png"] if option == "--overlay" else []
    refused(["segment", photo, option, target, *other], "IMAGE", folder=tmp_path)


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("option", ["-o", "--overlay", "--confidence"])
@pytest.mark.parametrize("source", ["PATHS", "--boundary", "--recipe"])
def test_fuse(tmp_path, photo, refused, how, option, source):
    boundary = write_image(tmp_path / "b.png", np.zeros((40, 60)))
    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "r"\nsegmenters = ["slic"]\nmethod = "borda"\nn_segments = 2\n')
    given = {"PATHS": photo, "--boundary": boundary, "--recipe": recipe}[source]
    suffix = ".png"
    target = _alias(given, how, tmp_path)
    if target.suffix != suffix:  # an output of another ending: the same file under a name the option takes
        link = tmp_path / f"same-as-{source.strip('-')}{suffix}"
        os.link(given, link) if how != "symlink" else os.symlink(given, link)
        target = link
    args = ["fuse", photo, "--boundary", boundary, "--recipe", recipe]
    args += ["-o", target] if option == "-o" else ["-o", tmp_path / "o.png", option, target]
    refused(args, source, folder=tmp_path)


@pytest.mark.parametrize("how", HOW)
def test_fuse_inputs(tmp_path, refused, how):
    a = write_labels(tmp_path / "a.png", np.array([[0, 1]] * 4))
    b = write_labels(tmp_path / "b.png", np.array([[0, 0]] * 4))
    refused(["fuse", "--inputs", a, b, "-o", _alias(a, how, tmp_path)], "PATHS[0]", folder=tmp_path)


@pytest.mark.parametrize("how", HOW)
def test_edges(tmp_path, photo, refused, how):
    refused(["edges", photo, "-o", _alias(photo, how, tmp_path)], "IMAGE", folder=tmp_path)


def test_edges_model(tmp_path, photo, refused):
    from segensemble.edges.detector import DEFAULT_MODEL

    model = tmp_path / "m.mat"
    model.write_bytes(DEFAULT_MODEL.read_bytes())
    refused(["edges", photo, "-o", tmp_path / "e.png", "--ucm2", model, "--model", model], "--model",
            folder=tmp_path)


@pytest.mark.parametrize("which", ["RESULTS", "--gt"])
def test_score_out_is_not_an_input_folder(tmp_path, refused, which):
    res, gt = tmp_path / "res", tmp_path / "gt"
    write_labels(res / "1.png", np.zeros((4, 4), int))
    gt.mkdir()
    out = res if which == "RESULTS" else gt
    refused(["score", res, "--gt", gt, "--out", out], which, folder=tmp_path)


def test_compare_out_is_not_an_input_folder(tmp_path, refused):
    import json

    scored = tmp_path / "scored"
    scored.mkdir()
    (scored / "summary.json").write_text(json.dumps({"n_images": 1, "region": {"covering": {"ods": 0.5}}}))
    refused(["compare", scored, "--out", scored], "RESULTS[0]", folder=tmp_path)


def test_bench_out_is_not_the_dataset(tmp_path, refused):
    from segensemble.datasets import make_synthetic_dataset

    root = make_synthetic_dataset(tmp_path / "ds", n_images=1, shape=(20, 30))
    refused(["bench", "--bsds", root, "--out", root, "--limit", "1"], "--bsds", folder=tmp_path)


@pytest.mark.parametrize("option", ["--out-dir", "--overlay"])
def test_fuse_out_dir_is_not_the_photos_folder(tmp_path, photo, refused, option):
    args = ["fuse", tmp_path, "--out-dir", tmp_path / "out" if option != "--out-dir" else tmp_path]
    if option == "--overlay":
        args += ["--overlay", tmp_path]
    refused(args, "PATHS[0]", folder=tmp_path)


def test_report_writes_html_only(tmp_path, refused):
    from segensemble.batch.bench import run_bench

    out = tmp_path / "b"
    run_bench(out, synthetic_images=1, config=None)
    refused(["report", out, "-o", out / "summary.json"], "--output", ".html", folder=tmp_path)


def test_edges_hierarchy_of_a_photo_processed_smaller_is_refused(tmp_path, refused):
    """Finding 5: the ucm2 of the working size was written for a larger image (963 x 643 expected)."""
    from segensemble.io import write_image

    big = write_image(tmp_path / "big.png", np.random.default_rng(0).random((330, 490, 3)))
    refused(["edges", big, "-o", tmp_path / "e.png", "--ucm2", tmp_path / "u.mat"], "--ucm2", "--working-pixels 0",
            folder=tmp_path)
    refused(["edges", big, "-o", tmp_path / "e.png", "--ucm2", tmp_path / "u.mat", "--max-pixels", "100000",
             "--downscale", "--working-pixels", "0"], "--ucm2", folder=tmp_path)
