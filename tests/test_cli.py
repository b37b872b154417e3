"""The command line: happy paths and the bad-input contract (exit 2, one line, no output)."""

import io
import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

import segensemble
from segensemble.cli import app
from segensemble.io import read_image, read_labels, write_image, write_labels

runner = CliRunner()


@pytest.fixture
def image_file(tmp_path, blocks_image):
    return write_image(tmp_path / "img.png", blocks_image[0])


@pytest.fixture
def gt_file(tmp_path, blocks_image):
    from segensemble.datasets.synthetic import _ground_truth_mat

    p = tmp_path / "gt.mat"
    p.write_bytes(_ground_truth_mat([blocks_image[1] + 1, blocks_image[1] + 1]))
    return p


def _bad(args, tmp_path, out_name="out.png"):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / out_name).exists()
    return lines[0]


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and segensemble.__version__ in result.stdout


def test_python_dash_m_runs_the_command_line(tmp_path):
    import subprocess
    import sys

    # run from a folder of the user's, as users do: from the repository's root '-m' would find the source tree
    # (its compiled modules are built into the installed package, not there)
    out = subprocess.run([sys.executable, "-m", "segensemble", "--version"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0 and segensemble.__version__ in out.stdout
    bad = subprocess.run([sys.executable, "-m", "segensemble", "fuse", "missing.png", "-o", "out.png"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "error:" in bad.stderr and not (tmp_path / "out.png").exists()


def test_methods_lists_registries():
    result = runner.invoke(app, ["methods"])
    assert result.exit_code == 0
    for name in segensemble.segmenters.available() + segensemble.consensus.available():
        assert name in result.stdout


def test_fuse_image_then_evaluate(tmp_path, image_file, gt_file, blocks_image):
    out = tmp_path / "fused.png"
    result = runner.invoke(app, ["fuse", str(image_file), "-s", "slic:n_segments=8,felzenszwalb:scale=100,sigma=0",
                                 "-m", "eac", "-k", "4", "-o", str(out)])
    assert result.exit_code == 0, result.output
    labels = read_labels(out)
    assert labels.shape == (40, 60) and labels.max() == 3
    result = runner.invoke(app, ["evaluate", str(out), "--gt", str(gt_file), "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    from segensemble.evaluation import region_scores

    expected = region_scores(labels, [blocks_image[1], blocks_image[1]])
    assert {k: scores[k] for k in ("pri", "voi", "covering")} == pytest.approx(
        {k: expected[k] for k in ("pri", "voi", "covering")}
    )
    assert 0 <= scores["f"] <= 1 and scores["threshold"] == 1


def test_fuse_inputs_made_by_other_tools(tmp_path, blocks_image):
    truth = blocks_image[1]
    paths = [write_labels(tmp_path / f"s{i}.png", truth if i else np.where(truth == 3, 2, truth)) for i in range(3)]
    npy = tmp_path / "s3.npy"
    np.save(npy, truth * 7)
    out = tmp_path / "fused.npy"
    result = runner.invoke(app, ["fuse", "--inputs", *map(str, paths), str(npy), "-k", "4", "-o", str(out)])
    assert result.exit_code == 0, result.output
    fused = read_labels(out)
    assert len(set(zip(fused.ravel().tolist(), truth.ravel().tolist()))) == 4


def test_fuse_writes_a_confidence_map(tmp_path, blocks_image):
    truth = blocks_image[1]
    # one member merges blocks 2 and 3: the fused result is unsure exactly there
    paths = [write_labels(tmp_path / f"s{i}.png", truth if i else np.where(truth == 3, 2, truth)) for i in range(3)]
    for suffix in (".png", ".npy"):
        conf = tmp_path / f"conf{suffix}"
        result = runner.invoke(app, ["fuse", "--inputs", *map(str, paths), "-m", "vote_sum", "-k", "4",
                                     "-o", str(tmp_path / "fused.png"), "--confidence", str(conf)])
        assert result.exit_code == 0, result.output
        values = np.load(conf) if suffix == ".npy" else segensemble.io.read_image(conf)[:, :, 0]
        assert values.shape == truth.shape
        unsure = truth == 3  # two of three members put it apart, one with block 2
        assert np.allclose(values[~unsure], 1.0, atol=1 / 255) and np.allclose(values[unsure], 2 / 3, atol=1 / 255)


def test_fuse_confidence_refuses_hard_methods_and_bad_options(tmp_path, blocks_image):
    seg = str(write_labels(tmp_path / "s.png", blocks_image[1]))
    out = ["-o", str(tmp_path / "out.png")]
    line = _bad(["fuse", "--inputs", seg, seg, "-m", "eac", *out, "--confidence", str(tmp_path / "c.png")], tmp_path)
    assert "--confidence: method 'eac' gives no memberships; use one of" in line and "borda" in line
    assert not (tmp_path / "c.png").exists()
    line = _bad(["fuse", "--inputs", seg, seg, "-m", "borda", *out, "--confidence", str(tmp_path / "c.jpg")], tmp_path)
    assert "--confidence: expected a file ending in .png or .npy" in line
    line = _bad(["fuse", "--inputs", seg, seg, "-m", "borda", *out, "--confidence", str(tmp_path / "c.png"),
                 "--confidence-kind", "margin"], tmp_path)
    assert "--confidence-kind" in line


def test_fuse_explain_prints_the_features_of_every_region(tmp_path, image_file):
    out = tmp_path / "fused.png"
    result = runner.invoke(app, ["fuse", str(image_file), "-s", "slic:n_segments=8,felzenszwalb:scale=100,sigma=0",
                                 "-m", "ecbpce", "-k", "4", "-o", str(out), "--explain"])
    assert result.exit_code == 0, result.output
    assert "top features" in result.stdout and "L*" in result.stdout
    assert read_labels(out).max() <= 3
    line = _bad(["fuse", str(image_file), "-m", "eac", "-o", str(tmp_path / "out.png"), "--explain"], tmp_path)
    assert "--explain: method 'eac' gives no feature weights; use one of cbpce, ecbpce" in line


def test_fuse_agree_reports_stability_before_and_after(tmp_path, image_file, blocks_image):
    out = tmp_path / "fused.png"
    result = runner.invoke(app, ["fuse", str(image_file), "-s", "slic:n_segments=8,felzenszwalb:scale=100,sigma=0",
                                 "-m", "sccc", "-k", "4", "-o", str(out), "--agree", "--words", "8", "--verbose"])
    assert result.exit_code == 0, result.output
    assert "ensemble stability" in result.stderr and "after --agree: stability" in result.stderr
    assert read_labels(out).shape == blocks_image[1].shape
    seg = str(write_labels(tmp_path / "s.png", blocks_image[1]))
    line = _bad(["fuse", "--inputs", seg, seg, "-o", str(tmp_path / "out.png"), "--agree"], tmp_path)
    assert "--agree: needs the image" in line


def test_evaluate_table(tmp_path, gt_file, blocks_image):
    seg = write_labels(tmp_path / "seg.png", blocks_image[1])
    result = runner.invoke(app, ["evaluate", str(seg), "--gt", str(gt_file)])
    assert result.exit_code == 0 and "PRI" in result.stdout


def test_bench_on_synthetic_then_resume(tmp_path):
    out = tmp_path / "bench"
    args = ["bench", "--synthetic", "--out", str(out), "--limit", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    from segensemble.pipeline.recipes import BUILTIN

    assert summary["n_images"] == 2 and set(summary["table"]) == set(BUILTIN["default"].segmenters) | {"fused"}
    assert summary["config"]["recipe"] == f"default@{BUILTIN['default'].version}"
    assert len(list((out / "fused").glob("*.png"))) == 2 and len(list((out / "segs").glob("*.mat"))) == 2
    for name in ("methods_per_image.csv", "methods.txt", "eval_hierarchy/eval_bdry.txt", "eval_hierarchy/eval_cover.txt"):
        assert (out / name).is_file(), name
    assert 0 < summary["hierarchy"]["boundary"]["ods"]["f"] <= 1
    printed = result.stdout.split()  # at the 80 columns of a redirected output, every score printed whole
    for row in summary["table"].values():
        assert all(f"{row[k]:.4f}" in printed for k in ("covering", "pri", "voi", "f")), (row, result.stdout)
    before = {p.name: p.stat().st_mtime_ns for p in (out / "per_image").iterdir()}
    result = runner.invoke(app, args)
    assert result.exit_code == 0
    assert before == {p.name: p.stat().st_mtime_ns for p in (out / "per_image").iterdir()}


@pytest.mark.parametrize("width, terminal", [(80, True), (40, True), (80, False)])
def test_bench_table_never_folds_a_score(monkeypatch, width, terminal):
    from rich.console import Console

    from segensemble.cli import bench

    row = {"covering": 0.53914, "pri": 0.69642, "voi": 3.45101, "f": 0.41853, "n_segments": 217.0}
    summary = {"n_images": 3, "dataset": "BSDS500", "table": {"ucm:threshold=0.15,model=boundary-v3": row,
                                                              "fused": {**row, "voi": 1.39551}}}
    printed = io.StringIO()
    monkeypatch.setattr(bench, "out", Console(file=printed, width=width, force_terminal=terminal, highlight=False))
    bench._print_summary(summary, "default@9", "val")
    words = re.sub(r"\x1b\[[0-9;]*m", "", printed.getvalue()).split()
    assert {"0.5391", "0.6964", "3.4510", "0.4185", "217.0", "1.3955"} <= set(words), words
    assert ("ucm:threshold=0.15,model=boundary-v3" in words) == (not terminal or width < 80), words
    bench._print_summary({"n_images": 0, "dataset": "BSDS500", "table": {}}, "default@9", "val")  # every image failed


def test_bench_with_recipe_overrides_and_a_recipe_file(tmp_path):
    out = tmp_path / "bench"
    result = runner.invoke(app, ["bench", "--synthetic", "--out", str(out), "--limit", "1", "--recipe", "classic",
                                 "-m", "vote", "--no-hierarchy"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["method"] == "vote" and "hierarchy" not in summary
    recipe = tmp_path / "mine.toml"
    recipe.write_text('name = "mine"\nsegmenters = ["slic:n_segments=30"]\nmethod = "eac"\n[params]\nlinkage = "single"\n')
    result = runner.invoke(app, ["bench", "--synthetic", "--out", str(tmp_path / "b2"), "--limit", "1", "-r", str(recipe)])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "b2" / "summary.json").read_text())["config"]["params"] == {"linkage": "single"}
    recipe.write_text('name = "bad"\nsegmenters = ["slic"]\nmethod = "eac"\n[params]\nnope = 1\n')
    line = _bad(["bench", "--synthetic", "--out", str(tmp_path / "b3"), "-r", str(recipe)], tmp_path, "b3")
    assert "params" in line and "nope" in line


def test_fuse_with_a_recipe_and_overrides(tmp_path, image_file):
    out = tmp_path / "fused.png"
    result = runner.invoke(app, ["fuse", str(image_file), "--recipe", "default", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "8 segmentations" in result.stderr and "with merge" in result.stderr
    result = runner.invoke(app, ["fuse", str(image_file), "-r", "default", "-m", "vote", "-k", "3", "-o", str(out)])
    assert result.exit_code == 0 and "with vote into 3 regions" in result.stderr, result.output
    result = runner.invoke(app, ["fuse", str(image_file), "-r", "default", "-m", "vote", "-k", "1", "-o", str(out)])
    assert result.exit_code == 0 and "with vote into 1 region" in result.stderr, result.output
    assert "1 regions" not in result.stderr
    line = _bad(["fuse", str(image_file), "-r", "default", "-p", "nope=1", "-o", str(tmp_path / "x.png")], tmp_path,
                "x.png")
    assert "nope" in line


def test_new_segmenters_say_that_the_parameters_fitted_to_the_old_members_are_dropped(tmp_path, image_file):
    """`-s` with the default's members but one parameter changed dropped its fitted member weights and merge
    coefficients without a word (the fused F on BSDS500 val fell from 0.689 to 0.632); now a note says so."""
    note = ("note: --segmenters replaces the members of recipe default@9; the parameters fitted to them "
            "(member_weights, coefficients) are dropped and the method's defaults apply")
    out = str(tmp_path / "f.png")
    for args in (["fuse", str(image_file), "-r", "default@9", "-s", "slic:n_segments=30,watershed", "-o", out],
                 ["bench", "--synthetic", "--out", str(tmp_path / "b"), "--limit", "1", "--no-hierarchy", "-r",
                  "default@9", "-s", "slic:n_segments=30,watershed"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert [line for line in result.stderr.splitlines() if line.startswith("note:")] == [note], result.stderr
    for args in (["fuse", str(image_file), "-r", "classic", "-s", "slic:n_segments=30,watershed", "-o", out],
                 ["fuse", str(image_file), "-o", out], ["fuse", "--inputs", out, out, "-o", str(tmp_path / "g.png")],
                 ["fuse", str(image_file), "-r", "default@3", "-m", "vote", "-o", out]):
        # nothing fitted to drop, the recipe's own members, other segmentations, or another method without -s (its
        # parameters were the old method's: default@3 keeps its fitted ones among merge's)
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "note:" not in result.stderr, result.output
    folder = tmp_path / "photos"  # a batch with a failed image exits 1 and still says it
    folder.mkdir()
    (folder / "a.png").write_bytes(image_file.read_bytes())
    (folder / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a jpeg")
    result = runner.invoke(app, ["fuse", str(folder), "--out-dir", str(tmp_path / "many"), "-r", "default@9", "-s",
                                 "slic:n_segments=30,watershed"])
    assert result.exit_code == 1 and "failed: broken:" in result.stderr, result.output
    assert result.stderr.splitlines()[-1] == note, result.stderr



def test_fuse_jobs_runs_the_members_in_threads_with_the_same_result(tmp_path, image_file):
    outs = []
    for jobs in ("1", "2", "-1"):
        outs.append(tmp_path / f"fused{jobs}.png")
        result = runner.invoke(app, ["fuse", str(image_file), "-j", jobs, "-o", str(outs[-1])])
        assert result.exit_code == 0, result.output
    assert all(np.array_equal(read_labels(outs[0]), read_labels(p)) for p in outs[1:])
    line = _bad(["fuse", str(image_file), "-j", "0", "-o", str(tmp_path / "x.png")], tmp_path, "x.png")
    assert "--jobs" in line and "got 0" in line

def test_recipes_lists_the_builtin_ones():
    result = runner.invoke(app, ["recipes"])
    assert result.exit_code == 0 and "default" in result.stdout and "classic" in result.stdout


def test_bench_jobs_2_gives_byte_identical_results(tmp_path):
    one = runner.invoke(app, ["bench", "--synthetic", "--out", str(tmp_path / "a"), "--limit", "3"])
    two = runner.invoke(app, ["bench", "--synthetic", "--out", str(tmp_path / "b"), "--limit", "3", "-j", "2"])
    assert one.exit_code == 0 and two.exit_code == 0, two.output
    for folder in ("fused", "segs", "members", "per_image"):
        for p in (tmp_path / "a" / folder).iterdir():
            if folder == "per_image":  # everything but the timing is identical
                a, b = json.loads(p.read_text()), json.loads((tmp_path / "b" / folder / p.name).read_text())
                a.pop("seconds"), b.pop("seconds")
                assert a == b
            else:
                assert p.read_bytes() == (tmp_path / "b" / folder / p.name).read_bytes(), p
    for name in ("eval_hierarchy/eval_bdry.txt", "eval_hierarchy/eval_cover.txt", "eval_hierarchy/eval_RI_VOI.txt",
                 "methods.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


# ----------------------------------------------------------------- bad input
def test_missing_image(tmp_path):
    line = _bad(["fuse", str(tmp_path / "nope.jpg"), "-o", str(tmp_path / "out.png")], tmp_path)
    assert "nope.jpg" in line and "not found" in line


def test_empty_and_corrupt_image(tmp_path):
    (tmp_path / "empty.png").write_bytes(b"")
    assert "empty.png" in _bad(["fuse", str(tmp_path / "empty.png"), "-o", str(tmp_path / "out.png")], tmp_path)
    (tmp_path / "bad.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a jpeg")
    assert "bad.jpg" in _bad(["fuse", str(tmp_path / "bad.jpg"), "-o", str(tmp_path / "out.png")], tmp_path)


def test_shape_mismatch_between_segmentations(tmp_path):
    a = write_labels(tmp_path / "a.png", np.zeros((5, 6), int))
    b = write_labels(tmp_path / "b.png", np.zeros((6, 5), int))
    line = _bad(["fuse", "--inputs", str(a), str(b), "-o", str(tmp_path / "out.png")], tmp_path)
    assert "b.png" in line and "shape" in line


@pytest.mark.parametrize(
    "arr, word",
    [(np.array([[0.5, 1.0]]), "non-integer"), (np.array([[-3, 1]]), "non-negative"), (np.array([[np.nan, 1.0]]), "NaN")],
    ids=["float", "negative", "nan"],
)
def test_invalid_labels(tmp_path, arr, word):
    p = tmp_path / "bad.npy"
    np.save(p, arr)
    ok = write_labels(tmp_path / "ok.png", np.zeros((1, 2), int))
    line = _bad(["fuse", "--inputs", str(p), str(ok), "-o", str(tmp_path / "out.png")], tmp_path)
    assert "bad.npy" in line and word in line


def test_empty_label_array(tmp_path):
    p = tmp_path / "e.npy"
    np.save(p, np.zeros((0, 4), dtype=np.int32))
    assert "empty" in _bad(["fuse", "--inputs", str(p), "-o", str(tmp_path / "out.png")], tmp_path)


def test_bad_options(tmp_path, image_file):
    out = str(tmp_path / "out.png")
    assert "nope" in _bad(["fuse", str(image_file), "-m", "nope", "-o", out], tmp_path)
    assert "--n-segments" in _bad(["fuse", str(image_file), "-k", "zero", "-o", out], tmp_path)
    assert "segmenter" in _bad(["fuse", str(image_file), "-s", "magic", "-o", out], tmp_path)
    assert "--output" in _bad(["fuse", str(image_file), "-o", str(tmp_path / "out.txt")], tmp_path, "out.txt")
    assert "n_segments" in _bad(["fuse", str(image_file), "-s", "slic:n_segments=-2", "-o", out], tmp_path)


def test_evaluate_shape_mismatch_and_bad_gt(tmp_path, gt_file):
    seg = write_labels(tmp_path / "seg.png", np.zeros((7, 7), int))
    assert "shape" in _bad(["evaluate", str(seg), "--gt", str(gt_file)], tmp_path)
    (tmp_path / "broken.mat").write_bytes(b"MATLAB 5.0 garbage")
    assert "broken.mat" in _bad(["evaluate", str(seg), "--gt", str(tmp_path / "broken.mat")], tmp_path)


def test_bench_bad_dataset(tmp_path):
    line = _bad(["bench", "--bsds", str(tmp_path), "--out", str(tmp_path / "o")], tmp_path)
    assert "BSDS500" in line
    assert not (tmp_path / "o" / "summary.json").exists()


def test_runtime_failure_exits_1(tmp_path, image_file, monkeypatch):
    import segensemble.pipeline.runner as runner_module

    def boom(*a, **k):
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(runner_module, "run_checked_specs", boom)
    result = runner.invoke(app, ["fuse", str(image_file), "-o", str(tmp_path / "out.png")])
    assert result.exit_code == 1 and "solver exploded" in result.stderr
    assert not (tmp_path / "out.png").exists()


def test_fuse_and_evaluate_a_bsds500_val_image(tmp_path, bsds_root):
    from segensemble.datasets import BSDS500

    ds = BSDS500(bsds_root)
    image_id = ds.ids("val")[0]
    out = tmp_path / "fused.png"
    result = runner.invoke(app, ["fuse", str(ds.image_path("val", image_id)), "-s", "slic,felzenszwalb",
                                 "-m", "eac", "-k", "auto", "-o", str(out)])
    assert result.exit_code == 0, result.output
    labels = read_labels(out)
    assert labels.shape == ds.image("val", image_id).shape[:2] and labels.min() == 0
    result = runner.invoke(app, ["evaluate", str(out), "--gt", str(ds.ground_truth_path("val", image_id))])
    assert result.exit_code == 0
    assert all(word in result.stdout for word in ("PRI", "VOI", "covering"))


def test_segment_with_overlay(tmp_path, image_file):
    out, ov = tmp_path / "seg.png", tmp_path / "overlay.png"
    result = runner.invoke(app, ["segment", str(image_file), "-m", "ncut", "-k", "4", "-p", "n_superpixels=40",
                                 "-o", str(out), "--overlay", str(ov)])
    assert result.exit_code == 0, result.output
    assert read_labels(out).max() == 3
    from segensemble.io import read_image

    assert read_image(ov).shape == (40, 60, 3)


@pytest.mark.parametrize(
    "args, word",
    [(["-m", "nope"], "nope"), (["-p", "bogus=1"], "bogus"), (["-k", "0"], "n-segments"),
     (["-p", "compactness=-1"], "compactness"), (["--overlay", "x.txt"], "--overlay"), (["-j", "0"], "--jobs")],
)
def test_segment_bad_input(tmp_path, image_file, args, word):
    result = runner.invoke(app, ["segment", str(image_file), "-o", str(tmp_path / "out.png"), *args])
    assert result.exit_code == 2, result.output
    assert word in result.output
    assert not (tmp_path / "out.png").exists()


def _run_killing(cmd, cwd, progress_dir, kill_after, env, *, delay=None):
    """Run ``cmd``; SIGKILL it (whole process group) once ``progress_dir`` holds ``kill_after`` files,
    or, with ``delay``, that many seconds after the start (whatever it is doing then)."""
    import os
    import signal
    import subprocess
    import time

    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, cwd=cwd)
    start = time.time()
    deadline = start + (120 if delay is None else delay)
    while time.time() < deadline and proc.poll() is None and (
            delay is not None or len(list(progress_dir.glob("*.json"))) < kill_after):
        time.sleep(0.01)
    alive = proc.poll() is None
    if alive:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return alive


def _cli_env():
    import os

    return {**os.environ, "OMP_NUM_THREADS": "1"}


def _run(cmd, cwd):
    import subprocess

    done = subprocess.run(cmd, env=_cli_env(), capture_output=True, text=True, cwd=cwd)
    assert done.returncode == 0, done.stderr


def test_bench_killed_several_times_then_rerun_gives_the_same_results(tmp_path):
    """SIGKILL a bench run at three points; the final re-run's outputs equal an uninterrupted run's."""
    import sys

    from segensemble.io import read_segmentations

    # run outside the repository: from its root, 'python -m' would import the unmapped source tree
    cmd = [sys.executable, "-m", "segensemble.cli", "bench", "--synthetic", "--limit", "6"]
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    _run(cmd + ["--out", str(whole)], tmp_path)
    for after in (1, 3, 5):
        _run_killing(cmd + ["--out", str(killed)], tmp_path, killed / "per_image", after, _cli_env())
        assert not (killed / "summary.json").exists()  # it really died before the end
    _run(cmd + ["--out", str(killed)], tmp_path)
    for p in sorted((whole / "fused").iterdir()):
        assert p.read_bytes() == (killed / "fused" / p.name).read_bytes(), p.name
    for p in sorted((whole / "segs").iterdir()):
        a, b = read_segmentations(p), read_segmentations(killed / "segs" / p.name)
        assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (whole, killed))
    assert sa["table"] == sb["table"] and sa["hierarchy"]["region"] == sb["hierarchy"]["region"]
    for name in ("eval_hierarchy/eval_bdry.txt", "eval_hierarchy/eval_cover.txt", "methods_per_image.csv"):
        if name == "methods_per_image.csv":  # identical but for the timing column
            strip = [lambda t: [ln.rsplit(",", 1)[0] for ln in t.splitlines()]] * 2
            assert strip[0]((whole / name).read_text()) == strip[1]((killed / name).read_text())
        else:
            assert (whole / name).read_bytes() == (killed / name).read_bytes(), name
    assert not list(killed.rglob("*.tmp*"))  # no half-written file left behind


def _score_command(tmp_path) -> list:
    """A 'segensemble score' command over six synthetic images (results: one annotator's labels).

    240 x 360 images take about 80 ms each to score (40 x 60 ones took 8 ms: a kill waiting for the second of
    six files missed the 35 ms window when the machine was loaded, and the run ended before it)."""
    import sys

    from segensemble.datasets import make_synthetic_dataset
    from segensemble.io import read_ground_truth

    root = make_synthetic_dataset(tmp_path / "ds", n_images=6, shape=(240, 360))
    gt_dir = root / "data" / "groundTruth" / "test"
    res = tmp_path / "res"
    for p in sorted(gt_dir.glob("*.mat")):
        write_labels(res / f"{p.stem}.png", read_ground_truth(p).segmentations[-1])
    return [sys.executable, "-m", "segensemble.cli", "score", str(res), "--gt", str(gt_dir), "--nthresh", "9"]


def test_score_killed_several_times_then_rerun_gives_the_same_files(tmp_path):
    cmd = _score_command(tmp_path)
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    _run(cmd + ["--out", str(whole)], tmp_path)
    for after in (1, 2, 3):  # of six images: the kill lands while images are still being scored
        assert _run_killing(cmd + ["--out", str(killed)], tmp_path, killed / "per_image", after, _cli_env())
        assert not (killed / "summary.json").exists()  # it really died before the end
    _run(cmd + ["--out", str(killed)], tmp_path)
    for p in sorted(whole.glob("eval_*.txt")):
        assert p.read_bytes() == (killed / p.name).read_bytes(), p.name
    assert not list(killed.rglob("*.tmp*"))


def _timed_run(cmd, cwd) -> float:
    import time

    t = time.perf_counter()
    _run(cmd, cwd)
    return time.perf_counter() - t


@pytest.mark.slow
@pytest.mark.parametrize("command", ["bench", "score"])
def test_killed_at_random_instants_then_rerun_gives_the_same_files(tmp_path, command):
    """SIGKILL at four random instants (seeded, 10-80% of an uninterrupted run: from start-up to the writes,
    so also in the middle of writing a file); the re-run's final files equal an uninterrupted run's."""
    import sys

    if command == "bench":
        cmd = [sys.executable, "-m", "segensemble.cli", "bench", "--synthetic", "--limit", "4"]
        compare = ["summary.json", "methods.txt", "eval_hierarchy/eval_bdry.txt", "eval_hierarchy/eval_cover.txt"]
    else:
        cmd = _score_command(tmp_path)
        compare = ["eval_bdry.txt", "eval_bdry_img.txt", "eval_cover.txt", "eval_RI_VOI.txt"]
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    duration = _timed_run(cmd + ["--out", str(whole)], tmp_path)
    rng = np.random.default_rng(20261122)
    # the first kill at 30% of an uninterrupted run's duration lands mid-run (a run more than 3x faster than the
    # timed one would be needed to escape it); the others, at random instants of a resumed (shorter) run, may
    # find it finished already, which is a run like any other: only the files at the end are compared
    delays = [0.3 * duration, *(rng.uniform(0.1, 0.8, size=3) * duration)]
    interrupted = [_run_killing(cmd + ["--out", str(killed)], tmp_path, killed, 0, _cli_env(), delay=float(d))
                   for d in delays]
    assert interrupted[0], "the first kill came after the run had finished"
    _run(cmd + ["--out", str(killed)], tmp_path)
    for name in compare:
        a, b = (whole / name).read_text(), (killed / name).read_text()
        if name == "summary.json":  # equal but for timings and the output path
            a, b = ({"table": d["table"], "n_images": d["n_images"], "region": d["hierarchy"]["region"],
                     "boundary": d["hierarchy"]["boundary"]} for d in map(json.loads, (a, b)))
        assert a == b, name
    if command == "bench":
        assert sorted(p.name for p in (killed / "per_image").iterdir()) == sorted(
            p.name for p in (whole / "per_image").iterdir())
        for p in sorted((whole / "fused").iterdir()):
            assert p.read_bytes() == (killed / "fused" / p.name).read_bytes(), p.name
    assert not list(killed.rglob("*.tmp*"))


def test_edges_writes_a_thinned_8_bit_map_and_a_raw_float_map(tmp_path, image_file):
    from segensemble.evaluation.benchmark import load_result

    out = tmp_path / "edges.png"
    result = runner.invoke(app, ["edges", str(image_file), "-o", str(out)])
    assert result.exit_code == 0, result.output
    thin = load_result(out, "boundary").data
    assert thin.shape == (40, 60) and 0 < thin.max() <= 1
    raw_out = tmp_path / "raw.npy"
    assert runner.invoke(app, ["edges", str(image_file), "--raw", "-o", str(raw_out)]).exit_code == 0
    raw = np.load(raw_out, allow_pickle=False)
    assert raw.dtype == np.float32 and (raw > 0.2).sum() > (thin > 0.2).sum()
    one = tmp_path / "one.npy"  # predicted in one thread: the same map
    assert runner.invoke(app, ["edges", str(image_file), "--raw", "-j", "1", "-o", str(one)]).exit_code == 0
    assert np.array_equal(np.load(one, allow_pickle=False), raw)
    from segensemble.edges import detect_boundaries

    img = read_image(image_file)  # the best shipped detector by default, not the library's boundary-v1
    assert np.array_equal(raw, detect_boundaries(img, model="boundary-v4", nms=False).astype(np.float32))
    assert not np.array_equal(raw, detect_boundaries(img, nms=False).astype(np.float32))


def test_edges_bad_input_is_one_line_and_writes_nothing(tmp_path, image_file):
    assert "--output" in _bad(["edges", str(image_file), "-o", str(tmp_path / "out.txt")], tmp_path, "out.txt")
    assert "--model" in _bad(["edges", str(image_file), "--model", str(tmp_path / "none.json.gz"),
                              "-o", str(tmp_path / "out.png")], tmp_path)
    assert "missing.png" in _bad(["edges", str(tmp_path / "missing.png"), "-o", str(tmp_path / "out.png")], tmp_path)
    assert "--jobs" in _bad(["edges", str(image_file), "-j", "0", "-o", str(tmp_path / "out.png")], tmp_path)


def test_segment_with_the_ucm_segmenter(tmp_path, image_file):
    out = tmp_path / "seg.png"
    result = runner.invoke(app, ["segment", str(image_file), "-m", "ucm", "-k", "3", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert len(np.unique(read_labels(out))) == 3


def test_score_of_soft_boundary_maps_runs_the_boundary_benchmark_by_default(tmp_path, image_file, gt_file):
    results, gts = tmp_path / "edges", tmp_path / "gt"
    results.mkdir(), gts.mkdir()
    assert runner.invoke(app, ["edges", str(image_file), "-o", str(results / "img.png")]).exit_code == 0
    (gts / "img.mat").write_bytes(gt_file.read_bytes())
    result = runner.invoke(app, ["score", str(results), "--gt", str(gts), "--kind", "boundary", "--nthresh", "9",
                                 "--out", str(tmp_path / "eval")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "eval" / "eval_bdry.txt").exists() and not (tmp_path / "eval" / "eval_cover.txt").exists()
    line = _bad(["score", str(results), "--gt", str(gts), "--kind", "boundary", "--what", "region", "--out",
                 str(tmp_path / "eval2")], tmp_path, "eval2")
    assert "--what" in line


def test_fuse_with_a_boundary_map_from_another_tool(tmp_path, image_file, blocks_image):
    import cv2

    edges = np.zeros((40, 60), np.uint8)
    edges[:, 29:31] = edges[19:21, :] = 255  # where the blocks meet
    cv2.imwrite(str(tmp_path / "hed.png"), edges)
    seg = tmp_path / "seg.png"
    write_labels(seg, blocks_image[1])
    out = tmp_path / "out.png"
    result = runner.invoke(app, ["fuse", "--inputs", str(seg), str(seg), "--image", str(image_file),
                                 "--boundary", str(tmp_path / "hed.png"), "-m", "merge", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["fuse", str(image_file), "--boundary", "learned", "-o", str(out)]).exit_code == 0
    assert read_labels(out).shape == (40, 60)


def test_fuse_refuses_a_boundary_map_that_does_not_fit(tmp_path, image_file):
    import cv2

    cv2.imwrite(str(tmp_path / "small.png"), np.zeros((10, 10), np.uint8))
    assert "boundary: expected shape" in _bad(["fuse", str(image_file), "--boundary", str(tmp_path / "small.png"),
                                               "-o", str(tmp_path / "out.png")], tmp_path)
    assert "--boundary" in _bad(["fuse", str(image_file), "--boundary", str(tmp_path / "none.png"),
                                 "-o", str(tmp_path / "out.png")], tmp_path)


def test_edges_writes_the_ucm2_hierarchy_the_benchmark_reads(tmp_path, image_file, gt_file):
    out, u = tmp_path / "edges.png", tmp_path / "img_ucm2.mat"
    result = runner.invoke(app, ["edges", str(image_file), "-o", str(out), "--ucm2", str(u)])
    assert result.exit_code == 0, result.output
    from segensemble.io import read_ucm2

    assert read_ucm2(u).shape == (81, 121)
    result = runner.invoke(app, ["evaluate", str(u), "--gt", str(gt_file), "--nthresh", "9", "--json"])
    assert result.exit_code == 0, result.output
    assert max(row["covering"] for row in json.loads(result.stdout)) > 0.9  # the blocks are found at some cut
    assert "--ucm2" in _bad(["edges", str(image_file), "-o", str(out), "--ucm2", str(tmp_path / "u.txt")], tmp_path,
                            "u.txt")


def test_fuse_on_a_folder_with_an_output_file_points_at_out_dir(tmp_path, image_file):
    """A folder of photos with -o (a user's first try) names --out-dir, not the file ending it did not give."""
    line = _bad(["fuse", str(tmp_path), "-o", str(tmp_path / "out")], tmp_path, "out")
    assert "is a folder" in line and "--out-dir" in line
    line = _bad(["fuse", str(tmp_path)], tmp_path, "out")
    assert "is a folder" in line and "--out-dir" in line
