"""The compiled tree walker (segensemble.edges.forest) against LightGBM: the same predictions, bit for bit."""

from __future__ import annotations

import gzip
import json
import pickle

import numpy as np
import pytest

from segensemble.edges.booster import TextBooster, load_booster
from segensemble.edges.detector import DEFAULT_MODEL
from segensemble.edges.forest import CompiledForest, UnsupportedModel

#: Two trees by hand. Tree 0: x0 <= 0.5 ? (x1 <= 2 ? 1.0 : -1.0) : 0.25. Tree 1: one leaf, 0.5.
HAND = """tree
version=v4
num_class=1
num_tree_per_iteration=1
label_index=0
max_feature_idx=1
objective=regression
feature_names=a b
tree_sizes=1 1

Tree=0
num_leaves=3
num_cat=0
split_feature=0 1
split_gain=1 1
threshold=0.5 2
decision_type=2 2
left_child=1 -1
right_child=-3 -2
leaf_value=1 -1 0.25
leaf_weight=1 1 1
leaf_count=1 1 1
internal_value=0 0
internal_weight=0 0
internal_count=2 1
is_linear=0
shrinkage=1


Tree=1
num_leaves=1
num_cat=0
split_feature=
split_gain=
threshold=
decision_type=
left_child=
right_child=
leaf_value=0.5
leaf_weight=
leaf_count=
internal_value=
internal_weight=
internal_count=
is_linear=0
shrinkage=1


end of trees
"""


def _shipped_stages():
    for path in sorted(DEFAULT_MODEL.parent.glob("*.json.gz")):
        for k, text in enumerate(json.loads(gzip.open(path).read())["stages"]):
            yield f"{path.name} stage {k + 1}", text


def _hostile_rows(forest, rng, n=600):
    """Rows with zeros, values below LightGBM's zero threshold, NaN, infinities and values on split thresholds."""
    x = rng.normal(scale=2.0, size=(n, forest.num_feature()))
    x[rng.random(x.shape) < 0.05] = 0.0
    x[rng.random(x.shape) < 0.03] = 1e-36
    x[rng.random(x.shape) < 0.03] = -1e-36
    x[rng.random(x.shape) < 0.03] = np.nan
    x[rng.random(x.shape) < 0.01] = np.inf
    x[rng.random(x.shape) < 0.01] = -np.inf
    _, feature, threshold = forest._arrays[:3]
    if len(feature):
        k = rng.integers(0, len(feature), n)
        x[np.arange(n), feature[k]] = threshold[k]  # exactly on a split: goes left
    return x


def test_a_hand_written_model():
    forest = CompiledForest(HAND)
    rows = np.array([[0.0, 2.0], [0.5, 2.5], [0.75, -3.0], [np.nan, 1.0], [1e-36, 9.0]])
    # x0 <= 0.5 and x1 <= 2 -> 1; x0 <= 0.5, x1 > 2 -> -1; x0 > 0.5 -> 0.25; NaN reads as 0 (missing type none)
    assert forest.predict(rows).tolist() == [1.5, -0.5, 0.75, 1.5, -0.5]
    assert forest.num_feature() == 2 and forest.num_trees() == 2 and forest.model_to_string() == HAND


@pytest.mark.parametrize("name,text", list(_shipped_stages()), ids=[n for n, _ in _shipped_stages()])
def test_the_shipped_models_predict_what_lightgbm_predicts(name, text):
    forest, reference = CompiledForest(text), TextBooster(text)
    rng = np.random.default_rng(len(text))
    x = _hostile_rows(forest, rng)
    plain = np.where(np.isnan(x) | (np.abs(x) <= 1e-35), -0.0, x)  # no value read as 0.0 but zeros (walked as is)
    for rows in (x, x.astype(np.float32), np.asfortranarray(x), rng.integers(0, 5, size=(50, forest.num_feature())),
                 plain, np.asfortranarray(plain.astype(np.float32))):
        a, b = forest.predict(rows), reference.predict(rows, num_threads=1)
        assert a.dtype == b.dtype == np.float64 and np.array_equal(a, b), name
    assert np.array_equal(pickle.loads(pickle.dumps(forest)).predict(x), reference.predict(x))
    assert isinstance(load_booster(text), CompiledForest)


@pytest.mark.parametrize("params", [dict(objective="binary"), dict(objective="binary", sigmoid=0.7),
                                    dict(objective="cross_entropy", zero_as_missing=True),
                                    dict(objective="regression")], ids=["binary", "sigmoid0.7", "zero", "regression"])
def test_missing_values_and_objectives_as_lightgbm(params):
    """Models trained with NaN (missing type NaN, either default side) and with zeros as missing (type Zero)."""
    import lightgbm

    rng = np.random.default_rng(7)
    x = rng.normal(size=(3000, 6))
    y = ((x[:, 0] + np.where(np.isnan(x[:, 1]), 1.0, x[:, 1])) > 0.3).astype(float)
    x[rng.random(x.shape) < 0.15] = np.nan
    x[rng.random(x.shape) < 0.15] = 0.0
    booster = lightgbm.train(dict(params, num_leaves=15, min_data_in_leaf=20, learning_rate=0.3, seed=0,
                                  num_threads=1, deterministic=True, verbose=-1), lightgbm.Dataset(x, y), 20)
    text = booster.model_to_string()
    forest = CompiledForest(text)
    kinds = forest._arrays[3]
    assert kinds.any(), "the model should have splits with a missing type"
    rows = _hostile_rows(forest, np.random.default_rng(8), 2000)
    assert np.array_equal(forest.predict(rows), booster.predict(rows, num_threads=1))


def test_models_it_does_not_walk_are_left_to_lightgbm():
    import lightgbm

    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(300, 3)), rng.integers(0, 3, 300)
    multi = lightgbm.train(dict(objective="multiclass", num_class=3, verbose=-1, num_threads=1),
                           lightgbm.Dataset(x, y), 3).model_to_string()
    with pytest.raises(UnsupportedModel, match="several classes"):
        CompiledForest(multi)
    assert isinstance(load_booster(multi), TextBooster)
    with pytest.raises(UnsupportedModel, match="objective 'lambdarank'"):
        CompiledForest(HAND.replace("objective=regression", "objective=lambdarank"))
    with pytest.raises(UnsupportedModel, match="categorical"):
        CompiledForest(HAND.replace("decision_type=2 2", "decision_type=3 2"))
    for broken, why in (("left_child=0 -1", "do not make trees"),  # a node its own child: a loop
                        ("right_child=-4 -2", "do not make trees"),  # a leaf the tree does not have
                        ("right_child=-1 -2", "do not make trees"),  # leaf 0 reached twice, leaf 2 never
                        ("threshold=0.5\n", "threshold: a tree whose array"),
                        ("leaf_value=1 -1 x", "expected 4 numbers")):  # both trees' leaves are read at once
        key = broken.split("=")[0] + "="
        line = next(x for x in HAND.splitlines() if x.startswith(key))
        with pytest.raises(UnsupportedModel, match=why):
            CompiledForest(HAND.replace(line + "\n", broken if broken.endswith("\n") else broken + "\n", 1))
    with pytest.raises(UnsupportedModel, match="max_feature_idx"):
        CompiledForest("tree\nversion=v4\n")
    with pytest.raises(ValueError, match="rows: expected a 2-D array of 2 columns"):
        CompiledForest(HAND).predict(np.zeros((3, 5)))


@pytest.mark.parametrize("name", ["boundary-v1", "boundary-v2"])
def test_the_detector_gives_lightgbms_map(name):
    """The whole detector (both stages, strides, candidates) with the compiled trees and with LightGBM's."""
    from dataclasses import replace

    from segensemble.edges.detector import _RECENT, detect_boundaries, load_boundary_model

    model = load_boundary_model(name)
    assert all(isinstance(s, CompiledForest) for s in model.stages)
    reference = replace(model, stages=tuple(TextBooster(s.model_to_string()) for s in model.stages))
    rng = np.random.default_rng(5)
    img = np.zeros((90, 120, 3))
    img[:, 50:] = [0.8, 0.3, 0.2]
    img[30:70, 20:90] += 0.4
    img = np.clip(img + rng.normal(scale=0.05, size=img.shape), 0, 1)
    maps = []
    for m in (model, reference):
        _RECENT.clear()
        maps.append(detect_boundaries(img, model=m, nms=False))
    assert np.array_equal(maps[0], maps[1])
