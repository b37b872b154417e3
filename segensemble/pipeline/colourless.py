"""Colourless pictures: a black-and-white photo, a scan or a gray PNG gets its own cut of the learned hierarchy.

The merge criterion of the image-aware frame reads the members' boundary
vote, the detector's probability and the colour difference of two regions,
all learned on colour photos. A picture without colour has no colour
differences, fewer member boundaries and weaker detector responses, so its
hierarchy reaches the colour photos' cut early: ``default@10`` gives 30
BSDS500 val images, converted to gray, 6.3 regions where it gives their
colour originals 18.6 (boundary F 0.511 against 0.690). The hierarchy is
sound — cut lower, the gray pictures get their regions back — so a recipe
can name a cut for them: ``colourless_threshold`` in its ``spatial`` table
replaces ``threshold`` for a picture that is *colourless*: the
:data:`SPREAD_PERCENTILE` th percentile, over pixels, of each pixel's
channel spread ``max(R, G, B) - min(R, G, B)`` is at most
:data:`COLOURLESS_SPREAD` (a gray picture stored as a colour JPEG keeps a
spread of a level or two; the least colourful of the 500 BSDS500 images has
0.098). A ``threshold`` given as a method parameter (``-p threshold=...``)
still wins, on every picture, and a number of regions given (``-k``) is
cut at that number.
"""

from __future__ import annotations

import numpy as np

from segensemble.validation import check_n_segments

__all__ = ["COLOURLESS_SPREAD", "SPREAD_PERCENTILE", "is_colourless", "cuts_colourless", "colourless_spatial"]

#: The largest channel spread (of the percentile below) of a picture taken as colourless.
COLOURLESS_SPREAD = 0.03
#: The percentile of the per-pixel channel spread compared with :data:`COLOURLESS_SPREAD` (a few coloured
#: pixels — a caption, a stamp — do not make a gray picture colourful).
SPREAD_PERCENTILE = 99.0


def is_colourless(image: np.ndarray) -> bool:
    """True when ``image`` (RGB in [0, 1]) has no colour to speak of (see the module).

    Examples
    --------
    >>> gray = np.linspace(0, 1, 48).reshape(4, 4, 3)[..., :1].repeat(3, axis=-1)
    >>> is_colourless(gray), is_colourless(gray * [1.0, 0.8, 0.6])
    (True, False)
    """
    image = np.asarray(image)
    spread = image.max(axis=-1) - image.min(axis=-1)
    return bool(np.percentile(spread, SPREAD_PERCENTILE) <= COLOURLESS_SPREAD)


def cuts_colourless(recipe, image: np.ndarray) -> bool:
    """Whether ``recipe`` cuts ``image`` at its ``colourless_threshold``: it names one, its number of regions is
    ``'auto'``, no ``threshold`` parameter of ``merge`` overrides the cut, and the picture is colourless.

    Examples
    --------
    >>> from segensemble.pipeline.recipes import load_recipe
    >>> gray = np.full((4, 4, 3), 0.5)
    >>> r = load_recipe("default@11")
    >>> cuts_colourless(r, gray), cuts_colourless(r.with_overrides(n_segments=5), gray)
    (True, False)
    >>> cuts_colourless(r.with_overrides(params={"threshold": 0.3}), gray)
    False
    >>> cuts_colourless(load_recipe("default@10"), gray)
    False
    """
    if recipe.spatial.get("colourless_threshold") is None or check_n_segments(recipe.n_segments) != "auto":
        return False
    if recipe.method == "merge" and "threshold" in recipe.params:
        return False
    return is_colourless(image)


def colourless_spatial(spatial: dict) -> dict:
    """A recipe's ``spatial`` table as it applies to a colourless picture: its ``colourless_threshold``, when it
    names one, as the ``threshold``.

    Examples
    --------
    >>> colourless_spatial({"threshold": 0.45, "colourless_threshold": 0.25})["threshold"]
    0.25
    >>> colourless_spatial({"threshold": 0.45})["threshold"]
    0.45
    """
    cut = spatial.get("colourless_threshold")
    return dict(spatial) if cut is None else {**spatial, "threshold": cut}
