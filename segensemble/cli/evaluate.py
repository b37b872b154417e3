"""``segensemble evaluate`` (one result) and ``segensemble score`` (a folder of results): the Berkeley benchmark."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from segensemble.checks import MAX_PIXELS
from segensemble.cli._app import (Jobs, MaxPixels, NThresh, ResultKind, What, app, counted, exit_on_failures,
                                  handle_errors, out, with_progress)
from segensemble.cli._deferred import batch, evaluation, io
from segensemble.errors import InputError

MaxDist = Annotated[float, typer.Option(
    "--max-dist", help="Matching radius as a fraction of the image diagonal (BSDS 0.0075; NYUDv2 papers 0.011).")]
Thin = Annotated[bool, typer.Option("--thin/--no-thin", help="Thin machine boundaries first (--no-thin: maps "
                                                             "already one pixel wide).")]
Nms = Annotated[bool, typer.Option("--nms", help="Non-maximum suppression of soft boundary maps first (edge "
                                                 "detector outputs: HED, RCF, SE, ...).")]


@app.command()
@handle_errors
def evaluate(
    seg: Annotated[Path, typer.Argument(
        help="Result: label map (.png/.npy), BSDS .mat with 'segs' or 'ucm2', or a soft boundary PNG.")],
    gt: Annotated[Path, typer.Option("--gt", help="Ground truth: BSDS .mat, an edge PNG, or a folder of edge PNGs "
                                                 "(one per annotator; boundaries only).")],
    nthresh: NThresh = 99,
    kind: Annotated[ResultKind, typer.Option("--kind", help="What the result file holds.")] = ResultKind.auto,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    summary: Annotated[bool, typer.Option("--summary", help="The image's own curve summary instead of one row per "
                                          "threshold: ODS/OIS/AP/R50, region ODS/OIS, Fop (as 'score').")] = False,
    max_dist: MaxDist = 0.0075,
    thin: Thin = True,
    nms: Nms = False,
    max_pixels: MaxPixels = MAX_PIXELS,
):
    """Score one result against human ground truth: boundary P/R/F, covering, PRI, VOI, GCE, LCE, BDE.

    Several thresholds (a 'segs' cell, a ucm2, a soft boundary map) give one
    row per threshold.

    \b
    Examples:
      segensemble evaluate fused.png --gt groundTruth/val/3096.mat
      segensemble evaluate 3096_ucm2.mat --gt groundTruth/val/3096.mat --nthresh 99 --json
      segensemble evaluate hed/3096.png --kind boundary --nms --gt groundTruth/val/3096.mat
      segensemble evaluate 3096_ucm2.mat --gt groundTruth/val/3096.mat --summary --json
    """
    kind = ResultKind.boundary if nms and kind is ResultKind.auto else kind  # --nms: the result is a soft map
    result = evaluation().benchmark.load_result(seg, kind.value, max_pixels=max_pixels)
    truth = io().read_truth(gt, max_pixels=max_pixels)
    if result.shape != truth.shape:
        raise InputError(f"{seg}: shape {result.shape} differs from the ground truth {gt} shape {truth.shape}")
    _check_max_dist(max_dist)
    ev = evaluation().benchmark.evaluate_image(result, truth, nthresh=nthresh, max_dist=max_dist, thin=thin, nms=nms,
                                               region=result.kind != "boundary" and bool(truth.segmentations))
    if summary:
        _print_image_summary(ev, as_json)
        return
    rows = [{"threshold": float(t), **ev.scores(k)} for k, t in enumerate(ev.boundary.thresholds)]
    if as_json:
        out.print(json.dumps(rows if len(rows) > 1 else rows[0], indent=1), markup=False)
        return
    cols = ["threshold", "recall", "precision", "f"]
    cols += ["covering", "pri", "voi", "gce", "lce", "bde", "fop"] if ev.region is not None else []
    table = Table()
    for name in ["t", "R", "P", "F", "covering", "PRI", "VOI", "GCE", "LCE", "BDE", "Fop"][: len(cols)]:
        table.add_column(name, no_wrap=True, min_width=max(7, len(name)))  # 11 columns: never cut to "0.64…"
    for row in rows:
        table.add_row(*[f"{row[c]:.4g}" if c == "threshold" else f"{row[c]:.4f}" for c in cols])
    out.print(table)


def _print_image_summary(ev, as_json: bool) -> None:
    """One image scored as a dataset of one: the summary ``score`` writes, as JSON or its table."""
    agg = evaluation().aggregate
    s = {"n_images": 1, "boundary": agg.collect_boundaries([ev.boundary]).to_dict()}
    if ev.region is not None:
        s["region"] = agg.collect_regions([ev.region]).to_dict()
    if as_json:
        out.print(json.dumps(s, indent=1), markup=False)
    else:
        print_scores(s)


def _check_max_dist(max_dist: float) -> None:
    evaluation().correspond.check_max_dist(max_dist, "--max-dist")


def print_scores(summary: dict) -> None:
    """The dataset table of a ``score`` summary: ODS / OIS / AP or best, per measure."""
    table = Table(title=counted(summary["n_images"], "image"), title_justify="left")
    for col in ("measure", "ODS", "OIS", "AP / best", "ODS threshold"):
        table.add_column(col)
    if "boundary" in summary:
        b = summary["boundary"]
        table.add_row("boundary F", f"{b['ods']['f']:.4f}", f"{b['ois']['f']:.4f}", f"{b['ap']:.4f}",
                      f"{b['ods']['threshold']:.4g}")
        if b.get("r50") is not None:
            table.add_row("boundary R50", "", "", f"{b['r50']:.4f}", "")
    if "region" in summary:
        rg = summary["region"]
        table.add_row("covering", f"{rg['covering']['ods']:.4f}", f"{rg['covering']['ois']:.4f}",
                      f"{rg['covering']['best']:.4f}", f"{rg['covering']['ods_threshold']:.4g}")
        for key, name in (("pri", "PRI"), ("voi", "VOI"), ("fop", "Fop"), ("gce", "GCE"), ("lce", "LCE"),
                          ("bde", "BDE (px)")):
            if key in rg:
                m = rg[key]
                table.add_row(name, f"{m['ods']:.4f}", f"{m['ois']:.4f}", "", f"{m['ods_threshold']:.4g}")
    out.print(table)


@app.command()
@handle_errors
def score(
    results_dir: Annotated[Path, typer.Argument(help="Folder of results: <id>.mat (segs/ucm2), <id>.png or <id>.npy.")],
    gt: Annotated[Path, typer.Option("--gt", help="Folder of ground truth, its ids are scored: BSDS <id>.mat, edge "
                                                 "maps <id>.png, or folders <id>/ of edge maps (one per annotator).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder for the official eval_*.txt files and more.")],
    nthresh: NThresh = 99,
    what: Annotated[What, typer.Option("--what", help="Benchmarks to run (soft boundary maps: the boundary "
                                                      "benchmark only).")] = What.all,
    kind: Annotated[ResultKind, typer.Option("--kind", help="What the result files hold.")] = ResultKind.auto,
    jobs: Jobs = 1,
    plot: Annotated[Optional[Path], typer.Option(
        "--plot", help="Write the precision/recall figure (needs the 'plot' extra).")] = None,
    subset: Annotated[bool, typer.Option(
        "--subset", help="Score only the ids that have a result file (else missing ones fail).")] = False,
    max_dist: MaxDist = 0.0075,
    thin: Thin = True,
    nms: Nms = False,
    max_pixels: MaxPixels = MAX_PIXELS,
):
    """Berkeley benchmark of a folder of results: the official output files.

    Writes eval_bdry.txt, eval_bdry_img.txt, eval_bdry_thr.txt, eval_cover.txt,
    eval_cover_img.txt, eval_cover_th.txt, eval_RI_VOI.txt, eval_RI_VOI_thr.txt
    (same columns as the official benchmark), summary.json and per_image.csv.
    Per-image results are kept; a re-run resumes. Failed images are reported at
    the end (exit code 1), the others are still scored.

    \b
    Examples:
      segensemble score results/ --gt BSDS500/data/groundTruth/test --out eval/ --nthresh 99 --jobs 2 --plot pr.png
      segensemble score edges/ --gt BSDS500/data/groundTruth/val --kind boundary --nms --out eval/
      segensemble score edges/ --gt NYUD/test/edges --kind boundary --nms --max-dist 0.011 --out eval/
    """
    if plot is not None and plot.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise InputError(f"--plot: expected a .png, .pdf or .svg file, got {str(plot)!r}")
    if plot is not None and what is What.region:
        raise InputError("--plot: draws the boundary benchmark's precision/recall curve; not with --what region")
    _check_max_dist(max_dist)
    kind = ResultKind.boundary if nms and kind is ResultKind.auto else kind  # --nms: the results are soft maps
    if kind.value == "boundary" and what is What.all:  # soft maps have no regions: 'all' is the boundary benchmark
        what = What.boundary
    elif kind.value == "boundary" and what is What.region:
        raise InputError("--what: soft boundary maps (--kind boundary) have no regions; use --what boundary")
    scoring = batch("score")
    config = scoring.ScoreConfig(nthresh=nthresh, what=what.value, kind=kind.value, max_dist=max_dist, thin=thin,
                                 nms=nms)
    summary = with_progress("score", lambda cb: scoring.score_results(
        results_dir, gt, out_dir, config=config, n_jobs=jobs, subset=subset, progress=cb, max_pixels=max_pixels))
    print_scores(summary)
    out.print(f"results: {out_dir}", markup=False)
    if plot is not None and "pr_curve" in summary:
        c = summary["pr_curve"]
        curve = (c["recall"], c["precision"], summary["boundary"]["ods"]["f"])
        evaluation().plot.plot_pr({results_dir.name or "results": curve}, plot)
    exit_on_failures(summary["failures"])


class FigureFormat(str, Enum):
    png = "png"
    svg = "svg"
    pdf = "pdf"


@app.command()
@handle_errors
def compare(
    results: Annotated[list[Path], typer.Argument(help="'segensemble score' or 'segensemble bench' output folders.")],
    labels: Annotated[Optional[list[str]], typer.Option(
        "--labels", "-l", help="Names, one per folder, comma-separated or repeated (default: folder names).")] = None,
    out_dir: Annotated[Optional[Path], typer.Option(
        "--out", help="Write compare.png (the PR figure), compare.csv, compare.md and compare.html here.")] = None,
    figure: Annotated[FigureFormat, typer.Option("--figure", help="Figure format.")] = FigureFormat.png,
):
    """Compare benchmarked methods: PR curves on iso-F lines and a table of ODS/OIS/AP and region scores.

    \b
    Examples:
      segensemble compare eval_se/ eval_hed/ results_v5/ --labels SE,HED,segensemble --out cmp/
      segensemble compare eval_*/ --out cmp/ --figure svg
    """
    names = [n.strip() for item in labels for n in item.split(",")] if labels else None
    rows = batch("compare").compare_results(results, labels=names, out_dir=out_dir, figure=figure.value)
    cols = batch("compare").present_columns(rows)
    names = list(rows)
    while names:  # as many methods a table as the terminal can show: never a column silently dropped
        room, part = max(out.width, 40) - 16, []
        while names and (not part or room >= max(len(names[0]), 7) + 3):
            room -= max(len(names[0]), 7) + 3
            part.append(names.pop(0))
        table = Table(title=f"{len(rows)} methods (↑ higher is better, ↓ lower)", title_justify="left")
        table.add_column("measure", no_wrap=True)
        for name in part:
            table.add_column(name, no_wrap=True, min_width=7, overflow="fold")
        for key, header, up in cols:
            table.add_row(f"{header} {'↑' if up else '↓'}", *(f"{rows[n][key]:.4f}" if key in rows[n] else ""
                                                               for n in part))
        out.print(table)
    if out_dir is not None:
        out.print(f"figure and tables: {out_dir}", markup=False)
