"""`segensemble score`: the five official setups, failures, resume, plot."""

import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from segensemble.cli import app
from segensemble.io import read_ground_truth, write_labels

runner = CliRunner()

# (expected dir, input dir, extra options) -- ALGORITHMS.md section 1 table
SETUPS = {
    "test_1": ("ucm2", ["--what", "all", "--nthresh", "5"]),
    "test_2": ("png", ["--what", "boundary", "--kind", "boundary", "--nthresh", "5"]),
    "test_3": ("segs", ["--what", "boundary"]),
    "test_4": ("segs", ["--what", "all"]),
    "test_5": ("segs", ["--what", "region"]),
}
BOUNDARY_FILES = ("eval_bdry.txt", "eval_bdry_img.txt", "eval_bdry_thr.txt")
#: Largest differences from the official boundary files (measured: 0.00069 on eval_bdry_thr.txt of test_1,
#: 0.00057 on eval_bdry.txt of test_2, 0.0013 on eval_bdry_img.txt of test_3).
DATASET_LEVEL_ATOL = 0.0007
PER_IMAGE_ATOL = 0.0015


def _numbers(path):
    return np.array([[float(x) for x in line.split()] for line in path.read_text().splitlines() if line.strip()])


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_official_setups_reproduced(setup, bsds_bench, tmp_path):
    inputs, opts = SETUPS[setup]
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["score", str(bsds_bench / inputs), "--gt", str(bsds_bench / "groundTruth"), "--out", str(out), *opts]
    )
    assert result.exit_code == 0, result.output
    expected_dir = bsds_bench / setup
    expected = sorted(p.name for p in expected_dir.glob("eval_*.txt"))
    assert sorted(p.name for p in out.glob("eval_*.txt")) == expected
    for name in expected:
        if name in BOUNDARY_FILES:
            ours, theirs = _numbers(out / name), _numbers(expected_dir / name)
            assert ours.shape == theirs.shape, name
            # the official matcher approximates the optimum and varies in the 4th decimal (test_3 vs test_4);
            # the bounds the documentation states: 0.0007 at dataset level, 0.0015 per image
            atol = DATASET_LEVEL_ATOL if name != "eval_bdry_img.txt" else PER_IMAGE_ATOL
            np.testing.assert_allclose(ours, theirs, atol=atol, rtol=0, err_msg=name)
        else:  # region numbers: identical to the printed digits
            assert [ln.split() for ln in (out / name).read_text().splitlines()] == [
                ln.split() for ln in (expected_dir / name).read_text().splitlines()
            ], name


@pytest.fixture
def small_results(tmp_path, synthetic_root):
    gt_dir = synthetic_root / "data" / "groundTruth" / "test"
    res = tmp_path / "results"
    for p in sorted(gt_dir.glob("*.mat")):
        write_labels(res / f"{p.stem}.png", read_ground_truth(p).segmentations[0])
    return res, gt_dir


def test_resume_skips_finished_images_and_gives_identical_files(tmp_path, small_results):
    res, gt_dir = small_results
    out = tmp_path / "out"
    args = ["score", str(res), "--gt", str(gt_dir), "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    files = {p.name: p.read_bytes() for p in out.glob("eval_*.txt")}
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "per_image").iterdir()}
    (out / "per_image" / sorted(stamps)[0]).unlink()  # as if killed before this image finished
    assert runner.invoke(app, args).exit_code == 0
    after = {p.name: p.stat().st_mtime_ns for p in (out / "per_image").iterdir()}
    assert {k: v for k, v in after.items() if k != sorted(stamps)[0]} == {
        k: v for k, v in stamps.items() if k != sorted(stamps)[0]
    }
    assert files == {p.name: p.read_bytes() for p in out.glob("eval_*.txt")}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_images"] == 3 and summary["failures"] == {}
    assert (out / "per_image.csv").read_text().count("\n") == 4


def test_failures_are_reported_and_the_rest_is_scored(tmp_path, small_results):
    res, gt_dir = small_results
    gts = sorted(gt_dir.glob("*.mat"))
    gt2 = tmp_path / "gt"
    shutil.copytree(gt_dir, gt2)
    ids = [p.stem for p in gts]
    write_labels(res / f"{ids[0]}.png", np.zeros((5, 5), int))  # size mismatch
    (res / f"{ids[1]}.png").write_bytes(b"not a png")  # unreadable
    import scipy.io

    scipy.io.savemat(gt2 / "zzz_empty.mat", {"groundTruth": np.empty((1, 0), dtype=object)})  # empty GT
    write_labels(res / "zzz_empty.png", np.zeros((5, 5), int))
    (gt2 / "zzz_missing.mat").write_bytes((gt2 / f"{ids[2]}.mat").read_bytes())  # no result file
    out = tmp_path / "out"
    result = runner.invoke(app, ["score", str(res), "--gt", str(gt2), "--out", str(out)])
    assert result.exit_code == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_images"] == 1
    f = summary["failures"]
    assert set(f) == {ids[0], ids[1], "zzz_empty", "zzz_missing"}
    assert "shape" in f[ids[0]] and f"{ids[0]}.png" in f[ids[0]]
    assert f"{ids[1]}.png" in f[ids[1]]
    assert "zero annotations" in f["zzz_empty"] and "zzz_empty.mat" in f["zzz_empty"]
    assert "no result file" in f["zzz_missing"]
    assert all(f"failed: {k}" in result.stderr for k in f)
    assert (out / "eval_bdry.txt").is_file()


def test_subset_and_jobs_and_plot(tmp_path, small_results):
    res, gt_dir = small_results
    next(iter(sorted(res.iterdir()))).unlink()
    out1, out2 = tmp_path / "o1", tmp_path / "o2"
    r1 = runner.invoke(app, ["score", str(res), "--gt", str(gt_dir), "--out", str(out1), "--subset"])
    r2 = runner.invoke(app, ["score", str(res), "--gt", str(gt_dir), "--out", str(out2), "--subset", "-j", "2",
                             "--plot", str(tmp_path / "pr.png")])
    assert r1.exit_code == 0 and r2.exit_code == 0, r2.output
    for p in out1.glob("eval_*.txt"):
        assert p.read_bytes() == (out2 / p.name).read_bytes()
    assert (tmp_path / "pr.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_options(tmp_path, small_results):
    res, gt_dir = small_results
    base = ["score", str(res), "--gt", str(gt_dir), "--out", str(tmp_path / "o")]
    for extra, word in ((["--what", "edges"], "what"), (["--kind", "boundary", "--what", "region"], "what"),
                        (["--kind", "x"], "kind")):
        result = runner.invoke(app, base + extra)
        assert result.exit_code == 2 and word in result.stderr, result.output
    result = runner.invoke(app, ["score", str(tmp_path / "nope"), "--gt", str(gt_dir), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "results_dir" in result.stderr


def test_an_eight_bit_edge_map_is_not_scored_as_a_label_map_by_default(tmp_path, bsds_bench):
    from segensemble.io import read_ground_truth

    gt = read_ground_truth(bsds_bench / "groundTruth" / "2018.mat")
    soft = np.zeros(gt.shape)
    for b in gt.boundaries:  # thin lines whose grey level changes along them, as a detector writes
        soft = np.maximum(soft, b * (40 + (np.arange(gt.shape[1]) % 200))[None, :])
    path = tmp_path / "edges.png"
    import cv2

    cv2.imwrite(str(path), soft.astype(np.uint8))
    args = ["evaluate", str(path), "--gt", str(bsds_bench / "groundTruth" / "2018.mat"), "--nthresh", "5"]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "looks like a soft boundary map" in refused.output
    assert "--kind boundary" in refused.output
    assert runner.invoke(app, args + ["--kind", "boundary", "--summary"]).exit_code == 0
    assert runner.invoke(app, args + ["--kind", "segs"]).exit_code == 0  # the user's word overrides the guess


def test_evaluate_summary_gives_the_curve_scores_of_one_image(bsds_bench):
    args = ["evaluate", str(bsds_bench / "ucm2" / "2018.mat"), "--gt", str(bsds_bench / "groundTruth" / "2018.mat"),
            "--nthresh", "9", "--summary"]
    result = runner.invoke(app, args + ["--json"])
    assert result.exit_code == 0, result.output
    s = json.loads(result.stdout)
    assert s["n_images"] == 1 and 0 < s["boundary"]["r50"] <= 1 and 0 < s["boundary"]["ods"]["f"] <= 1
    assert 0 < s["region"]["fop"]["ods"] == s["region"]["fop"]["ois"] <= 1  # one image: ODS is its OIS
    table = runner.invoke(app, args)
    assert table.exit_code == 0 and "R50" in table.stdout and "Fop" in table.stdout and "1 image\n" in table.stdout


def test_evaluate_ucm2_rows_per_threshold(bsds_bench):
    result = runner.invoke(app, ["evaluate", str(bsds_bench / "ucm2" / "2018.mat"), "--gt",
                                 str(bsds_bench / "groundTruth" / "2018.mat"), "--nthresh", "5", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 5 and {"recall", "precision", "f", "covering", "pri", "voi"} <= set(rows[0])
    assert rows[0]["recall"] > rows[-1]["recall"] and rows[0]["precision"] < rows[-1]["precision"]
