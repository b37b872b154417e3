"""Lloyd with Hamerly's bounds gives plain Lloyd's labels and inertia, bit for bit."""

import numpy as np
import pytest
import scipy.sparse as sp

from segensemble.consensus import _kmeans as km


def _one_hot_members(n, m, k, gen):
    labels = gen.integers(0, k, size=(n, m))
    rows = np.repeat(np.arange(n), m)
    cols = (labels + k * np.arange(m)).ravel()
    return sp.csr_matrix((np.ones(n * m), (rows, cols)), shape=(n, m * k))


def _both(X, w, start, k, G=None, max_iter=100):
    pruned = km._Space(X, G)
    plain = km._Space(X, G)
    plain.pruned = False
    assert pruned.pruned
    return km._lloyd(pruned, w, start, k, max_iter), km._lloyd(plain, w, start, k, max_iter)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("metric", ["euclidean", "gram"])
def test_pruned_lloyd_equals_plain_lloyd(seed, metric):
    gen = np.random.default_rng(seed)
    X = _one_hot_members(4000, 6, 5, gen)
    # planted structure so that Lloyd runs several iterations and most objects settle early
    truth = gen.integers(0, 5, size=4000)
    X = X.tolil()
    for i in np.flatnonzero(gen.random(4000) < 0.7):
        X.rows[i] = [5 * j + truth[i] for j in range(6)]
    X = sp.csr_matrix(X)
    w = gen.integers(1, 20, size=4000).astype(np.float64)
    G = (X.T @ X.multiply(w[:, None]).tocsr()).toarray() if metric == "gram" else None
    start = gen.integers(0, 5, size=4000)
    (lab_a, in_a), (lab_b, in_b) = _both(X, w, start, 5, G)
    assert np.array_equal(lab_a, lab_b)
    assert in_a == in_b


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("metric", ["euclidean", "psd"])
def test_pruned_lloyd_equals_plain_lloyd_on_dense_rows(seed, metric):
    """Dense rows (spectral and HBGF embeddings) are pruned from the rows of the whole BLAS product, so their
    labels and inertia are plain Lloyd's bit for bit; more rows than one block of the squared distances."""
    gen = np.random.default_rng(seed)
    n, d, k = km._BLOCK + 3000, 6, 5
    truth = gen.integers(0, k, size=n)
    X = gen.standard_normal((k, d))[truth] * 3 + gen.standard_normal((n, d))
    w = gen.integers(1, 20, size=n).astype(np.float64) if seed % 2 else gen.random(n) + 0.1
    B = gen.standard_normal((d, d))
    G = B @ B.T if metric == "psd" else None
    for start, max_iter in ((gen.integers(0, k, size=n), 100), (gen.integers(0, k, size=n), 3),
                            (np.r_[np.arange(k + 1), np.zeros(n - k - 1, dtype=np.int64)], 100)):
        kk = int(start.max()) + 1  # the last start leaves clusters nearly empty: re-seeded in full
        (lab_a, in_a), (lab_b, in_b) = _both(X, w, start, kk, G, max_iter=max_iter)
        assert np.array_equal(lab_a, lab_b) and in_a == in_b


def test_distances_of_some_dense_rows_are_those_rows_of_all_distances_bit_for_bit():
    """What pruning relies on: a BLAS product of some rows alone rounds apart from the whole product (here in the
    last bit for subsets of a few to thousands of rows), so dense rows take the rows of the whole product."""
    gen = np.random.default_rng(0)
    X = gen.standard_normal((50000, 10)) * gen.random((50000, 1)) * 3
    space = km._Space(X)
    for _ in range(60):
        M = gen.standard_normal((int(gen.integers(2, 12)), 10))
        rows = np.sort(gen.choice(len(X), int(gen.choice([1, 3, 5, 17, 257, 4097, 20001])), replace=False))
        assert np.array_equal(space.distances_of(M, rows), space.distances(M)[rows])


def test_pruned_lloyd_equals_plain_lloyd_when_a_cluster_empties_and_when_iterations_run_out():
    gen = np.random.default_rng(7)
    X = _one_hot_members(500, 3, 4, gen)
    w = np.ones(500)
    start = np.zeros(500, dtype=np.int64)
    start[:3] = [1, 2, 3]  # three near-empty clusters
    for max_iter in (1, 2, 3, 100):
        (lab_a, in_a), (lab_b, in_b) = _both(X, w, start, 6, max_iter=max_iter)  # k = 6: empty clusters re-seeded
        assert np.array_equal(lab_a, lab_b) and in_a == in_b, max_iter


@pytest.mark.parametrize("seed", range(4))
def test_gram_by_members_equals_the_sparse_product(seed):
    """The per-member Gram path (integer weights) gives the sparse product's bits; other weights take that product."""
    from segensemble import Ensemble
    from segensemble.consensus.coassociation import _gram

    gen = np.random.default_rng(seed)
    L = gen.integers(0, 7, size=(3000, 5))
    L[gen.random(L.shape) < 0.1] = -1
    L[:, 0] = np.maximum(L[:, 0], 0)  # every object labelled by someone
    for labels in (L, np.maximum(L, 0)):  # members abstaining, and none
        for w in (gen.integers(1, 50, size=3000).astype(np.float64), gen.random(3000) + 0.5):
            ens = Ensemble.from_labels(labels, weights=w)
            H = ens.incidence
            assert np.array_equal(_gram(ens), (H.T @ H.multiply(ens.weights[:, None]).tocsr()).toarray())


@pytest.mark.parametrize("seed", range(4))
def test_gram_of_scaled_rows_by_member_blocks_equals_the_sparse_product(seed):
    """A^T A of a scaled incidence counted block by block (members abstaining: rows missing some blocks) gives
    the sparse product's bits, as it does for complete rows without the blocks named."""
    from segensemble import Ensemble
    from segensemble.consensus._gram import _gram_of_rows
    from segensemble.consensus._incidence import scaled

    gen = np.random.default_rng(seed)
    L = gen.integers(0, 7, size=(3000, 5))
    L[gen.random(L.shape) < 0.2] = -1
    L[:, 0] = np.maximum(L[:, 0], 0)
    for labels in (L, np.maximum(L, 0)):
        ens = Ensemble.from_labels(labels)
        A = scaled(ens.incidence, rows=gen.random(ens.n_objects) + 0.5, columns=gen.random(ens.incidence.shape[1]) + 1)
        want = (A.T @ A).toarray()
        assert np.array_equal(_gram_of_rows(A, ens.offsets), want)
        assert np.array_equal(_gram_of_rows(A), want)


def test_squared_distances_in_place_equal_the_expression():
    """The in-place distances are the expression's numbers bit for bit (float64 products), and a product of
    another dtype, or one the caller cannot write, is left alone."""
    from segensemble.consensus._kmeans import _squared_distances

    rng = np.random.default_rng(3)
    cn, rn = rng.random(7) * 10, rng.random(500) * 10
    cross = rng.random((500, 7)) * 5
    expected = cn[None, :] - 2 * cross + rn[:, None]
    assert np.array_equal(_squared_distances(cn, cross.copy(), rn), expected)
    small = cross.astype(np.float32)
    assert np.array_equal(_squared_distances(cn, small, rn), cn[None, :] - 2 * small + rn[:, None])
    assert np.array_equal(small, cross.astype(np.float32))  # not written
    frozen = cross.copy()
    frozen.flags.writeable = False
    assert np.array_equal(_squared_distances(cn, frozen, rn), expected)
    rn = rng.random(2 * km._BLOCK + 5) * 10  # several row blocks, the last one short
    cross = rng.random((len(rn), 7)) * 5
    assert np.array_equal(_squared_distances(cn, cross.copy(), rn), cn[None, :] - 2 * cross + rn[:, None])


@pytest.mark.parametrize("seed", range(4))
def test_clusters_sums_moved_row_by_row_equal_the_sums_recomputed(seed):
    """Integer rows and weights: the sums updated by the rows that changed cluster are the full sums, bit for
    bit (Lloyd's centres then are too); fractional weights are not taken for exact."""
    gen = np.random.default_rng(seed)
    X = _one_hot_members(3000, 5, 6, gen)
    w = gen.integers(1, 50, size=3000).astype(np.float64)
    space = km._Space(X)
    assert space.exact_sums(w) and not space.exact_sums(w + 0.5)
    labels = gen.integers(0, 6, size=3000)
    S = space.sums(labels, w, 6)
    for _ in range(5):
        new = labels.copy()
        rows = gen.choice(3000, size=200, replace=False)
        new[rows] = gen.integers(0, 6, size=200)
        moved = np.flatnonzero(new != labels)
        S = space.moved_sums(S, moved, labels[moved], new[moved], w)
        labels = new
        assert np.array_equal(S, space.sums(labels, w, 6))


def test_pruned_lloyd_equals_plain_lloyd_with_fractional_weights():
    gen = np.random.default_rng(11)
    X = _one_hot_members(2000, 4, 5, gen)
    w = gen.random(2000) + 0.1
    (lab_a, in_a), (lab_b, in_b) = _both(X, w, gen.integers(0, 5, size=2000), 5)
    assert np.array_equal(lab_a, lab_b) and in_a == in_b


def test_cluster_sums_of_dense_rows_equal_the_one_hot_product():
    """Dense rows (spectral embeddings) are summed by one bincount per coordinate: equal to the sparse one-hot
    product (bit for bit where SciPy does not fuse its multiply-adds, as on the x86-64 wheels)."""
    gen = np.random.default_rng(5)
    for t in range(50):
        n, d, k = int(gen.integers(1, 300)), int(gen.integers(1, 12)), int(gen.integers(1, 8))
        X = gen.standard_normal((n, d))
        w = gen.random(n) + 0.01 if t % 2 else gen.integers(1, 9, size=n).astype(np.float64)
        labels = gen.integers(0, k, size=n)
        Z = sp.csr_matrix((w, (labels, np.arange(n))), shape=(k, n))
        np.testing.assert_allclose(km._Space(X).sums(labels, w, k), np.asarray(Z @ X), rtol=1e-12, atol=1e-12)


def test_row_norms_equal_scipys_row_sums_bit_for_bit():
    """``x G x^T`` per CSR row, from the stored entries, equals SciPy's ``X.multiply(X @ G).sum(axis=1)`` bit for
    bit on canonical CSR (sorted indices, as the incidence matrix is), empty rows, non-integer entries and metrics
    included."""
    from segensemble.consensus._kmeans import _row_norms

    gen = np.random.default_rng(11)
    for t in range(60):
        n, d = int(gen.integers(1, 300)), int(gen.integers(1, 40))
        X = sp.random(n, d, density=float(gen.uniform(0.02, 0.5)), format="csr", random_state=gen)
        X.sort_indices()
        if t % 2:
            X.data = np.round(X.data * 3) + 1.0
        A = gen.normal(size=(d, d))
        for G in (None, A @ A.T, np.abs(A)):
            XG = X if G is None else X @ G
            assert np.array_equal(_row_norms(X, G), np.asarray(X.multiply(XG).sum(axis=1)).ravel())


def test_unit_row_norms_equal_the_blocked_expression_bit_for_bit():
    """On 0/1 rows (an incidence matrix) the compiled ``x G x^T`` makes the additions of ``_row_norms`` in their
    order, reading only the r x r entries of G a row needs: equal bits, with empty rows, 32- and 64-bit indices,
    unsorted indices, negative zeros and entries of every magnitude in G; and the space uses it."""
    from segensemble.consensus._kmeans import _BLOCK, _row_norms, _Space
    from segensemble.consensus._metric_norms import unit_csr_row_norms

    gen = np.random.default_rng(5)
    for t in range(40):
        n, d = int(gen.integers(1, 400)), int(gen.integers(1, 50))
        X = sp.random(n, d, density=float(gen.uniform(0.01, 0.6)), format="csr", random_state=gen)
        X.data[:] = 1.0
        if t % 3 == 1:  # unsorted indices within rows: the stored order is the order of both
            for i in range(n):
                seg = slice(X.indptr[i], X.indptr[i + 1])
                X.indices[seg] = X.indices[seg][::-1]
        if t % 2:
            X.indptr, X.indices = X.indptr.astype(np.int64), X.indices.astype(np.int64)
        G = gen.normal(size=(d, d)) * 10.0 ** gen.integers(-6, 6, (d, d))
        G[gen.random((d, d)) < 0.1] = -0.0
        expected = np.concatenate([_row_norms(X[i:i + _BLOCK], G) for i in range(0, n, _BLOCK)])
        assert unit_csr_row_norms(X.indptr, X.indices, G).tobytes() == expected.tobytes()
        assert _Space(X, G).row_norms.tobytes() == expected.tobytes()
    with pytest.raises(ValueError, match="square"):
        unit_csr_row_norms(X.indptr, X.indices, np.zeros((2, 3)))
