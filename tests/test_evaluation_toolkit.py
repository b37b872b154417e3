"""The edge researcher's benchmark options: NMS against an independent implementation, tolerance, thinning,
edge-map ground truth."""

import json

import numpy as np
import pytest
from scipy import ndimage

from segensemble.evaluation.nms import boundary_normal, edge_map_nms, non_maximum_suppression, triangle_smooth
from segensemble.errors import FileFormatError, InputError
from segensemble.io import read_boundary_map, read_edge_ground_truth, write_image



def _ridges(seed, shape=(161, 241)):
    """A detector-like soft map: random straight contours of random strength, blurred to ridges ~5 px wide."""
    rng = np.random.default_rng(seed)
    m = np.zeros(shape)
    t = np.arange(-300, 300)
    for _ in range(6):
        r0, c0, ang = rng.integers(0, shape[0]), rng.integers(0, shape[1]), rng.uniform(0, np.pi)
        rr, cc = (r0 + t * np.sin(ang)).astype(int), (c0 + t * np.cos(ang)).astype(int)
        ok = (rr >= 0) & (rr < shape[0]) & (cc >= 0) & (cc < shape[1])
        m[rr[ok], cc[ok]] = rng.uniform(0.3, 1.0)
    return np.clip(ndimage.gaussian_filter(m, 1.5) * 4, 0, 1)


def test_edge_map_nms_agrees_with_pyedgeeval_on_soft_ridges():
    import pyEdgeEval.preprocess as pee  # a test dependency ([test] extra): a missing one is a broken install
    for seed in range(4):
        m = _ridges(seed)
        ours, theirs = edge_map_nms(m), pee.fast_nms(m)
        kept_o, kept_t = ours > 0, theirs > 0
        # tolerance: the kept sets differ on at most 1% of the kept pixels (orientation rounding on near-flat
        # second derivatives), and where both keep a pixel its value is the same
        assert np.sum(kept_o != kept_t) <= 0.01 * kept_t.sum(), seed
        both = kept_o & kept_t
        np.testing.assert_allclose(ours[both], theirs[both], atol=1e-6)


def test_edge_map_nms_equals_pyedgeeval_given_its_orientation_on_the_official_samples(bsds_bench):
    import pyEdgeEval.preprocess as pee

    for path in sorted((bsds_bench / "png").glob("*.png")):
        m = read_boundary_map(path)
        e = triangle_smooth(m, 1)
        # pyEdgeEval divides by Oxx with 0 replaced by 1e-5; the toolbox (and we) divide by Oxx + 1e-5.
        s = triangle_smooth(e, 4)
        sy, sx = np.gradient(s)
        sxx, sxy, syy = np.gradient(sx, axis=1), np.gradient(sy, axis=1), np.gradient(sy, axis=0)
        sxx[sxx == 0] = 1e-5
        normal = np.mod(np.arctan(syy * np.sign(-sxy) / sxx), np.pi)
        ours = non_maximum_suppression(e, normal, border=0)
        h, w = m.shape
        fy = np.minimum(np.minimum(np.arange(h), h - 1 - np.arange(h)) / 5, 1)
        fx = np.minimum(np.minimum(np.arange(w), w - 1 - np.arange(w)) / 5, 1)
        ours = ours * fy[:, None] * fx[None, :]
        theirs = pee.fast_nms(m)
        assert np.sum((ours > 0) != (theirs > 0)) <= 0.003 * np.sum(theirs > 0), path.name  # float32 rounding in C


def test_edge_map_nms_fades_the_sides_and_keeps_ridge_centres():
    m = _ridges(7)
    out = edge_map_nms(m)
    assert out[0].max() == out[:, 0].max() == 0.0  # the outermost pixels are multiplied by 0 / 5
    assert out[2, 2] <= triangle_smooth(m, 1)[2, 2] * (2 / 5) ** 2 + 1e-12  # corners: the product of both fades
    ridge = triangle_smooth(m, 1) > 0.2
    assert 0 < np.sum(out > 0.2) < 0.4 * ridge.sum()  # ridges ~5 px wide thinned to about one pixel
    assert boundary_normal(m).shape == m.shape


@pytest.mark.parametrize("band_pixels", [1, 37, 200, 1000])
def test_thinning_in_bands_of_rows_gives_the_whole_maps_result_to_the_last_bit(monkeypatch, band_pixels):
    from segensemble.evaluation import nms

    rng = np.random.default_rng(11)
    for h, w, radius in [(61, 47, 1), (33, 80, 2), (9, 5, 3), (1, 30, 1), (40, 1, 1)]:
        e = ndimage.gaussian_filter(rng.random((h, w)), 1.5)
        normal = rng.random((h, w)) * np.pi
        monkeypatch.setattr(nms, "BAND_PIXELS", 1 << 40)
        whole, whole_given = non_maximum_suppression(e, radius=radius), non_maximum_suppression(e, normal)
        whole_protocol = edge_map_nms(e)
        monkeypatch.setattr(nms, "BAND_PIXELS", band_pixels)  # one row per band at 1; several rows otherwise
        np.testing.assert_array_equal(non_maximum_suppression(e, radius=radius), whole)
        np.testing.assert_array_equal(non_maximum_suppression(e, normal), whole_given)
        np.testing.assert_array_equal(edge_map_nms(e), whole_protocol)


def _suppressed_by_map_coordinates(e, normal, radius, multiplier=1.01):
    """The thinning's comparisons as SciPy computes them: the whole map read along the normal by
    ``map_coordinates(order=1)`` at positions clipped to the map."""
    h, w = e.shape
    yy, xx = np.arange(h, dtype=np.float64)[:, None], np.arange(w, dtype=np.float64)[None, :]
    cos, sin = np.cos(normal), np.sin(normal)
    keep = np.ones(e.shape, dtype=bool)
    for d in [*range(-radius, 0), *range(1, radius + 1)]:
        coords = [np.clip(yy + d * sin, 0, h - 1), np.clip(xx + d * cos, 0, w - 1)]
        keep &= e * multiplier >= ndimage.map_coordinates(e, coords, order=1)
    return np.where(keep, e, 0.0)


def test_compiled_bilinear_readings_equal_scipy_map_coordinates_to_the_last_bit():
    from segensemble.evaluation._suppress import bilinear_readings

    rng = np.random.default_rng(5)
    for h, w in [(1, 1), (1, 7), (7, 1), (2, 3), (50, 70)]:
        e = rng.random((h, w)) ** 3
        t = rng.random(20000) * np.pi  # positions with every bit set, the last row and column included
        cy = np.concatenate([np.abs(np.sin(t)) * (h - 1), np.arange(h, dtype=np.float64), np.full(w, h - 1.0)])
        cx = np.concatenate([np.abs(np.cos(t)) ** 2 * (w - 1), np.full(h, w - 1.0), np.arange(w, dtype=np.float64)])
        np.testing.assert_array_equal(bilinear_readings(e, cy, cx), ndimage.map_coordinates(e, [cy, cx], order=1))


@pytest.mark.parametrize("radius", [1, 2, 3])
def test_compiled_thinning_reads_the_map_as_scipy_map_coordinates_does_to_the_last_bit(radius):
    rng = np.random.default_rng(23)
    for h, w in [(1, 1), (1, 9), (9, 1), (2, 2), (47, 61), (161, 241)]:
        for e in (rng.random((h, w)) ** 3, np.round(rng.random((h, w)) * 4) / 4, _ridges(radius, (h, w))):
            # angles with every bit set (positions near the first row and column are not on a coarse grid)
            for normal in (rng.random((h, w)) * np.pi, np.arccos(rng.uniform(-1, 1, (h, w))), boundary_normal(e)):
                expected = _suppressed_by_map_coordinates(e, normal, radius)
                np.testing.assert_array_equal(non_maximum_suppression(e, normal, radius=radius, border=0), expected)


def _gt_folder(tmp_path, maps):
    folder = tmp_path / "gt"
    folder.mkdir()
    for i, m in enumerate(maps):
        write_image(folder / f"a{i}.png", (m * 255).astype(np.uint8))
    return folder


def test_edge_png_ground_truth_one_or_several_annotators(tmp_path):
    a = np.zeros((20, 30))
    a[10, :] = 1
    b = np.zeros((20, 30))
    b[12, :] = 0.6  # grey from resizing: >= half the scale is a boundary
    b[5, :] = 0.4  # below half: not
    gt = read_edge_ground_truth(_gt_folder(tmp_path, [a, b]))
    assert len(gt) == 2 and gt.shape == (20, 30) and gt.segmentations == []
    assert gt.boundaries[0].sum() == 30 and np.flatnonzero(gt.boundaries[1][:, 0]).tolist() == [12]
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileFormatError, match="no edge maps"):
        read_edge_ground_truth(tmp_path / "empty")


def test_max_dist_and_no_thin_change_the_matching(tmp_path):
    from segensemble.evaluation.benchmark import MachineResult, evaluate_image

    gt_map = np.zeros((40, 60))
    gt_map[20, :] = 1
    gt = read_edge_ground_truth(_gt_folder(tmp_path, [gt_map]))
    pred = np.zeros((40, 60))
    pred[18:20, :] = 0.9  # two pixels thick, 1-2 px above the human line
    result = MachineResult("boundary", pred)
    tight = evaluate_image(result, gt, nthresh=1, region=False, max_dist=0.0075)  # radius 0.54 px
    loose = evaluate_image(result, gt, nthresh=1, region=False, max_dist=0.04)  # radius 2.9 px
    assert tight.boundary.cntR[0] == 0 and loose.boundary.cntR[0] >= 58
    thick = evaluate_image(result, gt, nthresh=1, region=False, max_dist=0.04, thin=False)
    assert loose.boundary.sumP[0] <= 61 and thick.boundary.sumP[0] == 120  # thinning keeps about one row
    with pytest.raises(InputError, match="no regions"):
        evaluate_image(result, gt, nthresh=1)


def test_score_with_edge_png_ground_truth_nms_and_nyud_tolerance(tmp_path):
    from typer.testing import CliRunner

    from segensemble.cli import app

    gts, res = tmp_path / "gts", tmp_path / "res"
    gts.mkdir()
    res.mkdir()
    for k in range(2):
        m = _ridges(10 + k, shape=(60, 80))
        human = (edge_map_nms(m) > 0.3).astype(np.uint8) * 255
        (gts / f"im{k}").mkdir()
        write_image(gts / f"im{k}" / "ann1.png", human)
        write_image(gts / f"im{k}" / "ann2.png", np.roll(human, 1, axis=0))
        write_image(res / f"im{k}.png", (m * 255).astype(np.uint8))
    (gts / "im0" / "notes.txt").write_text("not an annotation")
    runner = CliRunner()
    plain = runner.invoke(app, ["score", str(res), "--gt", str(gts), "--out", str(tmp_path / "o1"), "--kind",
                                "boundary", "--nthresh", "9"])
    assert plain.exit_code == 0, plain.output
    record = json.loads((tmp_path / "o1" / "per_image" / "im0.json").read_text())
    assert sorted(record["inputs"]) == ["ground_truth/ann1.png", "ground_truth/ann2.png", "result"]  # what was read
    nms = runner.invoke(app, ["score", str(res), "--gt", str(gts), "--out", str(tmp_path / "o2"), "--nms",
                              "--max-dist", "0.011", "--nthresh", "9"])
    assert nms.exit_code == 0, nms.output
    f_plain = json.loads((tmp_path / "o1" / "summary.json").read_text())["boundary"]["ods"]["f"]
    f_nms = json.loads((tmp_path / "o2" / "summary.json").read_text())["boundary"]["ods"]["f"]
    assert f_nms > f_plain and f_nms > 0.8  # the thick ridges lose precision without NMS
    bad = runner.invoke(app, ["score", str(res), "--gt", str(gts), "--out", str(tmp_path / "o3"), "--what", "region"])
    assert bad.exit_code == 2 and "edge maps only" in bad.output
    far = runner.invoke(app, ["score", str(res), "--gt", str(gts), "--out", str(tmp_path / "o4"), "--max-dist", "2"])
    assert far.exit_code == 2 and "--max-dist: expected a fraction of the image diagonal in (0, 0.05]" in far.output and "got 2.0" in far.output
    assert not (tmp_path / "o4").exists()


def test_compare_draws_the_figure_and_the_table(tmp_path):
    import cv2
    from typer.testing import CliRunner

    from segensemble.cli import app
    from segensemble.datasets import make_synthetic_dataset
    from segensemble.io import read_ground_truth, write_segmentations
    from segensemble.batch.score import score_results

    root = make_synthetic_dataset(tmp_path / "ds", n_images=2, shape=(30, 40))
    gt_dir = root / "data" / "groundTruth" / "test"
    for k in (0, 1):  # a 3-level "hierarchy" per method: annotator k, the other annotator, one region
        (tmp_path / f"res{k}").mkdir()
        for p in sorted(gt_dir.glob("*.mat")):
            segs = read_ground_truth(p).segmentations
            write_segmentations(tmp_path / f"res{k}" / f"{p.stem}.mat", [segs[k], segs[1 - k], segs[0] * 0])
        score_results(tmp_path / f"res{k}", gt_dir, tmp_path / f"eval{k}")
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "eval0"), str(tmp_path / "eval1"), "--labels",
                                      "first,second", "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    assert "ODS F" in result.output and "first" in result.output and "BDE" in result.output
    fig = cv2.imread(str(tmp_path / "cmp" / "compare.png"))
    assert fig.shape == (660, 660, 3)
    hsv = cv2.cvtColor(fig, cv2.COLOR_BGR2HSV)
    assert np.sum(hsv[:, :, 1] > 120) > 600  # coloured curves drawn, not only the grey iso-F lines and axes
    md = (tmp_path / "cmp" / "compare.md").read_text().splitlines()
    assert md[0].startswith("| method | images | ODS F ↑") and md[2].startswith("| first | 2 |")
    rows = (tmp_path / "cmp" / "compare.csv").read_text().splitlines()
    assert rows[0].startswith("method,n_images,ods_f") and len(rows) == 3
    page = (tmp_path / "cmp" / "compare.html").read_text()
    assert "id='compare-table'" in page and "<svg" in page and "second" in page
    assert "http://" not in page.split("<svg")[0]  # self-contained: nothing fetched
    bad = CliRunner().invoke(app, ["compare", str(tmp_path / "eval0"), "--labels", "a,b"])
    assert bad.exit_code == 2 and "labels: expected 1 labels" in bad.output


@pytest.mark.parametrize("bad", [0, 1, 2.0, -0.1, True, "0.01"])
def test_max_dist_is_checked_by_the_library_too(bad):
    from segensemble.evaluation.benchmark import MachineResult, evaluate_image
    from segensemble.io import GroundTruth

    gt = GroundTruth([], [np.zeros((10, 10), bool)])
    with pytest.raises(InputError, match="max_dist: expected a fraction of the image diagonal"):
        evaluate_image(MachineResult("boundary", np.zeros((10, 10))), gt, nthresh=1, region=False, max_dist=bad)
