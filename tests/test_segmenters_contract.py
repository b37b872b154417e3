"""Contract tests applied to every registered segmenter."""

import numpy as np
import pytest

from segensemble import InputError, Segmentation, segmenters

NAMES = segmenters.available()


def _image(shape=(32, 48), seed=0):
    rng = np.random.default_rng(seed)
    img = np.zeros(shape + (3,))
    img[:, shape[1] // 2 :] = [0.9, 0.2, 0.1]
    img[shape[0] // 2 :, :] += [0.0, 0.5, 0.6]
    return np.clip(img + rng.normal(0, 0.02, img.shape), 0, 1)


@pytest.mark.parametrize("name", NAMES)
def test_output_contract(name):
    img = _image()
    copy = img.copy()
    seg = segmenters.get(name)(img, rng=0)
    assert isinstance(seg, Segmentation) and seg.name == name
    assert seg.labels.shape == img.shape[:2] and seg.labels.dtype == np.int32
    assert set(np.unique(seg.labels).tolist()) == set(range(seg.n_segments))
    assert np.array_equal(img, copy)
    assert np.array_equal(seg.labels, segmenters.get(name)(img, rng=0).labels)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "convert",
    [
        lambda im: im.mean(axis=2),
        lambda im: np.concatenate([im, np.ones(im.shape[:2] + (1,))], axis=2),
        lambda im: (im * 65535).astype(np.uint16),
        lambda im: (im * 255).astype(np.uint8),
    ],
    ids=["gray", "rgba", "uint16", "uint8"],
)
def test_input_kinds(name, convert):
    seg = segmenters.get(name)(convert(_image()), rng=0)
    assert seg.labels.shape == (32, 48)


@pytest.mark.parametrize("name", NAMES)
def test_tiny_image(name):
    seg = segmenters.get(name)(_image((8, 8)), rng=0)
    assert seg.labels.shape == (8, 8) and seg.labels.min() == 0


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_named(name):
    with pytest.raises(InputError, match="image"):
        segmenters.get(name)(np.zeros((0, 5, 3)))
    with pytest.raises(InputError, match="image"):
        segmenters.get(name)(np.zeros((5, 5, 2)))


def test_slic_and_felzenszwalb_find_flat_blocks(blocks_image):
    image, truth = blocks_image
    fh = segmenters.get("felzenszwalb")(image, scale=100, sigma=0, min_size=20)
    assert fh.n_segments == 4
    assert len(set(zip(fh.labels.ravel().tolist(), truth.ravel().tolist()))) == 4
    sl = segmenters.get("slic")(image, n_segments=4, compactness=1, sigma=0)
    assert sl.n_segments == 4
    assert len(set(zip(sl.labels.ravel().tolist(), truth.ravel().tolist()))) == 4


def test_felzenszwalb_n_segments_search(blocks_image):
    image, _ = blocks_image
    assert segmenters.get("felzenszwalb")(image, n_segments=4, sigma=0, min_size=5).n_segments == 4


def test_bad_parameter_values():
    with pytest.raises(InputError, match="n_segments"):
        segmenters.get("slic")(_image(), n_segments=0)
    with pytest.raises(InputError, match="scale"):
        segmenters.get("felzenszwalb")(_image(), scale=-1)


_FIRST_RUN = """
import json, sys
import numpy as np
from segensemble import segmenters
name = sys.argv[1]
segmenters.preload([name])
new = []
sys.addaudithook(lambda event, args: new.append(args[0]) if event == "import" and args[0] not in sys.modules else None)
segmenters.get(name)(np.random.default_rng(0).random((48, 64, 3)), rng=0)
print(json.dumps(sorted(set(new))))
"""


def test_preload_leaves_nothing_for_the_first_run_to_import(tmp_path):
    """After ``preload``, a segmenter's first run in a fresh interpreter imports no module: members run in threads,
    and two threads importing modules that import each other (scikit-image's SLIC and its morphology both reach
    ``scipy.spatial``) fail now and then with 'cannot import name ... from partially initialized module'."""
    import json
    import subprocess
    import sys

    # in a scratch folder: a checkout's own segensemble/ folder (without the packages an install maps into it)
    # must not shadow the installed package
    runs = {name: subprocess.Popen([sys.executable, "-c", _FIRST_RUN, name], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, cwd=tmp_path) for name in NAMES}
    imported = {}
    for name, proc in runs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        imported[name] = json.loads(out.strip().splitlines()[-1])
    assert {name: modules for name, modules in imported.items() if modules} == {}
