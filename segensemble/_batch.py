"""Run one task per image, serially or in worker processes, collecting failures.

Shared by ``bench`` and ``score``: tasks write their own per-image output
atomically, so finished images survive an interruption and a re-run resumes.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context

import json
from pathlib import Path

from segensemble.errors import InputError, describe, first_line

__all__ = ["run_tasks", "load_finished", "settings_key", "settings_hash"]


def settings_key(settings) -> str:
    """Short stable hash of a settings dataclass; stored results are reused only under the same key.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class S:
    ...     a: int = 1
    >>> settings_key(S()) == settings_key(S()) != settings_key(S(2))
    True
    """
    import hashlib

    text = json.dumps(settings.__dict__, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_finished(out: Path, ids, key: str, required=()) -> dict:
    """Per-image records already written by an earlier run with the same settings.

    A record counts when ``out/per_image/<id>.json`` parses, carries
    ``"config": key`` and every ``required`` file pattern (``'{id}'`` is
    replaced by the image id) exists under ``out``.
    """
    done = {}
    for image_id in ids:
        p = out / "per_image" / f"{image_id}.json"
        if not p.is_file() or not all((out / r.format(id=image_id)).is_file() for r in required):
            continue
        try:
            record = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("config") == key:
            done[image_id] = record
    return done


def settings_hash(args) -> str:
    """Short hash of task arguments (names Dask tasks uniquely per run settings)."""
    import hashlib

    return hashlib.sha256(repr(args).encode()).hexdigest()[:12]


def _describe(exc: BaseException) -> str:
    return first_line(exc) if isinstance(exc, InputError) else describe(exc)


def run_tasks(task, ids, args: tuple, *, jobs: int = 1, progress=None, done_before: int = 0, total: int | None = None,
              scheduler: str | None = None):
    """Call ``task(image_id, *args)`` for every id.

    Locally (``jobs`` processes), or on a Dask distributed cluster when
    ``scheduler`` is its address (``tcp://host:port``): the workers must see
    the same paths (a shared file system). A task lost with a dead worker is
    run again elsewhere (``retries=2``); tasks write their outputs
    atomically and idempotently, so nothing is lost or duplicated.

    Returns
    -------
    results : dict id -> return value
    failures : dict id -> one-line message
        Every exception of a task is caught and reported here; the other
        images go on.
    """
    results, failures = {}, {}
    total = len(ids) + done_before if total is None else total

    def tick():
        if progress:
            progress(done_before + len(results) + len(failures), total)

    if scheduler is not None:
        try:
            from distributed import Client, as_completed as dask_completed
        except ModuleNotFoundError as exc:
            raise InputError("scheduler: Dask is not installed; pip install 'segensemble[dist]'") from exc
        try:
            client = Client(scheduler, timeout=30)
        except OSError as exc:
            raise InputError(f"scheduler: cannot reach a Dask scheduler at {scheduler!r} ({exc})") from exc
        with client:
            futures = {client.submit(task, image_id, *args, key=f"segensemble-{image_id}-{settings_hash(args)}",
                                     pure=False, retries=2): image_id for image_id in ids}
            _collect(futures, dask_completed(list(futures)), results, failures, tick)
        return results, failures
    if jobs == 1 or len(ids) <= 1:
        for image_id in ids:
            try:
                results[image_id] = task(image_id, *args)
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:  # noqa: BLE001 - reported per image
                failures[image_id] = _describe(exc)
            tick()
        return results, failures
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(task, image_id, *args): image_id for image_id in ids}
        _collect(futures, as_completed(futures), results, failures, tick)
    return results, failures


def _collect(futures: dict, completed, results: dict, failures: dict, tick) -> None:
    """Gather finished futures (local or Dask) into results / one-line failures, ticking the progress."""
    for fut in completed:
        image_id = futures[fut]
        try:
            results[image_id] = fut.result()
        except Exception as exc:  # noqa: BLE001 - reported per image
            failures[image_id] = _describe(exc)
        tick()
