"""``segensemble bench`` (segment, fuse and score a dataset) and ``segensemble report`` (its HTML page)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from segensemble.cli._app import (CONSENSUS_METHODS, Downscale, Jobs, MaxPixels, Params, Seed, app, check_output,
                                  err, exit_on_failures, handle_errors, note_dropped_member_params, out, parse_params,
                                  with_progress)
from segensemble.cli._deferred import batch, pipeline
from segensemble.checks import MAX_PIXELS, check_n_segments


def _print_summary(summary: dict, recipe: str, split: str) -> None:
    """Members vs fused, one row each, and the hierarchy's ODS / OIS."""
    table = Table(title=f"{summary['n_images']} images of {summary['dataset']} ({split}), recipe {recipe}",
                  title_justify="left")
    # A long member spec folds onto a second line; a score never does (folded, "0.5391" read as "0.539" and "1").
    table.add_column("method", overflow="fold", min_width=10)
    for col in ("covering ↑", "PRI ↑", "VOI ↓", "boundary F ↑", "regions"):
        table.add_column(col, no_wrap=True, justify="right")
    for name, s in summary["table"].items():
        table.add_row(name, f"{s['covering']:.4f}", f"{s['pri']:.4f}", f"{s['voi']:.4f}", f"{s['f']:.4f}",
                      f"{s['n_segments']:.1f}")
    # The member specs fold to 10 columns in a narrow terminal; redirected to a file, or where even that leaves too
    # little room for the scores, the table is printed at its natural width (lines longer than the terminal's).
    natural = Measurement.get(out, out.options.update_width(10_000), table).maximum
    if out.is_terminal and natural - max([10, *map(len, summary["table"])]) + 10 <= out.width:
        out.print(table)
    else:
        Console(file=out.file, width=natural, highlight=False, force_terminal=out.is_terminal).print(table)
    h = summary.get("hierarchy")
    if h:
        r, b = h["region"], h["boundary"]
        out.print(f"hierarchy (ODS / OIS): covering {r['covering']['ods']:.4f} / {r['covering']['ois']:.4f} "
                  f"(best {r['covering']['best']:.4f}), PRI {r['pri']['ods']:.4f} / {r['pri']['ois']:.4f}, "
                  f"VOI {r['voi']['ods']:.4f} / {r['voi']['ois']:.4f}, boundary F {b['ods']['f']:.4f} / "
                  f"{b['ois']['f']:.4f}" + _fop(r), markup=False)


def _fop(region: dict) -> str:
    f = region.get("fop")  # summaries written before Fop have none
    return f", Fop {f['ods']:.4f} / {f['ois']:.4f}" if f else ""


_Bsds = Annotated[Optional[Path], typer.Option(
        "--bsds", envvar="SEGENSEMBLE_BSDS_ROOT",
        help="BSDS500-layout dataset root (default: $SEGENSEMBLE_BSDS_ROOT, else the built-in synthetic dataset).")]
_Split = Annotated[str, typer.Option("--split", help="Dataset split.")]
_OutDir = Annotated[Path, typer.Option(
        "--out", help="Output folder (fused PNGs, per-image JSON, summary.json).")]
_Recipe = Annotated[str, typer.Option(
        "--recipe", "-r", help="Built-in recipe (see 'segensemble recipes'; pin a version as NAME@VERSION) or a "
        "recipe file.")]
_Segmenters = Annotated[Optional[str], typer.Option(
        "--segmenters", "-s", help="Override the recipe's segmenters (comma-separated).")]
_Method = Annotated[Optional[str], typer.Option(
    "--method", "-m", help=f"Override the recipe's consensus method: {', '.join(CONSENSUS_METHODS)}.")]
_NSegments = Annotated[Optional[str], typer.Option(
        "--n-segments", "-k", help="Override the number of fused regions, or 'auto'.")]
_Hierarchy = Annotated[bool, typer.Option(
        "--hierarchy/--no-hierarchy", help="Also write and score the sweep over K (ODS/OIS/best).")]
_Scheduler = Annotated[Optional[str], typer.Option(
        "--scheduler", help="Run on a Dask distributed cluster (tcp://HOST:PORT); workers need the same paths.")]
_WorkerTimeout = Annotated[float, typer.Option(
        "--worker-timeout", help="With --scheduler: stop (exit 1, finished images kept) when the cluster has had no "
        "worker for this many seconds.", min=1)]
_Limit = Annotated[Optional[int], typer.Option("--limit", help="Only the first N images.", min=1)]
_Synthetic = Annotated[bool, typer.Option(
        "--synthetic", help="Use the built-in synthetic dataset even if $SEGENSEMBLE_BSDS_ROOT is set.")]


@app.command()
@handle_errors
def bench(
    bsds: _Bsds = None,
    split: _Split = "test",
    out_dir: _OutDir = Path("segensemble-bench"),
    recipe: _Recipe = "default",
    segmenters: _Segmenters = None,
    method: _Method = None,
    n_segments: _NSegments = None,
    param: Params = None,
    hierarchy: _Hierarchy = True,
    scheduler: _Scheduler = None,
    worker_timeout: _WorkerTimeout = 60.0,
    max_pixels: MaxPixels = MAX_PIXELS,
    downscale: Downscale = False,
    jobs: Jobs = 1,
    limit: _Limit = None,
    seed: Seed = 0,
    synthetic: _Synthetic = False,
):
    """Segment, fuse and score every image of a dataset; print members vs fused.

    Without --bsds (and without $SEGENSEMBLE_BSDS_ROOT) it runs on a built-in
    synthetic dataset with known ground truth. Re-running resumes.

    \b
    Examples:
      segensemble bench
      segensemble bench --bsds BSDS500 --split test --out results/ --jobs 2
      segensemble bench --recipe default@3 --limit 20
      segensemble bench --recipe classic -m vote --limit 20
      segensemble bench --bsds /shared/BSDS500 --scheduler tcp://10.0.0.5:8786
    """
    named = pipeline().recipes.load_recipe(recipe)
    chosen = named.with_overrides(
        segmenters=None if segmenters is None else pipeline().specs.parse_segmenter_list(segmenters), method=method,
        n_segments=None if n_segments is None else check_n_segments(n_segments, "--n-segments"),
        params=parse_params(param),
    ).validate()
    note_dropped_member_params(named, chosen)
    bench_layer = batch("bench")
    config = bench_layer.BenchConfig.from_recipe(chosen, random_state=seed, hierarchy=hierarchy, max_pixels=max_pixels,
                                                 downscale=downscale)
    summary = with_progress("bench", lambda cb: bench_layer.run_bench(
        out_dir, bsds=None if synthetic else bsds, split=split, config=config, n_jobs=jobs, limit=limit,
        progress=cb, scheduler=scheduler, worker_timeout=worker_timeout))
    _print_summary(summary, config.recipe, split)
    out.print(f"results: {out_dir / 'summary.json'}", markup=False)
    if summary.get("downscaled"):
        err.print(f"{summary['downscaled']} image(s) above --max-pixels {max_pixels} were segmented downscaled "
                  "(results upscaled back to score)", markup=False)
    exit_on_failures(summary["failures"])


@app.command()
@handle_errors
def report(
    out_dir: Annotated[Path, typer.Argument(help="A 'segensemble bench' output folder.")],
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", help="HTML file (default OUT_DIR/report.html).")] = None,
    limit: Annotated[Optional[int], typer.Option(
        "--limit", help="Per-image sections for the first N images.", min=1)] = None,
):
    """Write a self-contained HTML report of a bench run (images embedded).

    \b
    Example:
      segensemble bench --out results/ && segensemble report results/
    """
    if output is not None:  # an HTML file, never one of the bench files it is made from
        check_output(output, (".html",), "--output")
    path = batch("report").write_report(out_dir, output=output, limit=limit)
    err.print(f"report -> {path}", markup=False)
