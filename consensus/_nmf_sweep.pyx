# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""One multiplicative update of the NMF consensus's Q in a single pass over the objects
(:class:`segensemble.consensus.nmf.NMFConsensus`).

The update ``Q <- Q * sqrt(M D Q S / (Q Q^T D M D Q S))`` reads, for object i, only the clusters of its members:
``(M D Q S)_i = sum_j (A S)[cluster of i in member j] / m`` with ``A = H^T D Q`` (the incidence matrix H, never
formed), and ``(Q Q^T D M D Q S)_i = Q_i R`` with the (K, K) ``R = Q^T D M D Q S``. The same pass gathers what the
next update needs: ``A' = H^T D Q'`` (each object's weighted new row added to its clusters) and ``Q'^T D Q'``.
NumPy took nine passes over (n, K) arrays and a sparse product for this.
"""

from libc.math cimport sqrt
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc


def update_memberships(const int64_t[:, ::1] clusters, const double[:, ::1] AS, const double[:, ::1] R,
                       double[:, ::1] Q, const double[::1] w, double m, double eps, double[:, ::1] A_next,
                       double[:, ::1] QtDQ_next):
    """Update ``Q`` (n, K) in place; add ``H^T D Q`` of the new Q to ``A_next`` and ``Q^T D Q`` to ``QtDQ_next``.

    ``clusters``: (n, members) the cluster (row of ``AS``) of each object in each member, -1 where the member
    abstains; ``AS``: ``(H^T D Q) S`` of the current Q; ``R``: ``Q^T D M D Q S``; ``w``: object weights (D);
    ``m``: the number of members that speak; ``eps``: the floor of the denominator. ``A_next`` and ``QtDQ_next``
    come in zeroed (or holding what is to be added to).
    """
    cdef Py_ssize_t n = Q.shape[0], k = Q.shape[1], n_members = clusters.shape[1], i, j, a, b
    cdef int64_t c
    if (AS.shape[1] != k or R.shape[0] != k or R.shape[1] != k or w.shape[0] != n or clusters.shape[0] != n
            or A_next.shape[0] != AS.shape[0] or A_next.shape[1] != k or QtDQ_next.shape[0] != k
            or QtDQ_next.shape[1] != k):
        raise ValueError("clusters, AS, R, Q, w, A_next, QtDQ_next: shapes of one problem expected")
    cdef double* num = <double*> malloc(3 * k * sizeof(double) + 1)
    if num == NULL:
        raise MemoryError()
    cdef double* den = num + k
    cdef double* wq = num + 2 * k
    cdef double q, wi
    with nogil:
        for i in range(n):
            for a in range(k):
                num[a] = 0.0
                den[a] = 0.0
            for j in range(n_members):
                c = clusters[i, j]
                if c >= 0:
                    for a in range(k):
                        num[a] += AS[c, a]
            for a in range(k):
                q = Q[i, a]
                for b in range(k):
                    den[b] += q * R[a, b]
            wi = w[i]
            for b in range(k):
                q = Q[i, b] * sqrt((num[b] / m) / (den[b] if den[b] > eps else eps))
                Q[i, b] = q
                wq[b] = wi * q
            for j in range(n_members):
                c = clusters[i, j]
                if c >= 0:
                    for a in range(k):
                        A_next[c, a] += wq[a]
            for a in range(k):
                q = Q[i, a]
                for b in range(k):
                    QtDQ_next[a, b] += q * wq[b]
    free(num)
