"""Atomic file output (write to a temporary file beside the target, then rename) and file digests.

An interrupted run therefore never leaves a half-written output file; a
file's digest tells whether a stored result was made from it.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import tempfile
import time
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_create_bytes", "atomic_write_all", "atomic_write_text",
           "remove_stale_temporaries", "file_digest", "pid_alive"]


def atomic_write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file in the same folder + rename).

    Examples
    --------
    >>> import tempfile
    >>> p = atomic_write_bytes(Path(tempfile.mkdtemp()) / "sub" / "a.bin", b"xyz")
    >>> p.read_bytes()
    b'xyz'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _staged(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _staged(path: Path, data: bytes) -> str:
    """``data`` written and synced to a temporary beside ``path`` that names its writer; its name.

    The temporary gets the usual permissions of an output (mkstemp makes 0600); if writing fails it is removed.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{_writer_tag()}", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def atomic_create_bytes(path, data: bytes) -> Path:
    """Create ``path`` holding ``data``, all at once, or raise FileExistsError if it exists (it is left alone).

    The file never exists empty or half-written, which a reader could take for another writer's (a lock file
    read by a second run between its creation and its content): the data go to a temporary beside it, which is
    then hard-linked to ``path`` (a link fails when the name exists). Where the file system has no hard links,
    the file is created exclusively and then written.

    Examples
    --------
    >>> import tempfile
    >>> p = atomic_create_bytes(Path(tempfile.mkdtemp()) / "lock", b"me")
    >>> atomic_create_bytes(p, b"another")
    Traceback (most recent call last):
    ...
    FileExistsError: ...
    >>> p.read_bytes(), sorted(q.name for q in p.parent.iterdir())
    (b'me', ['lock'])
    """
    path = Path(path)
    tmp = _staged(path, data)
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise FileExistsError(f"{path} exists") from None
    except OSError:  # no hard links here
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def atomic_write_all(files: dict) -> list:
    """Write several files (``{path: bytes}``) so that they appear together or not at all.

    Every file is first written to a temporary beside it; only when all are
    written are they renamed into place (a failure before that removes the
    temporaries and leaves every destination as it was).

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> [p.name for p in atomic_write_all({d / "a.txt": b"a", d / "b.txt": b"b"})]
    ['a.txt', 'b.txt']
    """
    staged = []
    try:
        for path, data in files.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            staged.append((_staged(path, data), path))
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    return [path for _, path in staged]


def atomic_write_text(path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically.

    Examples
    --------
    >>> import tempfile
    >>> atomic_write_text(Path(tempfile.mkdtemp()) / "a.txt", "été").read_text(encoding="utf-8")
    'été'
    """
    return atomic_write_bytes(path, text.encode("utf-8"))


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "host"


def _writer_tag() -> str:
    """``~<pid>@<host>~``: who writes a temporary, so that only a dead writer's temporaries are removed."""
    return f"~{os.getpid()}@{_host()}~"


_TAG = re.compile(r"~(\d+)@([A-Za-z0-9-]+)~[^/]*\.tmp$")
#: Temporaries whose writer cannot be checked (another host, or no writer tag) are removed only past this age.
UNCHECKABLE_AGE = 24 * 3600.0


def pid_alive(pid: int) -> bool:
    """Whether a process of this id runs on this machine (one owned by another user counts).

    Examples
    --------
    >>> pid_alive(os.getpid())
    True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _is_dead_writers(path: Path, host: str, now: float) -> bool:
    m = _TAG.search(path.name)
    if m and m.group(2) == host:
        return not pid_alive(int(m.group(1)))
    try:
        return now - path.stat().st_mtime > UNCHECKABLE_AGE
    except FileNotFoundError:
        return False


def remove_stale_temporaries(folder) -> int:
    """Delete the temporary files that dead writers left under ``folder`` (``.<name>.*.tmp``); return how many.

    Only a process killed outright (SIGKILL, power loss) leaves them. Every
    temporary names its writer (process id and host); one is removed only
    when that process is provably gone on this host. A live writer's
    temporary (another run writing to the same folder) is never touched;
    one written on another host, or without a writer tag, only after
    :data:`UNCHECKABLE_AGE` seconds.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / f".x.png.~999999999@{_host()}~abc.tmp").write_bytes(b"")   # no such process
    >>> _ = (d / f".y.png.{_writer_tag()}abc.tmp").write_bytes(b"")         # this (live) process
    >>> remove_stale_temporaries(d), [p.name.startswith(".y.png") for p in d.iterdir()]
    (1, [True])
    """
    folder = Path(folder)
    if not folder.is_dir():
        return 0
    host, now = _host(), time.time()
    stale = [p for p in folder.rglob(".*.tmp") if p.is_file() and _is_dead_writers(p, host, now)]
    for p in stale:
        try:
            p.unlink()
        except FileNotFoundError:
            pass
    return len(stale)


def file_digest(path) -> str:
    """SHA-256 of a file's bytes (hex), read in 1 MB blocks.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "a"; _ = p.write_bytes(b"x")
    >>> file_digest(p)[:12]
    '2d711642b726'
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
