"""One writer per output folder: a batch command takes its folder for the whole run.

``bench``, ``score``, ``compare`` and ``fuse --out-dir`` write into a folder
that a second run could choose too; the lock makes the second one refuse
instead of scoring the first one's files (or overwriting them).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from segensemble.atomic import atomic_create_bytes, pid_alive, remove_stale_temporaries
from segensemble.errors import InputError

__all__ = ["output_lock", "batch_folder", "LOCK_NAME"]

#: The file that marks a folder as being written by a live run (one writer per output folder).
LOCK_NAME = ".segensemble-lock"


class output_lock:
    """One writer per output folder: a second run into a folder that a live run is writing is refused.

    ``with output_lock(folder, "--out"):`` creates ``folder/.segensemble-lock``
    (exclusively: of two runs starting at once, one gets it) holding this
    process's id and host; another run finding it refuses with one line
    naming the folder and that process. A lock left by a run that died (its
    process is gone) is taken over. The lock is removed when the run ends,
    however it ends.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> with output_lock(d, "--out"):
    ...     with output_lock(d, "--out"):
    ...         pass
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: --out: ... is being written by another segensemble run (process ...); wait for it to finish or choose another folder
    """

    def __init__(self, folder, name: str = "--out"):
        self.folder, self.name, self.path = Path(folder), name, Path(folder) / LOCK_NAME

    def __enter__(self):
        import socket

        self.folder.mkdir(parents=True, exist_ok=True)
        me = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "argv": sys.argv[:8]}).encode()
        for _ in range(2):
            try:  # created with its content at once: a lock seen empty would pass for a dead run's and be taken
                atomic_create_bytes(self.path, me)
            except FileExistsError:
                other = self._holder()
                if other is not None:
                    raise InputError(f"{self.name}: {self.folder} is being written by another segensemble run "
                                     f"(process {other['pid']}{_command(other)}); wait for it to finish or choose "
                                     "another folder") from None
                self.path.unlink(missing_ok=True)  # a dead run's lock: taken over
                continue
            return self
        raise InputError(f"{self.name}: could not lock {self.folder} for writing; try again")

    def _holder(self):
        """The live run holding the lock, or None when the lock is stale (its process gone) or unreadable."""
        import socket

        try:
            other = json.loads(self.path.read_text())
            pid = int(other["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if other.get("host") != socket.gethostname():
            return other  # another machine's run on a shared folder: cannot tell, so it counts as live
        return other if pid == os.getpid() or pid_alive(pid) else None

    def __exit__(self, *exc):
        self.path.unlink(missing_ok=True)
        return False


class batch_folder(output_lock):
    """A batch's output folder for the whole run: locked (one writer), and cleared of temporaries left by
    killed runs on entry and by workers that died during the run on a normal exit.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> with batch_folder(d, "--out") as out:
    ...     (d / LOCK_NAME).exists()
    True
    """

    def __enter__(self):
        super().__enter__()
        remove_stale_temporaries(self.folder)
        return self

    def __exit__(self, kind, *exc):
        if kind is None:
            remove_stale_temporaries(self.folder)
        return super().__exit__(kind, *exc)


def _command(record) -> str:
    argv = record.get("argv") or []
    return f": {' '.join(map(str, argv))[:80]}" if argv else ""
