# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Codes by first occurrence of non-negative int64 keys of any range, in one pass through a hash table
(:func:`segensemble.segmentation.canonical_codes`).

Keys of a bounded range are coded through a table indexed by the key; keys of a wide range (the signatures of
several members' labels, up to 2^62) were coded through ``np.unique``: a sort of every key. Here every key is
looked up in an open-addressing table (linear probing, Fibonacci hashing, grown by doubling while at most half
full, so its size follows the number of distinct keys, not of keys): an unseen key gets the next code. The codes
and the keys in order of first occurrence are those of the sort, exactly (integers).
"""

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc

import numpy as np

cdef uint64_t _GOLDEN = 0x9E3779B97F4A7C15ULL


cdef inline Py_ssize_t _slot(int64_t key, int shift) noexcept nogil:
    return <Py_ssize_t> ((<uint64_t> key * _GOLDEN) >> shift)


def first_occurrence_codes(const int64_t[::1] keys):
    """``(codes, firsts)``: the code of every key (0 for the first key, 1 for the first key unlike it, ...; int32)
    and the keys in order of first occurrence (int64). Keys must be non-negative."""
    cdef Py_ssize_t n = keys.shape[0], i, s, count = 0, capacity = 1024, j
    cdef int shift = 64 - 10
    cdef int64_t key
    codes = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] out = codes
    cdef int64_t* table_keys = <int64_t*> malloc(capacity * sizeof(int64_t))
    cdef int32_t* table_codes = <int32_t*> malloc(capacity * sizeof(int32_t))
    cdef int64_t* firsts = <int64_t*> malloc(max(n, 1) * sizeof(int64_t))
    cdef int64_t* grown_keys
    cdef int32_t* grown_codes
    cdef bint failed = False, negative = False
    if table_keys == NULL or table_codes == NULL or firsts == NULL:
        free(table_keys)
        free(table_codes)
        free(firsts)
        raise MemoryError()
    with nogil:
        for s in range(capacity):
            table_keys[s] = -1
        for i in range(n):
            key = keys[i]
            if key < 0:
                negative = True
                break
            s = _slot(key, shift)
            while table_keys[s] != key and table_keys[s] != -1:
                s = (s + 1) & (capacity - 1)
            if table_keys[s] == key:
                out[i] = table_codes[s]
                continue
            table_keys[s] = key
            table_codes[s] = <int32_t> count
            firsts[count] = key
            out[i] = <int32_t> count
            count += 1
            if 2 * count > capacity:  # more than half full: double, re-inserting the keys in code order
                capacity *= 2
                shift -= 1
                grown_keys = <int64_t*> malloc(capacity * sizeof(int64_t))
                grown_codes = <int32_t*> malloc(capacity * sizeof(int32_t))
                if grown_keys == NULL or grown_codes == NULL:
                    free(grown_keys)
                    free(grown_codes)
                    failed = True
                    break
                free(table_keys)
                free(table_codes)
                table_keys = grown_keys
                table_codes = grown_codes
                for s in range(capacity):
                    table_keys[s] = -1
                for j in range(count):
                    s = _slot(firsts[j], shift)
                    while table_keys[s] != -1:
                        s = (s + 1) & (capacity - 1)
                    table_keys[s] = firsts[j]
                    table_codes[s] = <int32_t> j
    free(table_keys)
    free(table_codes)
    if failed or negative:
        free(firsts)
        if failed:
            raise MemoryError()
        raise ValueError("keys: non-negative integers expected")
    result = np.empty(count, dtype=np.int64)
    cdef int64_t[::1] res = result
    for j in range(count):
        res[j] = firsts[j]
    free(firsts)
    return codes, result
