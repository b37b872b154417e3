"""Image-aware fusion: every consensus method gives connected regions of a sensible size on an image, the plain
method stays the paper's on label arrays, and ``fuse`` without options is the default recipe."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import ndimage
from typer.testing import CliRunner

import segensemble
from segensemble import Ensemble, InputError, consensus
from segensemble.cli import app
from segensemble.pipeline import frame as spatial
from segensemble.graph.merger import RegionMerger
from segensemble.pipeline.frame import (check_spatial, connected_atoms, image_aware_fit, majority_ensemble,
                                           merge_regions)
from segensemble.io import read_labels
from segensemble.pipeline.postprocess import cut_to_regions, postprocess
from segensemble.pipeline.recipes import Recipe, load_recipe
from segensemble.pipeline.runner import run_recipe

MIN_SIZE = 40


def _scene(seed=0):
    """Four colour blocks with noise, 48 x 72."""
    rng = np.random.default_rng(seed)
    img = np.zeros((48, 72, 3))
    img[:, 36:, 0] = 0.9
    img[24:, :, 2] = 0.8
    img[10:20, 10:25, 1] = 0.7
    return np.clip(img + rng.normal(0, 0.04, img.shape), 0, 1)


def _recipe(method, n_segments="auto"):
    return Recipe("test", "1", ("slic:n_segments=30", "felzenszwalb:scale=50", "kmeans:n_segments=4"), method,
                  n_segments, spatial={"min_size": MIN_SIZE}, postprocess={"connected": True, "min_size": MIN_SIZE})


@pytest.fixture(scope="module")
def members():
    from segensemble.pipeline import run_segmenters

    return run_segmenters(_scene(), _recipe("vote").segmenters, rng=0)


@pytest.mark.parametrize("n_segments", ["auto", 4])
@pytest.mark.parametrize("method", consensus.available())
def test_every_method_gives_connected_regions_no_smaller_than_the_minimum(members, method, n_segments):
    result = run_recipe(_scene(), _recipe(method, n_segments), members=members, rng=0)
    labels = result.labels
    sizes = np.bincount(labels.ravel())
    assert sizes.min() >= MIN_SIZE
    for region in range(labels.max() + 1):
        _, pieces = ndimage.label(labels == region)  # 4-connectivity
        assert pieces == 1, f"{method}: region {region} is {pieces} pieces"
    assert 2 <= labels.max() + 1 <= 12  # a sensible size on four blocks (not one region, not fragments)
    if method != "merge":
        assert result.fusion is not None and result.fusion.n_segments == (4 if n_segments == 4 else
                                                                          result.fusion.n_segments)


def test_image_aware_k_is_honoured_and_auto_reads_the_image(members):
    ens = Ensemble.from_segmentations(members, image=_scene())
    for k in (2, 3, 5):
        fit = image_aware_fit(consensus.get("sdp")(), ens, n_segments=k, min_size=MIN_SIZE)
        assert fit.labels.max() + 1 == k and fit.n_segments == k
    auto = image_aware_fit(consensus.get("sdp")(), ens, min_size=MIN_SIZE)
    assert 3 <= auto.n_segments <= 6  # four blocks (the plain eigengap says 2 here)
    painted = auto.atoms.to_image(auto.labels)
    assert len(np.unique(painted[:24, :36])) == 1 or len(np.unique(painted[:24, :36])) == 2  # green patch may stay


def _stripes_with_specks():
    """Red | green | red stripes (60 x 90) and members whose atoms are not connected: one labels both red stripes
    alike (a colour cluster), and all three share three 2 x 2 specks of one label scattered over the stripes."""
    rng = np.random.default_rng(0)
    img = np.zeros((60, 90, 3))
    img[:, :30, 0] = img[:, 60:, 0] = img[:, 30:60, 1] = 1
    img = np.clip(img + rng.normal(0, 0.02, img.shape), 0, 1)
    stripes = np.repeat(np.arange(3), 30)[None].repeat(60, axis=0)
    colour = np.where(stripes == 2, 0, stripes)
    for lab in (stripes, colour):
        lab[10:12, 10:12] = lab[40:42, 75:77] = lab[30:32, 45:47] = 7
    return img, [stripes, colour, stripes]


@pytest.mark.parametrize("n_segments", [2, 3])
@pytest.mark.parametrize("method", consensus.available())
def test_k_means_k_painted_regions_when_atoms_are_scattered(method, n_segments):
    """-k K gives K connected regions even when a cluster of K atoms is several pieces of the image (a scattered
    speck atom joins distant regions in the hierarchy; connected relabelling would split them again)."""
    img, members = _stripes_with_specks()
    recipe = Recipe("t", "1", ("slic",), method, n_segments, spatial={"min_size": 0},
                    postprocess={"connected": True, "min_size": 0})
    labels = run_recipe(img, recipe, members=members, rng=0).labels
    assert labels.max() + 1 == n_segments
    for region in range(n_segments):
        assert ndimage.label(labels == region)[1] == 1


def test_merge_regions_joins_adjacent_regions_down_to_k_whatever_the_label_names():
    img, members = _stripes_with_specks()
    ens = Ensemble.from_segmentations(members, image=img)
    sixths = np.repeat(np.arange(6), 15)[None].repeat(60, axis=0)  # two sixths per stripe
    merged = merge_regions(sixths, ens, 3)
    assert np.array_equal(merged, np.repeat(np.arange(3), 30)[None].repeat(60, axis=0))
    renamed = merge_regions((5 - sixths) * 10, ens, 3)  # another naming of the same regions: the same partition
    pairs = np.unique(np.stack([renamed.ravel(), merged.ravel()]), axis=1)
    assert pairs.shape[1] == len(np.unique(renamed)) == 3
    assert np.array_equal(merge_regions(sixths, ens, 6), sixths)  # never more regions than it was given


def test_cut_to_regions_looks_finer_when_a_cut_paints_too_few_regions():
    atoms = np.array([[0, 0, 1, 2, 2, 3, 3]])  # atom 1 is one pixel, below the minimum size of two
    tree = {1: np.zeros(4, int), 2: np.array([0, 0, 1, 1]), 3: np.array([0, 1, 2, 2]), 4: np.arange(4)}

    def paint(lab):
        return postprocess(lab[atoms], np.zeros((1, 7, 3)), min_size=2)

    assert paint(tree[3]).max() + 1 == 2  # the one-pixel cluster is merged away

    def no_merge(lab, k):
        raise AssertionError("the finer cut paints three regions; nothing to merge")

    assert np.array_equal(cut_to_regions(3, tree.get, paint, 4, no_merge), paint(tree[4]))
    assert paint(tree[4]).max() + 1 == 3


def test_the_frame_is_deterministic_and_cached_frames_give_the_same_result(members):
    ens = Ensemble.from_segmentations(members, image=_scene())
    first = image_aware_fit(consensus.get("borda")(), ens, n_segments=3, min_size=MIN_SIZE)
    again = image_aware_fit(consensus.get("borda")(), ens, n_segments=3, min_size=MIN_SIZE)
    assert again.frame_cached and np.array_equal(first.labels, again.labels)
    other_cut = image_aware_fit(consensus.get("borda")(), ens, min_size=MIN_SIZE, threshold=0.4499)
    assert other_cut.frame_cached  # the cuts do not change the atoms' hierarchy
    spatial._FRAMES.clear()
    fresh = image_aware_fit(consensus.get("borda")(), Ensemble.from_segmentations(members, image=_scene()),
                            n_segments=3, min_size=MIN_SIZE)
    assert not fresh.frame_cached and np.array_equal(first.labels, fresh.labels)


@pytest.mark.parametrize("method", consensus.available())
def test_plain_label_arrays_are_fused_by_the_method_of_the_paper(members, method):
    """No image: segensemble.fuse is the estimator on the atoms, exactly as before the image-aware frame."""
    ens = Ensemble.from_segmentations(members)
    expected = ens.to_image(consensus.make(method, 3, random_state=0).fit(ens).labels_)
    assert np.array_equal(segensemble.fuse(members, method=method, n_segments=3, rng=0), expected)
    plain = run_recipe(_scene(), _recipe(method, 3), members=members, rng=0, image_aware=False,
                       postprocess=False)
    img_ens = Ensemble.from_segmentations(members, image=_scene())
    assert np.array_equal(plain.labels,
                          img_ens.to_image(consensus.make(method, 3, random_state=0).fit(img_ens).labels_))
    assert plain.fusion is None


def test_batched_keys_make_the_same_merges_as_one_at_a_time():
    rng = np.random.default_rng(3)
    n = 60
    pairs = np.array(sorted({(min(a, b), max(a, b)) for a, b in rng.integers(0, n, (200, 2)) if a != b}))
    length, border, sizes = rng.integers(1, 9, len(pairs)).astype(float), rng.random((len(pairs), 2)), \
        rng.integers(5, 50, n).astype(float)

    def one(m, u, v):
        return m.border_mean(u, v)[0] * 0.7 + 0.3 * m.border_mean(u, v)[1] + 1e-3 * np.log(m.size[u] + m.size[v])

    def many(m, u, vs):
        b = m.border_means(u, vs)
        return b[:, 0] * 0.7 + 0.3 * b[:, 1] + 1e-3 * np.log(m.size[u] + m.size[vs])

    a = RegionMerger(n, pairs, length, border, sizes=sizes).run(one, min_size=20)
    b = RegionMerger(n, pairs, length, border, sizes=sizes).run(many, min_size=20, batched=True)
    assert np.array_equal(a[0], b[0]) and np.allclose(a[1], b[1])


def test_connected_atoms_and_majority_labels():
    lab = np.array([[0, 0, 1, 1, 0, 0]] * 3)
    ens = Ensemble.from_segmentations([lab], image=np.zeros((3, 6, 3)))
    split = connected_atoms(ens, min_piece=1)
    assert split.n_objects == 3 and split.weights.tolist() == [6.0, 6.0, 6.0]
    assert connected_atoms(ens, min_piece=7).n_objects == 2  # pieces of 6 pixels stay with their atom
    red = majority_ensemble(Ensemble.from_labels([[0, 1], [1, 1], [1, 0]], weights=[1, 1, 5]), np.array([0, 0, 0]))
    assert red.labels.tolist() == [[0, 0]] and red.weights.tolist() == [7.0]


def test_bad_spatial_settings_are_refused_naming_the_key(members):
    with pytest.raises(InputError, match="spatial: partition_weight: expected a number in \\[0, inf\\), got -1"):
        check_spatial({"partition_weight": -1})
    with pytest.raises(InputError, match="recipe 'test': spatial: unknown key 'cut'"):
        replace(_recipe("sdp"), spatial={"cut": 1}).validate()
    with pytest.raises(InputError, match="member_weights: expected 3 non-negative weights"):
        image_aware_fit(consensus.get("vote")(), Ensemble.from_segmentations(members, image=_scene()),
                        member_weights=[1, 2])
    with pytest.raises(InputError, match="needs an ensemble built from segmentations with the image"):
        image_aware_fit(consensus.get("vote")(), Ensemble.from_segmentations(members))


def test_fuse_without_options_is_the_default_recipe_and_m_swaps_only_the_method(tmp_path):
    from segensemble.io import write_image

    image = tmp_path / "scene.png"
    write_image(image, _scene())
    runner = CliRunner()
    outs = {}
    for name, options in {"none": [], "default": ["--recipe", "default"], "m": ["-m", "vote"],
                          "default-m": ["--recipe", "default", "-m", "vote"]}.items():
        out = tmp_path / f"{name}.png"
        result = runner.invoke(app, ["fuse", str(image), *options, "-o", str(out)])
        assert result.exit_code == 0, result.output
        outs[name] = read_labels(out)
    assert np.array_equal(outs["none"], outs["default"])
    assert np.array_equal(outs["m"], outs["default-m"])
    swapped = load_recipe("default").with_overrides(method="vote")
    assert swapped.segmenters == load_recipe("default").segmenters and swapped.spatial == load_recipe("default").spatial
    plain = tmp_path / "plain.png"
    assert runner.invoke(app, ["fuse", str(image), "-m", "vote", "--plain", "-o", str(plain)]).exit_code == 0
