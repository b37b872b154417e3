"""Atomic file output: write to a temporary file beside the target, then rename.

An interrupted run therefore never leaves a half-written output file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_write_text", "remove_stale_temporaries"]


def atomic_write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file in the same folder + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; outputs get the usual permissions
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def remove_stale_temporaries(folder) -> int:
    """Delete the temporary files a killed run left under ``folder`` (``.<name>.*.tmp``); return how many.

    Only a process killed outright (SIGKILL, power loss) leaves them; call
    this when a batch starts, before any writer of the same folder runs.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / ".x.png.abc.tmp").write_bytes(b"")
    >>> remove_stale_temporaries(d), list(d.iterdir())
    (1, [])
    """
    folder = Path(folder)
    if not folder.is_dir():
        return 0
    stale = [p for p in folder.rglob(".*.tmp") if p.is_file()]
    for p in stale:
        try:
            p.unlink()
        except FileNotFoundError:
            pass
    return len(stale)
