"""Run one task per image, serially or in worker processes, collecting failures.

Shared by ``bench`` and ``score``: tasks write their own per-image output
atomically, so finished images survive an interruption and a re-run resumes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import active_children, get_context
from pathlib import Path

from segensemble.atomic import file_digest, remove_stale_temporaries
from segensemble.errors import InputError, describe_exception, first_line

__all__ = ["run_tasks", "resume_tasks", "load_finished", "settings_key", "settings_hash",
           "input_digests", "check_scheduler", "SCHEDULER_SCHEMES"]


#: Address schemes of a Dask distributed scheduler.
SCHEDULER_SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")


def check_scheduler(address):
    """Validate a Dask scheduler address (``tcp://HOST:PORT``, or another Dask scheme); None passes.

    Examples
    --------
    >>> check_scheduler("tcp://127.0.0.1:8786")
    'tcp://127.0.0.1:8786'
    >>> check_scheduler("garbage://x")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: --scheduler: expected tcp://HOST:PORT (schemes tcp, tls, inproc, ucx, ws, wss), got 'garbage://x'
    """
    if address is None:
        return None
    import re

    text = str(address)
    m = re.fullmatch(r"(?:([a-z]+)://)?([^\s/:]+|\[[0-9a-fA-F:]+\])(?::(\d{1,5}))?/?", text)
    if not m or (m.group(1) or "tcp") not in SCHEDULER_SCHEMES or (m.group(3) and int(m.group(3)) > 65535):
        raise InputError(f"--scheduler: expected tcp://HOST:PORT (schemes {', '.join(SCHEDULER_SCHEMES)}), "
                         f"got {text!r}")
    return text


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
    text = json.dumps(settings.__dict__, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def input_digests(paths: dict) -> dict:
    """``{name: SHA-256}`` of the input files a per-image result is made from (``{name: path}``).

    Stored in every per-image record; a record is reused only when its inputs
    still have the same content (see :func:`load_finished`).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.txt"); _ = open(p, "w").write("abc")
    >>> input_digests({"image": p})["image"][:12]
    'ba7816bf8f01'
    """
    return {name: file_digest(p) for name, p in sorted(paths.items())}


def load_finished(out: Path, ids, key: str, required=(), inputs=None) -> dict:
    """Per-image records already written by an earlier run with the same settings and the same inputs.

    A record counts when ``out/per_image/<id>.json`` parses, carries
    ``"config": key``, every ``required`` file pattern (``'{id}'`` is
    replaced by the image id) exists under ``out``, and, when ``inputs`` is
    given (a callable ``id -> {name: path}``, or None when an input is
    missing), its ``"inputs"`` equal the current content digests of those
    files (:func:`input_digests`). A record made from other files (another
    dataset with the same ids, another results folder) is therefore never
    reused: that image is computed again.

    Examples
    --------
    >>> import json, tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> _ = (out / "per_image").mkdir(); _ = (out / "per_image" / "1.json").write_text(json.dumps({"config": "k"}))
    >>> sorted(load_finished(out, ["1", "2"], "k")), sorted(load_finished(out, ["1"], "other"))
    (['1'], [])
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
        if not isinstance(record, dict) or record.get("config") != key:
            continue
        if inputs is not None:
            try:
                paths = inputs(image_id)
                if paths is None or record.get("inputs") != input_digests(paths):
                    continue
            except (OSError, InputError):  # an input is missing now: compute (and report) it again
                continue
        done[image_id] = record
    return done


def settings_hash(args) -> str:
    """Short hash of task arguments (names Dask tasks uniquely per run settings).

    Examples
    --------
    >>> settings_hash((1, "a")) == settings_hash((1, "a")) != settings_hash((2, "a"))
    True
    """
    return hashlib.sha256(repr(args).encode()).hexdigest()[:12]


def _failure_message(exc: BaseException) -> str:
    return first_line(exc) if isinstance(exc, InputError) else describe_exception(exc)


#: Seconds a Dask run waits with no worker on the cluster before it stops (its finished images are kept).
WORKER_TIMEOUT = 60.0


def run_tasks(task, ids, args: tuple, *, jobs: int = 1, progress=None, done_before: int = 0, total: int | None = None,
              scheduler: str | None = None, output_dir=None, worker_timeout: float = WORKER_TIMEOUT):
    """Call ``task(image_id, *args)`` for every id.

    Locally (``jobs`` processes), or on a Dask distributed cluster when
    ``scheduler`` is its address (``tcp://host:port``): the workers must see
    the same paths (a shared file system). A task lost with a dead worker is
    run again elsewhere (``retries=2``); tasks write their outputs
    atomically and idempotently, so nothing is lost or duplicated. A cluster
    with no worker for ``worker_timeout`` seconds (none started, or every one
    lost) stops the run with a :class:`RuntimeError` naming the scheduler; the
    images finished so far are kept, so a re-run resumes. When the
    local run is interrupted, its workers are killed and, with
    ``output_dir``, the temporaries they were writing there are removed.

    Returns
    -------
    results : dict id -> return value
    failures : dict id -> one-line message
        Every exception of a task is caught and reported here; the other
        images go on.

    Examples
    --------
    >>> run_tasks(lambda image_id, k: int(image_id) * k, ["1", "2", "x"], (10,))
    ({'1': 10, '2': 20}, {'x': "ValueError: invalid literal for int() with base 10: 'x'"})
    """
    results, failures = {}, {}
    total = len(ids) + done_before if total is None else total

    def tick():
        if progress:
            progress(done_before + len(results) + len(failures), total)

    if scheduler is not None:
        try:
            from distributed import Client
        except ModuleNotFoundError as exc:
            raise InputError("scheduler: Dask is not installed; pip install 'segensemble[dist]'") from exc
        try:
            client = Client(scheduler, timeout=30)
        except OSError as exc:
            raise InputError(f"scheduler: cannot reach a Dask scheduler at {scheduler!r} ({exc})") from exc
        with client:
            futures = {client.submit(task, image_id, *args, key=f"segensemble-{image_id}-{settings_hash(args)}",
                                     pure=False, retries=2): image_id for image_id in ids}
            _collect(futures, _dask_finished(client, list(futures), scheduler, worker_timeout), results, failures,
                     tick)
        return results, failures
    if jobs == 1 or len(ids) <= 1:
        for image_id in ids:
            try:
                results[image_id] = task(image_id, *args)
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:  # noqa: BLE001 - reported per image
                failures[image_id] = _failure_message(exc)
            tick()
        return results, failures
    others = set(active_children())  # never touch processes the caller started
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"), initializer=_die_with_parent,
                               initargs=(os.getpid(), _warnings_ignored()))
    try:
        futures = {pool.submit(task, image_id, *args): image_id for image_id in ids}
        _collect(futures, as_completed(futures), results, failures, tick)
    except BaseException:  # Ctrl-C, SIGTERM (raised as KeyboardInterrupt by the CLI), any failure of the parent
        _stop_workers(pool, others)
        if output_dir is not None:  # a worker killed mid-write leaves its temporary; its writer is gone now
            remove_stale_temporaries(output_dir)
        raise
    pool.shutdown(wait=True)
    return results, failures


def _dask_finished(client, futures: list, scheduler: str, worker_timeout: float):
    """Yield Dask futures as they finish; stop when the cluster has had no worker for ``worker_timeout`` s."""
    import time

    from distributed import wait

    pending, idle_since = set(futures), None
    while pending:
        try:
            done = wait(pending, timeout=min(2.0, worker_timeout), return_when="FIRST_COMPLETED").done
        except TimeoutError:
            done = set()
        for fut in done:
            pending.discard(fut)
            yield fut
        if done or client.scheduler_info().get("workers"):
            idle_since = None
            continue
        idle_since = idle_since or time.monotonic()
        if time.monotonic() - idle_since >= worker_timeout:
            for fut in pending:
                fut.cancel()
            raise RuntimeError(f"scheduler: no Dask worker at {scheduler} for {worker_timeout:g} s; "
                               f"{len(pending)} image(s) not run (start workers and run again: finished images "
                               "are kept)")


def resume_tasks(task, ids, args: tuple, out, key: str, *, inputs=None, required=(), complete=None, jobs: int = 1,
                 progress=None, scheduler: str | None = None, worker_timeout: float = WORKER_TIMEOUT):
    """The resumable batch, written once (bench, score, fuse --out-dir): every id without a valid record
    under ``out`` (see :func:`load_finished`; ``complete(id)``, when given, must also hold, e.g. outputs
    written outside ``out`` exist) is run by :func:`run_tasks`.

    Returns
    -------
    records : dict id -> record, in the order of ``ids``
        The finished ones (from before and from this run).
    failures : dict id -> one-line message
    skipped : int
        How many were finished before (not run again).

    Examples
    --------
    >>> import json, tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> def task(i, out):
    ...     rec = {"config": "k", "value": int(i)}
    ...     _ = (Path(out) / "per_image").mkdir(exist_ok=True)
    ...     _ = (Path(out) / "per_image" / f"{i}.json").write_text(json.dumps(rec))
    ...     return rec
    >>> resume_tasks(task, ["1", "2"], (str(out),), out, "k")[2], resume_tasks(task, ["1", "2", "3"], (str(out),), out, "k")[2]
    (0, 2)
    """
    done = load_finished(out, ids, key, required=required, inputs=inputs)
    if complete is not None:
        done = {i: r for i, r in done.items() if complete(i)}
    todo = [i for i in ids if i not in done]
    if progress:
        progress(len(done), len(ids))
    skipped = len(done)
    new, failures = run_tasks(task, todo, args, jobs=jobs, progress=progress, done_before=skipped, total=len(ids),
                              scheduler=scheduler, output_dir=out, worker_timeout=worker_timeout)
    done.update(new)
    return {i: done[i] for i in ids if i in done}, failures, skipped


def _stop_workers(pool, others: set) -> None:
    """Kill the pool's worker processes now (running tasks are abandoned; their writes are atomic)."""
    pool.shutdown(wait=False, cancel_futures=True)
    workers = [proc for proc in active_children() if proc not in others]
    for proc in workers:
        proc.kill()
    for proc in workers:
        proc.join(timeout=5)


#: How often a worker checks that its parent is still alive (seconds), where the OS cannot signal it.
PARENT_POLL = 0.2


def _warnings_ignored() -> bool:
    """Whether this process ignores every warning (the CLI without --debug): its workers then do too."""
    import warnings

    return bool(warnings.filters) and warnings.filters[0][0] == "ignore" and warnings.filters[0][2] is Warning


def _die_with_parent(parent_pid: int, ignore_warnings: bool = False) -> None:
    """Worker initializer: end this process as soon as the parent process is gone.

    On Linux the kernel sends SIGKILL when the parent dies
    (``prctl(PR_SET_PDEATHSIG)``); everywhere a daemon thread also polls
    the parent's id and exits. A killed ``bench``/``score`` therefore leaves
    no worker writing into its output folder.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    if ignore_warnings:
        import warnings

        warnings.simplefilter("ignore")

    def watch():
        import time

        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL)
        os._exit(1)

    threading.Thread(target=watch, name="segensemble-parent-watch", daemon=True).start()


def _collect(futures: dict, completed, results: dict, failures: dict, tick) -> None:
    """Gather finished futures (local or Dask) into results / one-line failures, ticking the progress."""
    for fut in completed:
        image_id = futures[fut]
        try:
            results[image_id] = fut.result()
        except Exception as exc:  # noqa: BLE001 - reported per image
            failures[image_id] = _failure_message(exc)
        tick()
