# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""One multiplicative update of the NMF consensus's Q in a single pass over the objects
(:class:`segensemble.consensus.nmf.NMFConsensus`).

The update ``Q <- Q * sqrt(M D Q S / (Q Q^T D M D Q S))`` reads, for object i, only the clusters of its members:
``(M D Q S)_i = sum_j (A S)[cluster of i in member j] / m`` with ``A = H^T D Q`` (the incidence matrix H, never
formed), and ``(Q Q^T D M D Q S)_i = Q_i R`` with the (K, K) ``R = Q^T D M D Q S``. The same pass gathers what the
next update needs: ``A' = H^T D Q'`` (each object's weighted new row added to its clusters) and ``Q'^T D Q'``.
NumPy took nine passes over (n, K) arrays and a sparse product for this.

The pass is C with ``restrict`` rows, so that the compiler makes every loop over the K columns one of vector
instructions (the square roots too: the module is built with ``-fno-math-errno``, which only stops ``sqrt`` from
setting ``errno``). On x86-64 Linux it is compiled twice, for AVX2 and for the baseline instruction set, and the
loader picks the one the processor runs (GCC's ``target_clones``). Every element is computed by the same IEEE
operations in the same order in both (no fused multiply-add: ``-ffp-contract=off``), so they give the same bits.
"""

from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc

cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>
    #if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
    #define SEGENSEMBLE_NMF_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define SEGENSEMBLE_NMF_CLONES
    #endif

    /* Q (n, k) updated in place; A_next (clusters, k) and T (k, k) accumulate H^T D Q' and Q'^T D Q';
       scratch holds 3 k doubles. */
    static SEGENSEMBLE_NMF_CLONES void segensemble_nmf_pass(
        const int64_t *restrict clusters, Py_ssize_t n, Py_ssize_t k, Py_ssize_t n_members,
        const double *restrict AS, const double *restrict R, double *restrict Q, const double *restrict w,
        double m, double eps, double *restrict A_next, double *restrict T, double *restrict scratch)
    {
        double *restrict num = scratch, *restrict den = scratch + k, *restrict wq = scratch + 2 * k;
        for (Py_ssize_t i = 0; i < n; i++) {
            double *restrict qi = Q + i * k;
            const int64_t *restrict ci = clusters + i * n_members;
            for (Py_ssize_t a = 0; a < k; a++) { num[a] = 0.0; den[a] = 0.0; }
            for (Py_ssize_t j = 0; j < n_members; j++) {
                if (ci[j] < 0) continue;
                const double *restrict src = AS + ci[j] * k;
                for (Py_ssize_t a = 0; a < k; a++) num[a] += src[a];
            }
            for (Py_ssize_t a = 0; a < k; a++) {
                const double q = qi[a];
                const double *restrict r = R + a * k;
                for (Py_ssize_t b = 0; b < k; b++) den[b] += q * r[b];
            }
            for (Py_ssize_t b = 0; b < k; b++) den[b] = den[b] > eps ? den[b] : eps;
            for (Py_ssize_t b = 0; b < k; b++) qi[b] = qi[b] * sqrt((num[b] / m) / den[b]);
            const double wi = w[i];
            for (Py_ssize_t b = 0; b < k; b++) wq[b] = wi * qi[b];
            for (Py_ssize_t j = 0; j < n_members; j++) {
                if (ci[j] < 0) continue;
                double *restrict dst = A_next + ci[j] * k;
                for (Py_ssize_t a = 0; a < k; a++) dst[a] += wq[a];
            }
            for (Py_ssize_t a = 0; a < k; a++) {
                const double q = qi[a];
                double *restrict t = T + a * k;
                for (Py_ssize_t b = 0; b < k; b++) t[b] += q * wq[b];
            }
        }
    }
    """
    void segensemble_nmf_pass(const int64_t* clusters, Py_ssize_t n, Py_ssize_t k, Py_ssize_t n_members,
                              const double* AS, const double* R, double* Q, const double* w, double m, double eps,
                              double* A_next, double* T, double* scratch) noexcept nogil


def update_memberships(const int64_t[:, ::1] clusters, const double[:, ::1] AS, const double[:, ::1] R,
                       double[:, ::1] Q, const double[::1] w, double m, double eps, double[:, ::1] A_next,
                       double[:, ::1] QtDQ_next):
    """Update ``Q`` (n, K) in place; add ``H^T D Q`` of the new Q to ``A_next`` and ``Q^T D Q`` to ``QtDQ_next``.

    ``clusters``: (n, members) the cluster (row of ``AS``) of each object in each member, -1 where the member
    abstains; ``AS``: ``(H^T D Q) S`` of the current Q; ``R``: ``Q^T D M D Q S``; ``w``: object weights (D);
    ``m``: the number of members that speak; ``eps``: the floor of the denominator. ``A_next`` and ``QtDQ_next``
    come in zeroed (or holding what is to be added to), and share no memory with the other arrays.
    """
    cdef Py_ssize_t n = Q.shape[0], k = Q.shape[1], n_members = clusters.shape[1]
    if (AS.shape[1] != k or R.shape[0] != k or R.shape[1] != k or w.shape[0] != n or clusters.shape[0] != n
            or A_next.shape[0] != AS.shape[0] or A_next.shape[1] != k or QtDQ_next.shape[0] != k
            or QtDQ_next.shape[1] != k):
        raise ValueError("clusters, AS, R, Q, w, A_next, QtDQ_next: shapes of one problem expected")
    if n == 0 or k == 0:
        return
    cdef double* scratch = <double*> malloc(3 * k * sizeof(double))
    if scratch == NULL:
        raise MemoryError()
    with nogil:
        segensemble_nmf_pass(&clusters[0, 0] if n_members > 0 else NULL, n, k, n_members,
                             &AS[0, 0] if AS.shape[0] > 0 else NULL, &R[0, 0], &Q[0, 0], &w[0], m, eps,
                             &A_next[0, 0] if A_next.shape[0] > 0 else NULL, &QtDQ_next[0, 0], scratch)
    free(scratch)
