"""Dataset readers and synthetic generators."""

import numpy as np
import pytest

from segensemble import InputError
from segensemble.datasets import BSDS500, make_synthetic_dataset, read_bsds300_seg, rpm_ensemble, synthetic_image
from segensemble.io import read_ground_truth


def test_synthetic_dataset_is_bsds_layout_and_deterministic(tmp_path):
    a = make_synthetic_dataset(tmp_path / "a", n_images=2, shape=(40, 50), seed=3)
    b = make_synthetic_dataset(tmp_path / "b", n_images=2, shape=(40, 50), seed=3)
    ds = BSDS500(a)
    assert ds.splits == ["test"] and ds.ids("test") == ["syn0001", "syn0002"]
    for i in ds.ids("test"):
        assert np.array_equal(ds.image("test", i), BSDS500(b).image("test", i))
        gt = ds.ground_truth("test", i)
        assert 3 <= len(gt) <= 5
        assert all(s.min() == 1 and s.shape == (40, 50) for s in gt.segmentations)


def test_synthetic_annotators_differ_slightly():
    from segensemble.evaluation import probabilistic_rand_index

    _, truth, ann = synthetic_image((80, 120), n_annotators=4, rng=1)
    assert probabilistic_rand_index(truth, ann) > 0.9
    assert any(not np.array_equal(ann[0], a) for a in ann[1:])


def test_bsds500_reader_on_the_real_dataset(bsds_root):
    ds = BSDS500(bsds_root)
    assert ds.splits == ["test", "train", "val"]
    assert len(ds.ids("test")) == 200 and len(ds.ids("val")) == 100 and len(ds.ids("train")) == 200
    i = ds.ids("val")[0]
    img, gt = ds.image("val", i), ds.ground_truth("val", i)
    assert img.shape[:2] == gt.segmentations[0].shape and len(gt) >= 4


def test_root_resolution_and_errors(tmp_path, monkeypatch, synthetic_root):
    assert BSDS500(synthetic_root / "data").data == BSDS500(synthetic_root).data
    monkeypatch.setenv("SEGENSEMBLE_BSDS_ROOT", str(synthetic_root))
    assert BSDS500().data == synthetic_root / "data"
    with pytest.raises(InputError, match="not a BSDS500-layout"):
        BSDS500(tmp_path)
    with pytest.raises(InputError, match="split"):
        BSDS500(synthetic_root).ids("nope")


def test_bsds300_seg(tmp_path):
    p = tmp_path / "a.seg"
    p.write_text("format ascii cr\nwidth 4\nheight 2\nsegments 2\ndata\n0 0 0 3\n1 1 0 1\n0 1 2 3\n")
    assert read_bsds300_seg(p).tolist() == [[0, 0, 0, 0], [1, 1, 0, 0]]
    p.write_text("width 4\nheight 2\ndata\n0 0 0 3\n")
    with pytest.raises(InputError, match="cover every pixel"):
        read_bsds300_seg(p)


def test_rpm_noise_level_and_permutation():
    L, z = rpm_ensemble(4000, 3, 4, 0.3, rng=0)
    from scipy.optimize import linear_sum_assignment

    for j in range(3):
        C = np.zeros((4, 4))
        np.add.at(C, (z, L[:, j]), 1)
        r, c = linear_sum_assignment(-C)
        mis = 1 - C[r, c].sum() / 4000
        assert mis == pytest.approx(0.3 * 3 / 4, abs=0.03)  # relabelled to the uniform draw -> p (K-1)/K
    L0, z0 = rpm_ensemble(50, 2, 5, 0.0, rng=1)
    assert len(set(zip(L0[:, 0].tolist(), z0.tolist()))) == 5


def test_rpm_unbalanced():
    _, z = rpm_ensemble(100, 2, 6, 0.1, p1=0.75, rng=0)
    assert np.bincount(z)[0] == 75 and np.bincount(z)[1:].tolist() == [5] * 5


def test_ground_truth_written_by_generator_has_boundaries(synthetic_root):
    gt = read_ground_truth(next((synthetic_root / "data" / "groundTruth" / "test").glob("*.mat")))
    assert gt.boundaries[0].any()


def test_rpm_random_truth_draws_sizes_and_keeps_the_share():
    from segensemble.datasets import rpm_ensemble

    _, z = rpm_ensemble(20000, 1, 4, 0.0, truth="random", rng=0)
    counts = np.bincount(z, minlength=4) / len(z)
    assert np.allclose(counts, 0.25, atol=0.02) and len(set(counts)) > 1  # drawn, not exact
    _, z = rpm_ensemble(20000, 1, 5, 0.0, p1=0.8, truth="random", rng=1)
    assert abs(np.mean(z == 0) - 0.8) < 0.02
    with pytest.raises(InputError, match="truth"):
        rpm_ensemble(10, 2, 2, 0.1, truth="exact")
