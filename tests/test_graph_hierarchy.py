"""The one hierarchy type: cuts against a union-find reference, persistence, and every tree builder's use of it."""

import numpy as np
import pytest

from segensemble.errors import InputError
from segensemble.graph.hierarchy import Hierarchy


def _random_tree(n, seed):
    """Merges of representatives (the smaller survives), heights non-decreasing."""
    rng = np.random.default_rng(seed)
    reps, merges = list(range(n)), []
    while len(reps) > 1:
        a, b = sorted(rng.choice(len(reps), 2, replace=False))
        merges.append((reps[a], reps[b]))
        del reps[b]
    return np.array(merges), np.sort(rng.random(n - 1))


def _union_find_cut(n, merges, steps):
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in merges[:steps]:
        ra, rb = find(a), find(b)
        parent[max(ra, rb)] = min(ra, rb)
    roots = [find(i) for i in range(n)]
    return np.unique(roots, return_inverse=True)[1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cut_by_count_and_by_height_equal_the_union_find_reference(seed):
    merges, heights = _random_tree(30, seed)
    h = Hierarchy(30, merges, heights)
    for k in (1, 2, 7, 30):
        np.testing.assert_array_equal(h.cut(n_regions=k), _union_find_cut(30, merges, 30 - k))
    t = heights[11]
    np.testing.assert_array_equal(h.cut(threshold=t), _union_find_cut(30, merges, 12))


def test_persistence_is_the_height_at_which_two_leaves_first_join():
    merges, heights = _random_tree(12, 3)
    h = Hierarchy(12, merges, heights)
    pairs = np.array([(i, j) for i in range(12) for j in range(i + 1, 12)])
    got = h.persistence(pairs)
    for (i, j), d in zip(pairs, got):
        steps = next(s for s in range(1, 12) if (lambda c: c[i] == c[j])(_union_find_cut(12, merges, s)))
        assert d == heights[steps - 1]


def test_bad_trees_and_cuts_are_refused():
    with pytest.raises(InputError, match="merges, heights"):
        Hierarchy(2, np.array([[0, 1]]), np.array([0.1, 0.2]))
    with pytest.raises(InputError, match="exactly one"):
        Hierarchy(2, np.array([[0, 1]]), np.array([0.1])).cut(threshold=0.5, n_regions=1)


def test_every_tree_builder_returns_or_uses_the_one_type():
    from segensemble.consensus import EAC
    from segensemble.edges.ucm import boundary_hierarchy

    p = np.zeros((6, 9))
    p[:, 3], p[:, 6] = 0.9, 0.3
    assert isinstance(boundary_hierarchy(p).tree, Hierarchy)
    labels = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [0, 1, 1, 1]]).T
    assert EAC(n_clusters=2).fit(labels).labels_.tolist() == [0, 0, 1, 1]
