"""One vocabulary: the image layer speaks scikit-image (``n_segments``, ``rng``), the estimators scikit-learn
(``n_clusters``, ``random_state``); the old image-layer names still work for one release, with a warning."""

import inspect
import warnings

import numpy as np
import pytest

import segensemble
from segensemble import consensus, segmenters
from segensemble.batch.photos import fuse_files, iter_recipe
from segensemble.errors import InputError
from segensemble.pipeline import run_segmenters, segment
from segensemble.pipeline.recipes import Recipe
from segensemble.pipeline.runner import run_recipe, segment_image
from segensemble.validation import check_random_state, check_rng

IMAGE_LAYER = [segensemble.fuse, run_recipe, segment_image, fuse_files, run_segmenters, segment]


def _parameters(fn):
    return inspect.signature(inspect.unwrap(fn)).parameters


@pytest.mark.parametrize("fn", IMAGE_LAYER, ids=lambda f: f.__name__)
def test_the_image_layer_seeds_with_rng(fn):
    params = _parameters(fn)
    assert "rng" in params and "random_state" not in params and "n_clusters" not in params


@pytest.mark.parametrize("name", consensus.available())
def test_estimators_speak_scikit_learn(name):
    params = _parameters(consensus.get(name))
    assert "rng" not in params and "n_segments" not in params and "n_clusters" in params


@pytest.mark.parametrize("name", segmenters.available())
def test_segmenters_speak_scikit_image(name):
    params = _parameters(segmenters.get(name))
    assert "random_state" not in params and "n_clusters" not in params


def _members():
    a = np.zeros((12, 16), dtype=int)
    a[:, 8:] = 1
    b = a.copy()
    b[:6, :] += 2
    return [a, b, a]


def test_old_names_warn_and_give_the_same_result():
    recipe = Recipe("mine", "1", ("slic:n_segments=4",), "eac", 2)
    img = np.zeros((12, 16, 3))
    new = run_recipe(img, recipe, members=_members(), rng=3, member_rng=4).labels
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = run_recipe(img, recipe, members=_members(), random_state=3, segmenter_rng=4).labels
    assert sorted(str(w.message) for w in caught if w.category is DeprecationWarning) == [
        "run_recipe(random_state=...) is deprecated; use rng", "run_recipe(segmenter_rng=...) is deprecated; use member_rng"]
    np.testing.assert_array_equal(new, old)
    with pytest.warns(DeprecationWarning, match="fuse"):
        np.testing.assert_array_equal(segensemble.fuse(_members(), n_segments=2, random_state=0),
                                      segensemble.fuse(_members(), n_segments=2, rng=0))
    with pytest.warns(DeprecationWarning, match="check_rng"):
        assert check_random_state(5).integers(100) == check_rng(5).integers(100)


def test_both_names_at_once_are_refused():
    with pytest.raises(InputError, match="random_state: give rng only"):
        run_recipe(np.zeros((4, 4, 3)), members=_members(), rng=0, random_state=0)


def test_iter_recipe_passes_the_new_names_on():
    recipe = Recipe("mine", "1", ("felzenszwalb:scale=50",), "eac", 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ((_, result),) = iter_recipe([np.zeros((8, 8, 3))], recipe, rng=1, member_rng=2)
    assert result.labels.shape == (8, 8)
