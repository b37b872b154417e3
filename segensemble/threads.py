"""Threads for the work of one call: how many a caller asked for, and a map that runs on them.

The numeric work that runs in threads here (NumPy, OpenCV, LightGBM's C
calls) releases the GIL; processes are the batch layer's business.
"""

from __future__ import annotations

import os

from segensemble.checks import check_int
from segensemble.errors import InputError

__all__ = ["available_cores", "thread_map"]


def available_cores(n_jobs: int = -1) -> int:
    """``n_jobs`` checked (a positive int, or -1 for every core this process may use) as a number of workers.

    Examples
    --------
    >>> available_cores(3), available_cores(-1) >= 1
    (3, True)
    """
    bad = InputError(f"n_jobs: expected a positive int or -1 (every core), got {n_jobs!r}")
    try:
        n = check_int(n_jobs, "n_jobs", minimum=-1)
    except InputError:
        raise bad from None
    if n == 0:
        raise bad
    if n == -1:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return n


def thread_map(fn, items, workers: int, *, name: str) -> list:
    """``[fn(x) for x in items]`` on up to ``workers`` threads, started in the order of ``items``.

    With one worker or one item the calls run in the calling thread. When a
    call raises, or the caller is interrupted, the calls not yet started are
    cancelled and the pool is not waited for. ``name`` names the threads
    (``segensemble-<name>``).

    Examples
    --------
    >>> thread_map(abs, [-1, 2, -3], 2, name="example")
    [1, 2, 3]
    """
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=min(workers, len(items)), thread_name_prefix=f"segensemble-{name}")
    try:
        futures = [pool.submit(fn, x) for x in items]
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
