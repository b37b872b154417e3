"""The Typer application, its consoles, error handling and the options shared by several commands.

Bad input prints one ``error:`` line on stderr and exits with code 2; a
runtime failure exits with code 1; ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import functools
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from typer.core import TyperGroup

import segensemble
from segensemble.errors import InputError, describe_exception, first_line
from segensemble.checks import check_output_path
from segensemble.cli._deferred import pipeline

__all__ = ["app", "out", "err", "counted", "note_dropped_member_params", "handle_errors", "with_progress",
           "exit_on_failures", "check_output", "parse_params", "CONSENSUS_METHODS", "SEGMENTERS", "MaxPixels",
           "Downscale", "IgnoreOrientation", "Seed", "NThresh", "Jobs", "Params", "ResultKind", "What",
           "ConfidenceKind"]

#: Click's usage-error and exception classes, found through Typer's public BadParameter (Typer vendors Click
#: from 0.22 on, so the classes live in different modules across the supported Typer versions).
_UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
_ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class _OneLineErrors(TyperGroup):
    """The command group: a usage error (bad option value, unknown option, missing argument) is one line.

    Click prints usage, a hint and the message on three lines; the CLI
    contract is one ``error:`` line naming the option, exit code 2.
    """

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # a bare command group: its help, as Click prints it
                exc.show()
                sys.exit(exc.exit_code)
            print(f"error: {' '.join(exc.format_message().split())}", file=sys.stderr)
            sys.exit(2)
        except _ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except typer.Abort:
            print("interrupted", file=sys.stderr)
            sys.exit(130)
        sys.exit(rv if isinstance(rv, int) else 0)

    def get_help_option(self, ctx):
        # A flag that is not given reads None, and Typer (0.29) coerces a non-bool value through Pydantic, whose
        # import is ~0.17 s of `segensemble CMD --help`; the group's own --help is a plain flag: not given is False.
        option = super().get_help_option(ctx)
        if option is not None and getattr(option, "default", False) is None:
            option.default = False
        return option


app = typer.Typer(
    cls=_OneLineErrors,
    name="segensemble",
    help="Fuse image segmentations with consensus clustering and score them with the Berkeley benchmark.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
_state = {"debug": False}


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless n is 1: ``counted(1, "region")`` is '1 region'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


#: What a command notes while it reads its options, said on stderr once it has succeeded (bad input stays one line).
_notes: list = []


def note_dropped_member_params(before, after) -> None:
    """Note that ``--segmenters`` dropped the parameters ``before`` (a recipe) fitted to its own members.

    New members drop them (:meth:`~segensemble.pipeline.recipes.Recipe.with_overrides`), even when only one
    member's parameter changed, and the fusion then runs with the method's defaults: say so rather than let a
    result change unexplained. Said after the command's work (a member's bad parameter is an error line alone).
    Another method alone (``-m``) is not noted: what it leaves are the old method's own parameters.
    """
    gone = [k for k in before.member_params() if k not in after.member_params()]
    if gone and tuple(after.segmenters) != tuple(before.segmenters):
        _notes.append(f"--segmenters replaces the members of recipe {before.name}@{before.version}; the parameters "
                      f"fitted to them ({', '.join(gone)}) are dropped and the method's defaults apply")


def _fail(message: str, code: int):
    err.print(f"error: {message}", markup=False)
    raise typer.Exit(code)


def handle_errors(fn):
    """Map exceptions to one stderr line and the exit codes of the CLI contract."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _notes.clear()
        try:
            done = fn(*args, **kwargs)
        except typer.Exit as exc:
            if exc.exit_code == 1:  # a batch that ran, some images failed: what was noted still applies to the rest
                _say_notes()
            raise
        except (InputError, FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            if _state["debug"]:
                raise
            _fail(first_line(exc) or type(exc).__name__, 2)
        except KeyboardInterrupt:
            err.print("interrupted")
            raise typer.Exit(130)
        except Exception as exc:  # runtime failure
            if _state["debug"]:
                raise
            _fail(f"{describe_exception(exc)} (use --debug for details)", 1)
        _say_notes()
        return done

    return wrapper


def _say_notes() -> None:
    for message in _notes:
        err.print(f"note: {message}", markup=False)


def _version(value: bool):
    if value:
        out.print(f"segensemble {segensemble.__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")] = False,
):
    """Fuse image segmentations with consensus clustering and score them with the Berkeley benchmark."""
    _state["debug"] = debug
    if not debug:  # numpy/OpenCV/scikit-learn warnings are not the user's business; --debug shows them
        import warnings

        warnings.simplefilter("ignore")


def with_progress(label: str, run):
    """Call ``run(progress_callback)`` under a rich progress bar on stderr (terminals only)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True, disable=not err.is_terminal,
    )
    with progress:
        task = progress.add_task("images", total=None)
        return run(lambda done, total: progress.update(task, completed=done, total=total))


def exit_on_failures(failures: dict) -> None:
    """Name every image a batch could not process on stderr and exit 1 (the others' results are kept)."""
    if failures:
        for image_id, msg in failures.items():
            err.print(f"failed: {image_id}: {msg}", markup=False)
        raise typer.Exit(1)


def check_output(path: Path, allowed=(".png", ".npy", ".mat"), name: str = "--output") -> Path:
    """An output file path with an allowed ending, in a location that can be written."""
    if path.suffix.lower() not in allowed:
        endings = f"{', '.join(allowed[:-1])} or {allowed[-1]}" if len(allowed) > 1 else allowed[0]
        raise InputError(f"{name}: expected a file ending in {endings}, got {str(path)!r}")
    return check_output_path(path, name)


def check_jobs(value: int) -> int:
    """The ``--jobs`` callback of the commands that run threads: -1 or a positive number."""
    if value == 0:
        raise typer.BadParameter("expected a positive number of threads, or -1 for one per available core; got 0")
    return value


def parse_params(items: list[str] | None) -> dict:
    """``--param key=value`` options as a dict (values read by :func:`segensemble.pipeline.specs.parse_value`)."""
    params = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise InputError(f"--param: expected key=value, got {item!r}")
        params[key.strip()] = pipeline().specs.parse_value(value.strip())
    return params


class ResultKind(str, Enum):
    """What a result file holds."""

    auto = "auto"
    segs = "segs"
    ucm2 = "ucm2"
    boundary = "boundary"


class What(str, Enum):
    """Which benchmarks to run."""

    all = "all"
    boundary = "boundary"
    region = "region"


class ConfidenceKind(str, Enum):
    """Per-pixel confidence of a soft consensus."""

    max = "max"
    entropy = "entropy"


#: The registered names, listed in --help without importing the registries (about 1.2 s) at every start-up;
#: tests/test_pipeline_structure.py keeps them equal to ``consensus.available()`` and ``segmenters.available()``.
CONSENSUS_METHODS = ("basic", "bestofk", "boem", "borda", "cbpce", "ccpivot", "cspa", "dwh", "eac", "ecbpce", "em",
                     "hbgf", "hgpa", "kcc", "mcla", "merge", "nmf", "sccc", "sdp", "spectral", "vote", "vote_product",
                     "vote_sum")
SEGMENTERS = ("chanvese", "felzenszwalb", "graphcut", "kmeans", "meanshift", "ncut", "quickshift", "slic", "ucm",
              "watershed")

#: Options shared by several commands.
MaxPixels = Annotated[
    int, typer.Option("--max-pixels", help="Largest image, label map or ground truth read (pixels): a guard against "
                                           "decompression bombs, checked from the file header before decoding. "
                                           "Photos of any size are processed at the recipe's working scale.",
                      min=1)
]
Downscale = Annotated[
    bool, typer.Option("--downscale", help="Downscale larger images to --max-pixels (result upscaled back).")
]
IgnoreOrientation = Annotated[
    bool, typer.Option("--ignore-orientation", help="Process the pixel grid as stored, without turning the photo as "
                                                   "its EXIF orientation tag says (the output has the stored shape).")
]
Seed = Annotated[
    int, typer.Option("--seed", help="Random seed of segmenters and consensus (0 to 2**32 - 1).", min=0, max=2**32 - 1)
]
NThresh = Annotated[
    int, typer.Option("--nthresh", help="Thresholds for ucm2 / soft boundary input (segs: one per segmentation).",
                      min=1, max=1000)
]
Jobs = Annotated[int, typer.Option("--jobs", "-j", help="Parallel worker processes.", min=1)]
Params = Annotated[
    Optional[list[str]], typer.Option("--param", "-p", help="Method parameter key=value (repeatable).")
]
