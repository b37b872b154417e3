"""The ``segensemble`` command line: thin over the library, one module per command group.

Bad input prints one ``error:`` line on stderr and exits with code 2; a
runtime failure exits with code 1; ``--debug`` shows tracebacks. Outputs are
written atomically.
"""

from __future__ import annotations

# importing a command module registers its commands; this order is the order of 'segensemble --help'
from segensemble.cli import segment, edges, fuse, evaluate, info, bench  # noqa: E401,F401,I001
from segensemble.cli._app import app

__all__ = ["app", "main"]


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main():
    """Entry point of the ``segensemble`` console script.

    SIGTERM is handled like Ctrl-C: worker processes are stopped, no
    temporary file is left, exit code 130.
    """
    import signal

    signal.signal(signal.SIGTERM, _interrupt)
    app(prog_name="segensemble")
