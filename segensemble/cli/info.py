"""``segensemble methods``, ``segensemble recipes`` and ``segensemble datasets fetch``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from segensemble.cli._app import app, err, handle_errors, out, with_progress
from segensemble.cli._deferred import datasets, pipeline
from segensemble.errors import InputError


@app.command()
@handle_errors
def methods():
    """List the registered segmenters and consensus methods."""
    layers = pipeline().deferred
    for title, reg in (("segmenters", layers.segmenters()), ("consensus methods", layers.consensus())):
        table = Table(title=title, title_justify="left")
        table.add_column("name")
        table.add_column("description")
        for name, doc in reg.describe().items():
            table.add_row(name, doc)
        out.print(table)


@app.command()
@handle_errors
def recipes(
    name: Annotated[Optional[str], typer.Argument(
        help="A built-in recipe (NAME or NAME@VERSION) or a recipe file: print it in full, as JSON (a valid recipe "
        "file).")] = None,
):
    """List the built-in recipes (every published version), or print one in full.

    \b
    Examples:
      segensemble recipes
      segensemble recipes default > mine.json     # edit, then: segensemble bench --recipe mine.json
      segensemble recipes default@3
      segensemble bench --recipe classic
    """
    if name is not None:
        typer.echo(json.dumps(pipeline().recipes.load_recipe(name).validate().to_dict(), indent=2))
        return
    table = Table(title="built-in recipes ('segensemble recipes NAME[@VERSION]' prints one in full)",
                  title_justify="left")
    for col in ("name", "version", "method", "members", "description"):
        table.add_column(col, no_wrap=col in ("name", "method"))
    for recipe_name, versions in pipeline().recipes.VERSIONS.items():
        for version in sorted(versions, key=int, reverse=True):
            r = versions[version]
            newest = " (newest)" if pipeline().recipes.BUILTIN[recipe_name] is r else ""
            table.add_row(r.name, r.version + newest, r.method, str(len(r.segmenters)), r.description)
    out.print(table)


datasets_app = typer.Typer(help="Datasets: download and verify BSDS500.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")


@datasets_app.command("fetch")
@handle_errors
def datasets_fetch(
    name: Annotated[str, typer.Argument(help="Dataset name: bsds500.")],
    dest: Annotated[Path, typer.Option("--dest", help="Destination folder (receives BSDS500/data/...).")],
    url: Annotated[Optional[str], typer.Option(
        "--url", help="Archive URL (tar/zip; default: the Berkeley archive).")] = None,
    sha256: Annotated[Optional[str], typer.Option(
        "--sha256", help="Expected SHA-256 of the archive, checked while it downloads.")] = None,
    max_bytes: Annotated[int, typer.Option(
        "--max-bytes", help="Largest download accepted; the extracted files may total 4 times as much.",
        min=1)] = 256 * 1024**2,
):
    """Download BSDS500, extract it safely and verify every data file against the shipped SHA-256 manifest.

    \b
    Examples:
      segensemble datasets fetch bsds500 --dest ~/data
      segensemble bench --bsds ~/data/BSDS500 --split test
    """
    if name.lower() != "bsds500":
        raise InputError(f"NAME: expected 'bsds500', got {name!r}")
    fetch = datasets().fetch
    root = with_progress("download", lambda cb: fetch.fetch_bsds500(dest, url=url or fetch.DEFAULT_URL, sha256=sha256,
                                                                     progress=cb, max_bytes=max_bytes))
    err.print(f"BSDS500 verified (1000 files) -> {root}   use: --bsds {root}", markup=False)
