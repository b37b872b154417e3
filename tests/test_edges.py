"""The learned boundary detector and non-maximum suppression (segensemble.edges)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from segensemble import InputError
from segensemble.edges import BoundaryModel, boundary_normal, detect_boundaries, load_boundary_model
from segensemble.edges import non_maximum_suppression as nms
from segensemble.edges.detector import predict_probability
from segensemble.edges.features import (boundary_feature_names, boundary_features, half_disc_kernels, shifted)
from segensemble.errors import FileFormatError


def _ridge(shape=(24, 24), column=11, profile=(0.5, 1.0, 0.5)):
    e = np.zeros(shape)
    for d, v in zip((-1, 0, 1), profile):
        e[:, column + d] = v
    return e


def test_nms_keeps_the_centre_line_of_a_vertical_and_a_horizontal_ridge():
    e = _ridge()
    thin = nms(e, border=0)
    assert np.array_equal(np.flatnonzero(thin[5:-5].any(axis=0)), [11])
    assert np.allclose(thin[5:-5, 11], 1.0)
    thin_t = nms(e.T, border=0)
    assert np.array_equal(np.flatnonzero(thin_t[:, 5:-5].any(axis=1)), [11])


def test_nms_thins_a_diagonal_ridge_to_one_pixel_per_row():
    n = 30
    e = np.zeros((n, n))
    for i in range(n):
        for d, v in ((-1, 0.5), (0, 1.0), (1, 0.5)):
            if 0 <= i + d < n:
                e[i, i + d] = v
    thin = nms(e, border=0)
    for i in range(6, n - 6):
        assert np.flatnonzero(thin[i]).tolist() == [i]


def test_nms_keeps_both_pixels_of_a_flat_two_pixel_ridge_and_fades_at_the_border():
    e = _ridge(profile=(0.0, 1.0, 1.0))
    thin = nms(e, border=0)
    assert np.array_equal(np.flatnonzero(thin[5:-5].any(axis=0)), [11, 12])
    faded = nms(e, border=5)
    assert faded[0].max() == 0 and faded[12, 11] == pytest.approx(1.0)
    assert faded[2, 11] == pytest.approx(2 / 5)


def test_nms_uses_a_given_normal():
    e = _ridge()
    along = nms(e, np.full(e.shape, np.pi / 2), border=0)  # comparing along the ridge suppresses nothing of it
    assert np.array_equal(along[5:-5, 10:13], e[5:-5, 10:13])


def test_boundary_normal_of_axis_aligned_and_diagonal_ridges():
    ridge = _ridge(shape=(21, 21), column=10, profile=(0, 1, 0))
    assert boundary_normal(ridge)[10, 10] == pytest.approx(0, abs=1e-3)
    assert boundary_normal(ridge.T)[10, 10] == pytest.approx(np.pi / 2, abs=1e-3)
    assert boundary_normal(np.eye(21))[10, 10] == pytest.approx(3 * np.pi / 4, abs=1e-3)
    assert boundary_normal(np.fliplr(np.eye(21)))[10, 10] == pytest.approx(np.pi / 4, abs=1e-3)


@pytest.mark.parametrize("bad, word", [(np.zeros((3, 3, 3)), "2-D"), (np.full((3, 3), np.nan), "finite"),
                                       ("edges", "2-D")])
def test_nms_refuses_bad_maps_naming_the_parameter(bad, word):
    with pytest.raises(InputError, match=f"edges: .*{word}"):
        nms(bad)


def test_nms_refuses_a_normal_of_another_shape_and_bad_settings():
    with pytest.raises(InputError, match="normal: expected shape"):
        nms(np.zeros((4, 4)), np.zeros((4, 5)))
    with pytest.raises(InputError, match="radius"):
        nms(np.zeros((4, 4)), radius=0)
    with pytest.raises(InputError, match="multiplier"):
        nms(np.zeros((4, 4)), multiplier=-1)


def test_half_disc_kernels_difference_the_two_halves():
    for k in half_disc_kernels(4, 8):
        assert k.sum() == pytest.approx(0, abs=1e-6)
        assert k[k > 0].sum() == pytest.approx(1, abs=1e-5) and k[k < 0].sum() == pytest.approx(-1, abs=1e-5)
    vertical = half_disc_kernels(4, 8)[0]  # split by the vertical diameter: left and right halves
    step = np.zeros((9, 9)); step[:, 5:] = 1
    assert abs((vertical * step).sum()) > 0.9


def test_shifted_reads_the_neighbourhood():
    a = np.arange(25.0).reshape(5, 5)
    reads = shifted(a, (-1, 0, 1))
    assert [r[2, 2] for r in reads] == [6, 7, 8, 11, 12, 13, 16, 17, 18]


@pytest.mark.parametrize("shape", [(8, 13, 17), (8, 1, 1), (3, 4, 5), (8, 0, 5)])
def test_compiled_orientation_statistics_equal_numpys_bit_for_bit(shape):
    from segensemble.edges._oriented import add_scaled, orientation_stats

    rng = np.random.default_rng(7)
    resp = (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 4, size=shape)).astype(np.float32)
    resp.ravel()[::5] = -0.0  # negative zeros become +0.0, as np.abs makes them
    expected = np.abs(resp)
    strongest, mean = orientation_stats(resp)  # in place: resp is now |resp|
    assert resp.tobytes() == expected.tobytes()
    assert strongest.tobytes() == expected.max(axis=0, initial=0).tobytes()
    assert mean.tobytes() == expected.mean(axis=0).tobytes()
    total = rng.random(shape).astype(np.float32)
    divisor = np.percentile(strongest, 99) + 1e-6 if strongest.size else np.float32(1.5)
    want = total + expected / divisor
    add_scaled(total, resp, divisor)
    assert total.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="differ in shape"):
        add_scaled(np.zeros((1, 2, 3), np.float32), np.zeros((1, 3, 2), np.float32), 1.0)
    with pytest.raises(ValueError, match="no orientations"):
        orientation_stats(np.zeros((0, 2, 3), np.float32))


def test_boundary_features_peak_at_a_step():
    img = np.zeros((40, 60, 3)); img[:, 30:] = 1
    f = boundary_features(img)
    names = boundary_feature_names()
    assert f.shape == (40, 60, len(names)) and f.dtype == np.float32
    row = f[20, :, names.index("L r3 max")]
    assert int(np.argmax(row)) in (29, 30)
    assert row[10] == pytest.approx(0, abs=1e-5)


class _ColumnBooster:
    """Predicts feature 0 (stands in for a LightGBM booster in the stride test)."""

    def predict(self, rows, num_threads=1):
        return rows[:, 0]


@pytest.mark.parametrize("stride", [1, 2, 3])
def test_predicting_at_a_stride_interpolates_at_the_right_pixels(stride):
    h, w = 30, 40
    x = np.broadcast_to(np.arange(w, dtype=np.float32), (h, w))[..., None]
    p = predict_probability(_ColumnBooster(), x, stride)
    assert p.shape == (h, w)
    inner = slice(0, w - stride)
    assert np.allclose(p[:, inner], x[:, inner, 0], atol=1e-4)


def test_the_shipped_model_finds_the_boundary_of_a_disc():
    yy, xx = np.mgrid[0:80, 0:120]
    inside = (yy - 40) ** 2 + (xx - 60) ** 2 < 25 ** 2
    img = np.where(inside[..., None], [0.8, 0.2, 0.2], [0.2, 0.3, 0.7])
    e = detect_boundaries(img)
    assert e.shape == inside.shape and e.dtype == np.float32 and 0 <= e.min() and e.max() <= 1
    from scipy import ndimage

    contour = inside & ~ndimage.binary_erosion(inside)
    ring = ndimage.distance_transform_edt(~contour) <= 2.5
    strong = e > 0.3
    assert strong.sum() > 100 and (strong & ring).sum() / strong.sum() > 0.95
    raw = detect_boundaries(img, nms=False)
    assert (raw > 0.3).sum() > strong.sum()  # the raw probability is a thicker ridge



def test_threads_predict_the_same_map_as_one(monkeypatch):
    """Rows split between threads (both stages, the second on candidates only): the one-thread map bit for bit."""
    from segensemble.edges import detector
    from segensemble.segmenters.ucm import ucm

    rng = np.random.default_rng(2)
    img = np.clip(np.kron(rng.random((6, 8, 3)), np.ones((12, 12, 1))) + 0.05 * rng.random((72, 96, 3)), 0, 1)
    one = detect_boundaries(img, nms=False)
    monkeypatch.setattr(detector, "MIN_ROWS_PER_THREAD", 50)  # a 72 x 96 image gives both stages several blocks
    detector._RECENT.clear()
    assert np.array_equal(detect_boundaries(img, nms=False, n_jobs=3), one)
    detector._RECENT.clear()
    assert np.array_equal(ucm(img, n_jobs=2).labels, ucm(img).labels)
    with pytest.raises(InputError, match="n_jobs: expected a positive int or -1"):
        detect_boundaries(img, n_jobs=0)

def test_model_files_round_trip_and_foreign_files_are_refused(tmp_path):
    model = load_boundary_model()
    assert len(model.strides) == len(model.stages) >= 1 and model.info["train_images"] == 200
    path = model.to_file(tmp_path / "m.json.gz")
    again = load_boundary_model(path)
    img = np.random.default_rng(0).random((20, 30, 3))
    assert np.array_equal(detect_boundaries(img, model=again), detect_boundaries(img))
    (tmp_path / "junk.json.gz").write_bytes(b"not gzip")
    with pytest.raises(FileFormatError, match="not a boundary model"):
        load_boundary_model(tmp_path / "junk.json.gz")
    doc = json.loads(gzip.decompress(path.read_bytes()))
    doc["features"] = "something-else"
    (tmp_path / "other.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    with pytest.raises(FileFormatError, match="for features 'something-else'"):
        load_boundary_model(tmp_path / "other.json.gz")
    with pytest.raises(InputError, match="model: expected a BoundaryModel"):
        detect_boundaries(img, model=3)
    assert isinstance(again, BoundaryModel)


@pytest.mark.slow
def test_the_shipped_model_on_five_val_images(bsds_root):
    """Scored as the Berkeley benchmark scores a soft map: well above a thinned colour gradient's boundary F."""
    from segensemble.datasets import BSDS500
    from segensemble.evaluation.aggregate import collect_boundaries
    from segensemble.evaluation.benchmark import MachineResult, evaluate_image
    from segensemble.features import boundary_strength

    ds = BSDS500(bsds_root)
    ours, gradient = [], []
    for i in ds.ids("val")[::20]:  # five val images across the split
        img, gt = ds.image("val", i), ds.ground_truth("val", i)
        ours.append(evaluate_image(MachineResult("boundary", detect_boundaries(img)), gt, nthresh=25,
                                   region=False).boundary)
        grad = nms(boundary_strength(img).clip(0, 1))
        gradient.append(evaluate_image(MachineResult("boundary", grad), gt, nthresh=25, region=False).boundary)
    f_ours, f_grad = collect_boundaries(ours).ods_F, collect_boundaries(gradient).ods_F
    assert f_ours > 0.68 and f_ours > f_grad + 0.1


# --- ultrametric contour maps ---------------------------------------------------------------------------------

from segensemble.edges.ucm import boundary_hierarchy, ucm2_map, ultrametric_distances, watershed_regions  # noqa: E402
from segensemble.evaluation.benchmark import MachineResult  # noqa: E402


def _same_partition(a, b) -> bool:
    pairs = np.unique(np.stack([a.ravel(), b.ravel()]), axis=1)
    return pairs.shape[1] == len(np.unique(a)) == len(np.unique(b))


def _blobs(seed=0, shape=(40, 50)):
    """A noisy boundary map: three walls of different strength and speckle."""
    rng = np.random.default_rng(seed)
    p = rng.random(shape) * 0.05
    p[:, 15] += 0.8
    p[20, 15:] += 0.4
    p[:, 35] += 0.2
    return np.clip(p, 0, 1)


def test_the_watershed_separates_the_basins_of_a_wall():
    p = np.zeros((6, 9)); p[:, 4] = 1
    lab = watershed_regions(p)
    assert lab[0, 0] != lab[0, 8] and len(np.unique(lab)) == 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ucm2_thresholded_as_the_benchmark_does_equals_the_hierarchy_cut(seed):
    """label(ucm2 <= t)[1::2, 1::2] (the BSDS reading of a ucm2) is the hierarchy's cut at t, at every height."""
    h = boundary_hierarchy(_blobs(seed), min_size=5)
    u = h.ucm2()
    assert u.shape == (81, 101)
    result = MachineResult("ucm2", u)
    for t in np.unique(np.r_[h.heights, 0.0])[::3]:
        assert _same_partition(result.regions(t, 0), h.cut(threshold=t))


def test_the_hierarchy_merges_the_weakest_wall_first():
    p = np.zeros((30, 60)); p[:, 20] = 0.9; p[:, 40] = 0.3
    h = boundary_hierarchy(p)
    assert h.n_regions == 3 and h.heights.round(2).tolist() == [0.3, 0.9]
    assert len(np.unique(h.cut(threshold=0.5))) == 2 and len(np.unique(h.cut(n_segments=1))) == 1
    u = h.ucm2()
    assert u[1::2, 2::2].max() == pytest.approx(0.9)
    assert u[0].max() == pytest.approx(0.9)  # the frame carries the contours that meet it


def test_ultrametric_distances_are_the_first_joining_height():
    merges = np.array([[0, 1], [2, 3], [0, 2]])
    heights = np.array([0.1, 0.2, 0.5])
    pairs = np.array([[0, 1], [1, 2], [2, 3], [0, 3]])
    assert ultrametric_distances(4, merges, heights, pairs).tolist() == [0.1, 0.5, 0.2, 0.5]
    assert ultrametric_distances(3, merges[:1], heights[:1], np.array([[1, 2]])).tolist() == [np.inf]


def test_ucm_refuses_bad_input_naming_the_parameter():
    with pytest.raises(InputError, match="probability: expected a 2-D"):
        boundary_hierarchy(np.zeros((3, 3, 3)))
    with pytest.raises(InputError, match="distances: expected one per adjacent pair"):
        ucm2_map(np.array([[0, 1]]), np.zeros(3))
    with pytest.raises(InputError, match="exactly one of"):
        boundary_hierarchy(_blobs()).cut()


# --- soft boundary maps as the boundary evidence of the fusion --------------------------------------------------

from segensemble.io import read_boundary_map  # noqa: E402
from segensemble.pipeline.runner import run_recipe  # noqa: E402
from segensemble.pipeline.recipes import load_recipe  # noqa: E402


def _scene():
    """Two colour halves; members that split it differently (a vertical and a horizontal cut, and both)."""
    rng = np.random.default_rng(0)
    img = np.zeros((40, 60, 3)); img[:, 30:] = [0.8, 0.3, 0.2]
    img = np.clip(img + rng.normal(0, 0.02, img.shape), 0, 1)
    v = np.zeros((40, 60), int); v[:, 30:] = 1
    h = np.zeros((40, 60), int); h[20:] = 1
    return img, [v, h, v + 2 * h]


def _recipe(method="merge"):
    """The default recipe for members of our own (its member-fitted weights dropped), with another method."""
    return load_recipe("default").without_member_params().with_overrides(method=method)


@pytest.mark.parametrize("method", ["merge", "vote"])
def test_no_boundary_map_is_the_colour_gradient(method):
    from segensemble.features import boundary_strength

    img, members = _scene()
    recipe = _recipe(method)
    plain = run_recipe(img, recipe, members=members, boundary=None).labels
    explicit = run_recipe(img, recipe, members=members, boundary=boundary_strength(img)).labels
    assert np.array_equal(plain, explicit)
    pinned = load_recipe("default@4").without_member_params().with_overrides(method=method)
    assert np.array_equal(run_recipe(img, pinned, members=members).labels,  # v4 has no boundary of its own
                          run_recipe(img, pinned, members=members, boundary=None).labels)


def test_the_recipes_boundary_is_the_default_evidence():
    from dataclasses import replace

    img, members = _scene()
    recipe = _recipe()
    assert recipe.boundary == "learned:boundary-v3"
    by_recipe = run_recipe(img, recipe, members=members).labels
    assert np.array_equal(by_recipe, run_recipe(img, recipe, members=members, boundary="learned:boundary-v3").labels)
    assert np.array_equal(run_recipe(img, replace(recipe, boundary=None), members=members).labels,
                          run_recipe(img, recipe, members=members, boundary=None).labels)
    # without an image there is no detector to run: the recipe's boundary gives way, no error
    assert run_recipe(None, recipe, members=members).labels.shape == img.shape[:2]


def test_a_boundary_map_decides_between_the_members():
    """Members disagree (vertical vs horizontal cut); the boundary map says where the boundary is."""
    img = np.full((40, 60, 3), 0.5)
    v = np.zeros((40, 60), int); v[:, 30:] = 1
    h = np.zeros((40, 60), int); h[20:] = 1
    from dataclasses import replace

    recipe = replace(_recipe().with_overrides(n_segments=2, params={"min_size": 0}),
                     postprocess={"connected": True, "min_size": 0})
    vertical = np.zeros((40, 60)); vertical[:, 29:31] = 1.0
    horizontal = np.zeros((40, 60)); horizontal[19:21] = 1.0
    members = [v, h]
    by_v = run_recipe(img, recipe, members=members, boundary=vertical, image_aware=False).labels
    by_h = run_recipe(img, recipe, members=members, boundary=horizontal, image_aware=False).labels
    assert _same_partition(by_v, v) and _same_partition(by_h, h)


def test_learned_boundary_is_the_detectors_probability():
    img, members = _scene()
    learned = run_recipe(img, _recipe(), members=members, boundary="learned").labels
    given = run_recipe(img, _recipe(), members=members, boundary=detect_boundaries(img, nms=False)).labels
    assert np.array_equal(learned, given)


@pytest.mark.parametrize("bad, match", [
    (np.zeros((10, 10)), r"boundary: expected shape \(40, 60\)"),
    (np.full((40, 60), 2.0), r"boundary: expected values in \[0, 1\]"),
    ("sobel", "boundary: expected a soft boundary map, 'learned', 'learned:NAME'"),
    (np.zeros((40, 60, 3)), r"boundary: expected a 2-D numeric array \(an \(H, W\) soft boundary map\)"),
])
def test_bad_boundary_maps_are_refused_naming_the_parameter(bad, match):
    img, members = _scene()
    with pytest.raises(InputError, match=match):
        run_recipe(img, _recipe(), members=members, boundary=bad)


def test_learned_boundary_needs_the_image():
    _, members = _scene()
    with pytest.raises(InputError, match="boundary: 'learned' runs the boundary detector"):
        run_recipe(None, _recipe(), members=members, boundary="learned")


def test_read_boundary_map_reads_8_bit_16_bit_and_float_maps(tmp_path):
    import cv2

    m = np.array([[0, 128], [255, 64]], np.uint8)
    cv2.imwrite(str(tmp_path / "e8.png"), m)
    cv2.imwrite(str(tmp_path / "e16.png"), m.astype(np.uint16) * 257)
    np.save(tmp_path / "e.npy", m / 255.0)
    for name in ("e8.png", "e16.png", "e.npy"):
        assert np.allclose(read_boundary_map(tmp_path / name), m / 255.0)
    np.save(tmp_path / "bad.npy", np.full((2, 2), 3.5))
    with pytest.raises(FileFormatError, match=r"in \[0, 1\]"):
        read_boundary_map(tmp_path / "bad.npy")
    with pytest.raises(FileFormatError, match="missing.png"):
        read_boundary_map(tmp_path / "missing.png")


def test_a_recipes_ucm_member_and_learned_boundary_share_one_detector_run(monkeypatch):
    import segensemble.edges.detector as detector

    calls = []
    real = detector.boundary_features
    monkeypatch.setattr(detector, "boundary_features", lambda image, **kw: calls.append(1) or real(image, **kw))
    img = np.random.default_rng(3).random((36, 50, 3))
    first = detect_boundaries(img, nms=False)
    first[:] = -1  # the caller's copy: changing it leaves the remembered map alone
    assert np.array_equal(detect_boundaries(img, nms=False), detect_boundaries(img.copy(), nms=False))
    assert len(calls) == 1 and detect_boundaries(img, nms=False).min() >= 0
    detect_boundaries(img[::-1].copy(), nms=False)  # another image: computed
    assert len(calls) == 2


def test_feature_planes_are_the_stacked_features():
    """The detector reads the planes at its stride; they are the columns of the stacked features, unchanged."""
    from segensemble.edges.features import boundary_features, context_features

    img = np.random.default_rng(4).random((30, 41, 3))
    planes = boundary_features(img, stack=False)
    assert len(planes) == 146 and all(p.dtype == np.float32 and p.shape == (30, 41) for p in planes)
    assert np.array_equal(np.stack(planes, axis=-1), boundary_features(img))
    p = planes[0] / planes[0].max()
    assert np.array_equal(np.stack(context_features(p, stack=False), axis=-1), context_features(p))


def test_features_do_not_depend_on_where_arrays_are_allocated():
    """OpenCV's vectorised magnitude rounds unaligned elements differently; the features must not notice."""
    rng = np.random.default_rng(6)
    img = rng.random((57, 83, 3))
    held, runs = [], []
    for _ in range(6):
        held.append(np.empty(int(rng.integers(1, 100_000)), np.uint8))  # move the allocator's next addresses
        runs.append(boundary_features(img))
    assert all(np.array_equal(runs[0], r) for r in runs[1:])


def test_the_half_size_feature_set_gives_the_same_columns_and_peaks_at_a_step():
    img = np.zeros((40, 60, 3)); img[:, 30:] = 1
    v1 = boundary_features(img)
    v2 = boundary_features(img, feature_set="oriented-gradients-v2")
    names = boundary_feature_names()
    assert v2.shape == v1.shape and v2.dtype == np.float32 and np.isfinite(v2).all()
    np.testing.assert_array_equal(v2[..., names.index("L r3 max")], v1[..., names.index("L r3 max")])  # fine: same
    coarse = v2[20, :, names.index("L r12 max")]
    assert abs(int(np.argmax(coarse)) - 29.5) <= 2 and not np.array_equal(coarse, v1[20, :, names.index("L r12 max")])
    with pytest.raises(InputError, match="feature_set: expected one of"):
        boundary_features(img, feature_set="v3")


def test_the_fourier_feature_set_is_v1_to_rounding_and_boundary_v3_gives_v1s_maps():
    """v3 computes v1's columns through the DFT, the reflected border included (images smaller than the largest
    radius too); in flat regions both leave near-zero responses whose local-maximum ratio is rounding noise, hence
    the absolute tolerance. boundary-v3 is boundary-v1's trees on them."""
    rng = np.random.default_rng(7)
    for shape in ((1, 1), (2, 3), (16, 16), (45, 20), (61, 83)):
        img = rng.random(shape + (3,))
        v1, v3 = boundary_features(img), boundary_features(img, feature_set="oriented-gradients-v3")
        assert v3.dtype == np.float32 and v3.shape == v1.shape
        np.testing.assert_allclose(v3, v1, rtol=1e-5, atol=1e-4)
    names = boundary_feature_names()
    step = np.zeros((40, 60, 3)); step[:, 30:] = 1
    v1, v3 = boundary_features(step), boundary_features(step, feature_set="oriented-gradients-v3")
    for name in ("L r6 max", "L r12 mean", "b r20 max", "energy r20 local max ratio"):
        np.testing.assert_allclose(v3[..., names.index(name)], v1[..., names.index(name)], rtol=1e-6, atol=1e-6)
    v1_model, v3_model = load_boundary_model("boundary-v1"), load_boundary_model("boundary-v3")
    assert v3_model.features == "oriented-gradients-v3" and v3_model.strides == v1_model.strides
    assert [b.model_to_string() for b in v3_model.stages] == [b.model_to_string() for b in v1_model.stages]
    yy, xx = np.mgrid[0:64, 0:96]
    scene = np.stack([(xx > 40) * 0.8, ((xx - 60) ** 2 + (yy - 30) ** 2 < 300) * 0.7, yy / 64], axis=-1)
    scene = scene + rng.normal(0, 0.03, scene.shape)
    np.testing.assert_allclose(detect_boundaries(scene, model=v3_model, nms=False),
                               detect_boundaries(scene, model=v1_model, nms=False), atol=1e-3)


def test_boundary_v4_is_v1s_settings_refitted_on_train_and_val():
    """The shipped refit: boundary-v1's two stages, strides and tree settings, trained on train + val, reading the
    Fourier feature set; its trees are its own."""
    v1, v4 = load_boundary_model("boundary-v1"), load_boundary_model("boundary-v4")
    assert (v4.features, v4.strides, v4.candidates) == ("oriented-gradients-v3", v1.strides, None)
    assert v4.info["splits"] == ["train", "val"] and v4.info["train_images"] == 300
    assert (v4.info["rounds"], v4.info["leaves"], v4.info["rows_per_image"]) == (300, 63, [2500, 3500])
    assert [s.num_trees() for s in v4.stages] == [s.num_trees() for s in v1.stages] == [300, 300]
    assert v4.stages[0].model_to_string() != v1.stages[0].model_to_string()


def test_a_later_stage_predicts_only_the_candidates():
    h, w = 12, 16
    x = np.broadcast_to(np.arange(w, dtype=np.float32), (h, w))[..., None] + 100
    previous = np.zeros((h, w), np.float32)
    previous[:, 8:] = 0.5
    p = predict_probability(_ColumnBooster(), x, 1, previous=previous, candidates=0.2)
    np.testing.assert_array_equal(p[:, :8], 0.0)  # below the threshold: the previous stage's probability
    np.testing.assert_array_equal(p[:, 8:], x[:, 8:, 0])  # candidates: predicted
    everywhere = predict_probability(_ColumnBooster(), x, 2, previous=previous, candidates=0.0)
    np.testing.assert_array_equal(everywhere, predict_probability(_ColumnBooster(), x, 2))


def test_model_files_keep_their_feature_set_and_candidates(tmp_path):
    model = load_boundary_model()
    assert model.features == "oriented-gradients-v1" and model.candidates is None
    fast = BoundaryModel(model.stages, model.strides, {}, "oriented-gradients-v2", 0.05)
    again = load_boundary_model(fast.to_file(tmp_path / "fast.json.gz"))
    assert (again.features, again.candidates, again.strides) == ("oriented-gradients-v2", 0.05, model.strides)
    img = np.random.default_rng(1).random((24, 32, 3))
    assert not np.array_equal(detect_boundaries(img, model=again), detect_boundaries(img))
    doc = json.loads(gzip.decompress((tmp_path / "fast.json.gz").read_bytes()))
    doc["candidates"] = 1.5
    (tmp_path / "bad.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    with pytest.raises(FileFormatError, match="candidates: expected a probability"):
        load_boundary_model(tmp_path / "bad.json.gz")


def test_shipped_models_load_by_name_and_recipes_may_name_one():
    from dataclasses import replace

    from segensemble.edges import boundary_models
    from segensemble.pipeline.recipes import load_recipe
    from segensemble.pipeline.runner import run_recipe

    assert "boundary-v1" in boundary_models() and load_boundary_model("boundary-v1") is load_boundary_model()
    img = np.zeros((40, 60, 3)); img[:, 30:] = [0.9, 0.2, 0.1]
    named = replace(load_recipe("default@6"), boundary="learned:boundary-v1").validate()
    np.testing.assert_array_equal(run_recipe(img, named).labels, run_recipe(img, "default@6").labels)
    with pytest.raises(InputError, match="boundary: expected none or one of learned, learned:boundary-v1"):
        replace(named, boundary="learned:nope").validate()
    with pytest.raises(InputError, match="'learned:NAME'"):
        run_recipe(img, "default@6", boundary="learned:nope")


def test_the_c_interface_predicts_what_the_lightgbm_package_predicts():
    """:class:`TextBooster` (LightGBM's C interface, no ``lightgbm`` import) against ``lightgbm.Booster`` on every
    stage of every shipped model: the same probabilities bit for bit, whatever the row type and layout."""
    import gzip
    import json
    import pickle

    import lightgbm

    from segensemble.edges.booster import TextBooster
    from segensemble.edges.detector import DEFAULT_MODEL

    rng = np.random.default_rng(0)
    seen = set()  # boundary-v3 carries boundary-v1's stages: each text once
    for path in sorted(DEFAULT_MODEL.parent.glob("*.json.gz")):
        for text in json.loads(gzip.open(path).read())["stages"]:
            if text in seen:
                continue
            seen.add(text)
            ours, theirs = TextBooster(text), lightgbm.Booster(model_str=text)
            assert ours.num_feature() == theirs.num_feature() and ours.model_to_string() == text
            for rows in (rng.random((700, ours.num_feature())).astype(np.float32) * 4,
                         np.asfortranarray(rng.normal(size=(300, ours.num_feature()))),
                         rng.integers(0, 5, size=(50, ours.num_feature()))):
                a, b = ours.predict(rows, num_threads=1), theirs.predict(rows, num_threads=1)
                assert a.dtype == b.dtype and np.array_equal(a, b), path.name
            again = pickle.loads(pickle.dumps(ours))  # worker processes receive models pickled
            assert np.array_equal(again.predict(rows), ours.predict(rows))


def test_a_model_text_lightgbm_cannot_read_is_a_clear_error():
    from segensemble.edges.booster import ModelTextError, TextBooster

    with pytest.raises(ModelTextError, match="number of classes"):
        TextBooster("tree\nversion=v4\n")


def test_features_in_threads_are_the_features_on_one():
    from segensemble.edges.features import FEATURE_SETS

    img = np.random.default_rng(5).random((45, 70, 3))
    for feature_set in FEATURE_SETS:
        one = boundary_features(img, feature_set=feature_set)
        assert np.array_equal(boundary_features(img, feature_set=feature_set, n_jobs=2), one)
        assert np.array_equal(boundary_features(img, feature_set=feature_set, n_jobs=-1), one)
    with pytest.raises(InputError, match="n_jobs"):
        boundary_features(img, n_jobs=0)
