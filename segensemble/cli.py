"""The ``segensemble`` command line: thin over the library.

Bad input prints one line on stderr and exits with code 2; a runtime failure
exits with code 1; ``--debug`` shows tracebacks. Outputs are written atomically.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

import segensemble
from segensemble.errors import InputError, describe, first_line

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


def _fail(message: str, code: int):
    err.print(f"error: {message}", markup=False)
    raise typer.Exit(code)


def _handle_errors(fn):
    """Map exceptions to one stderr line and the exit codes of the CLI contract."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
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
            _fail(f"{describe(exc)} (use --debug for details)", 1)

    return wrapper


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


def _with_progress(label: str, run):
    """Call ``run(progress_callback)`` under a rich progress bar on stderr (terminals only)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True, disable=not err.is_terminal,
    )
    with progress:
        task = progress.add_task("images", total=None)
        return run(lambda done, total: progress.update(task, completed=done, total=total))


def _exit_on_failures(failures: dict) -> None:
    """Name every image a batch could not process on stderr and exit 1 (the others' results are kept)."""
    if failures:
        for image_id, msg in failures.items():
            err.print(f"failed: {image_id}: {msg}", markup=False)
        raise typer.Exit(1)


#: Options shared by the commands that read one image.
MaxPixels = Annotated[
    int, typer.Option("--max-pixels", help="Largest image, label map or ground truth read (pixels; segmenting takes "
                                           "about 1 GB per megapixel). Larger files are refused before decoding.",
                      min=1)
]
Seed = Annotated[
    int, typer.Option("--seed", help="Random seed of segmenters and consensus (0 to 2**32 - 1).", min=0, max=2**32 - 1)
]
NThresh = Annotated[
    int, typer.Option("--nthresh", help="Thresholds for ucm2 / soft boundary input (segs: one per segmentation).",
                      min=1, max=1000)
]
Downscale = Annotated[
    bool, typer.Option("--downscale", help="Downscale larger images to --max-pixels (result upscaled back).")
]


def _read_limited(path, max_pixels: int, downscale: bool):
    """The image within --max-pixels (refused before decoding, or downscaled and announced) and its original shape."""
    from segensemble.pipeline import load_image

    small, original = load_image(path, max_pixels, downscale=downscale)
    if original is not None:
        err.print(f"{path}: downscaled from {original[1]}x{original[0]} to {small.shape[1]}x{small.shape[0]} "
                  f"(--max-pixels {max_pixels}); the result is upscaled back", markup=False)
    return small, original


def _check_output(path: Path, allowed=(".png", ".npy", ".mat"), name: str = "--output") -> Path:
    from segensemble._validation import check_output_path

    if path.suffix.lower() not in allowed:
        endings = f"{', '.join(allowed[:-1])} or {allowed[-1]}" if len(allowed) > 1 else allowed[0]
        raise InputError(f"{name}: expected a file ending in {endings}, got {str(path)!r}")
    return check_output_path(path, name)


def _params(items: list[str] | None) -> dict:
    from segensemble.pipeline import _parse_value

    params = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise InputError(f"--param: expected key=value, got {item!r}")
        params[key.strip()] = _parse_value(value.strip())
    return params


@app.command()
@_handle_errors
def segment(
    image: Annotated[Path, typer.Argument(help="Image to segment.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Label map to write (.png, .npy or .mat).")],
    method: Annotated[str, typer.Option("--method", "-m", help="Segmenter (see 'segensemble methods').")] = "slic",
    n_segments: Annotated[
        Optional[int], typer.Option("--n-segments", "-k", help="Number of regions, for segmenters that take it.", min=1)
    ] = None,
    param: Annotated[
        Optional[list[str]], typer.Option("--param", "-p", help="Segmenter parameter key=value (repeatable).")
    ] = None,
    overlay: Annotated[
        Optional[Path], typer.Option("--overlay", help="Also write the image with the region boundaries drawn on it.")
    ] = None,
    seed: Seed = 0,
    max_pixels: MaxPixels = 3_000_000,
    downscale: Downscale = False,
):
    """Segment one image with one segmenter.

    Examples:
      segensemble segment photo.jpg -m ncut -k 8 -o seg.png --overlay overlay.png
      segensemble segment photo.jpg -m felzenszwalb -p scale=500 -p min_size=80 -o seg.png
    """
    _check_output(output)
    segensemble.pipeline.check_image_file(image, max_pixels, downscale=downscale)  # refuse before heavy imports
    from segensemble import segmenters as registry
    from segensemble.io import write_image, write_labels

    if overlay is not None:
        _check_output(overlay, (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp"), "--overlay")
    segensemble._validation.check_distinct_paths({"--output": output, "--overlay": overlay}, {"IMAGE": image})
    registry.get(method)
    params = _params(param)
    if n_segments is not None:
        params["n_segments"] = n_segments
    from segensemble.pipeline import upscale_labels

    img, original = _read_limited(image, max_pixels, downscale)
    seg = segensemble.segment(img, method, rng=seed, **params)
    labels = seg.labels if original is None else upscale_labels(seg.labels, original)
    write_labels(output, labels)
    if overlay is not None:  # drawn at the size that was segmented
        from segensemble.report import draw_boundaries

        write_image(overlay, draw_boundaries(img, seg.labels))
    err.print(f"{method}: {seg.n_segments} regions -> {output}", markup=False)


@app.command()
@_handle_errors
def fuse(
    paths: Annotated[
        list[Path],
        typer.Argument(help="One image to segment and fuse; with --inputs, the segmentations to fuse.", show_default=False),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Fused label map to write (.png, .npy or .mat).")],
    inputs: Annotated[
        bool,
        typer.Option("--inputs", help="Treat PATHS as label maps (.png/.npy/.mat) made by other tools and fuse them."),
    ] = False,
    segmenters: Annotated[
        Optional[str],
        typer.Option(
            "--segmenters", "-s",
            help="Comma-separated segmenters with optional parameters, e.g. 'slic:n_segments=300,felzenszwalb:scale=500' "
                 "(default: slic,felzenszwalb, or the recipe's).",
        ),
    ] = None,
    method: Annotated[
        Optional[str], typer.Option("--method", "-m", help="Consensus method (default: eac, or the recipe's).")
    ] = None,
    n_segments: Annotated[
        Optional[str], typer.Option("--n-segments", "-k", help="Number of fused regions, or 'auto' (default).")
    ] = None,
    param: Annotated[
        Optional[list[str]], typer.Option("--param", "-p", help="Consensus parameter key=value (repeatable).")
    ] = None,
    recipe: Annotated[
        Optional[str],
        typer.Option("--recipe", "-r", help="Use a recipe (see 'segensemble recipes'): its ensemble, method, "
                                            "parameters and post-processing; -s/-m/-k/-p override it."),
    ] = None,
    image: Annotated[
        Optional[Path], typer.Option("--image", help="With --inputs: the image, for methods that use image features.")
    ] = None,
    seed: Seed = 0,
    confidence: Annotated[
        Optional[Path],
        typer.Option(
            "--confidence",
            help="Also write a per-pixel confidence map (.png, 0-255 gray, or .npy, float) - soft methods only "
            "(see 'segensemble methods').",
        ),
    ] = None,
    confidence_kind: Annotated[
        str, typer.Option("--confidence-kind", help="Confidence: 'max' membership or 'entropy' (1 - normalised entropy).")
    ] = "max",
    explain: Annotated[
        bool,
        typer.Option("--explain", help="Print the top image features of every fused region (ecbpce, cbpce)."),
    ] = False,
    agree: Annotated[
        bool,
        typer.Option("--agree", help="Make the segmentations agree first (Clustering Agreement Process, visual words)."),
    ] = False,
    words: Annotated[int, typer.Option("--words", help="Visual words for --agree.", min=2)] = 32,
    max_pixels: MaxPixels = 3_000_000,
    downscale: Downscale = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Diagnostics on stderr: atoms, ensemble stability (before/after --agree).")
    ] = False,
):
    """Fuse several segmentations of one image into one label map.

    Examples:
      segensemble fuse photo.jpg -s slic,felzenszwalb -m eac -k auto -o fused.png
      segensemble fuse --inputs seg1.png seg2.png seg3.png -m eac -o fused.png
      segensemble fuse photo.jpg -m borda -k 6 -o fused.png --confidence conf.png
      segensemble fuse photo.jpg -m ecbpce -k 5 -o fused.png --explain
      segensemble fuse photo.jpg -m sccc -k 6 -o fused.png --agree --verbose
      segensemble fuse photo.jpg --recipe default -o fused.png
    """
    _check_output(output)
    # sizes from the headers first: a decompression bomb is refused before anything heavy is imported or read
    if not inputs and len(paths) == 1:
        segensemble.pipeline.check_image_file(paths[0], max_pixels, downscale=downscale)
    elif inputs:
        for p in paths:
            segensemble.io.check_label_file(p, max_pixels)
    segensemble._validation.check_distinct_paths(
        {"--output": output, "--confidence": confidence},
        {**{f"PATHS[{i}]": p for i, p in enumerate(paths)}, "--image": image},
    )
    from segensemble import consensus
    from segensemble.io import read_image, read_segmentations, write_labels
    from segensemble.pipeline import parse_segmenter_list, run_segmenters

    post = {"connected": False, "min_size": 0}
    if recipe is not None:
        from segensemble.recipes import load_recipe

        chosen = load_recipe(recipe).with_overrides(
            segmenters=None if segmenters is None else parse_segmenter_list(segmenters), method=method,
            n_segments=n_segments, params=_params(param),
        ).validate()
        segmenters, method, n_segments = ",".join(chosen.segmenters), chosen.method, str(chosen.n_segments)
        recipe_params, post = dict(chosen.params), dict(chosen.postprocess)
    else:
        segmenters, method, n_segments = segmenters or "slic,felzenszwalb", method or "eac", n_segments or "auto"
        recipe_params = _params(param)
    cls = consensus.get(method)
    if confidence is not None:
        _check_output(confidence, (".png", ".npy"), "--confidence")
        if not cls.capabilities.soft:
            raise InputError(
                f"--confidence: method {method!r} gives no memberships; use one of "
                f"{', '.join(consensus.soft_methods())}"
            )
        if confidence_kind not in ("max", "entropy"):
            raise InputError(f"--confidence-kind: expected 'max' or 'entropy', got {confidence_kind!r}")
    if explain and not cls.capabilities.feature_weights:
        explainers = [name for name in consensus.available() if consensus.get(name).capabilities.feature_weights]
        raise InputError(f"--explain: method {method!r} gives no feature weights; use one of {', '.join(explainers)}")
    k = segensemble._validation.check_n_segments(n_segments, "--n-segments")
    params = recipe_params
    img = None
    original = None
    if inputs:
        segs = []
        for p in paths:
            segs.extend(read_segmentations(p, max_pixels=max_pixels))
        shape = segs[0].shape
        for p, s in zip(paths, segs):
            if s.shape != shape:
                raise InputError(f"{p}: segmentation shape {s.shape} differs from {paths[0]}'s {shape}")
        if image is not None:
            img = read_image(image, max_pixels=max_pixels)
            if img.shape[:2] != shape:
                raise InputError(f"--image: {image} has shape {img.shape[:2]}, the segmentations {shape}")
        members = segs
    else:
        if len(paths) != 1:
            raise InputError(f"PATHS: expected one image (or use --inputs to fuse segmentations), got {len(paths)} paths")
        img, original = _read_limited(paths[0], max_pixels, downscale)
        members = run_segmenters(img, parse_segmenter_list(segmenters), rng=seed)
    if agree and img is None:
        raise InputError("--agree: needs the image for its visual words (with --inputs, give --image)")
    cap = None
    if agree:
        from segensemble.consensus.agreement import CAP

        cap = CAP(n_words=words, random_state=seed)
    labels, est, ens = segensemble.fuse(
        members, method, k, image=img, random_state=seed, return_estimator=True, agree=cap or False, **params
    )
    if verbose:
        from segensemble.evaluation import ensemble_stability

        before = ensemble_stability(segensemble.Ensemble.from_segmentations(members))
        err.print(f"{len(members)} members, {ens.n_objects} atoms; ensemble stability (mean pairwise Jaccard) "
                  f"{before:.4f}", markup=False)
        if cap is not None:
            h = cap.objective_history_
            err.print(f"after --agree: stability {ensemble_stability(ens):.4f}; agreement objective "
                      f"{h[0]:.4f} -> {h[-1]:.4f} ({cap.n_moves_} moves, {cap.n_rounds} rounds)", markup=False)
    conf = None if confidence is None else segensemble.confidence_map(est, ens, confidence_kind)
    if post.get("connected") or post.get("min_size"):
        from segensemble.postprocess import postprocess

        if post.get("min_size") and img is None:
            post = {**post, "min_size": 0}  # --inputs without --image: no colours to merge by
        labels = postprocess(labels, img, **post)
    if not inputs and original is not None:
        from segensemble.pipeline import upscale_labels

        labels = upscale_labels(labels, original)
        if conf is not None:
            import cv2

            conf = cv2.resize(conf, (original[1], original[0]), interpolation=cv2.INTER_LINEAR)
    write_labels(output, labels)
    err.print(
        f"fused {len(members)} segmentations ({ens.n_objects} atoms) with {method} into "
        f"{int(labels.max()) + 1} regions -> {output}",
        markup=False,
    )
    if explain:
        _print_explanation(est, labels)
    if conf is not None:
        import numpy as np

        from segensemble.io import write_array, write_image

        if confidence.suffix.lower() == ".npy":
            write_array(confidence, conf.astype(np.float32))
        else:
            write_image(confidence, conf)
        err.print(
            f"confidence ({confidence_kind}): mean {conf.mean():.3f}, {np.mean(conf < 0.5):.1%} of pixels below 0.5 "
            f"-> {confidence}",
            markup=False,
        )


def _print_explanation(est, labels) -> None:
    """A table: every fused region, its share of the pixels and its top features (Delta*)."""
    import numpy as np

    table = Table(title="fused regions and the features that define them (feature weights)")
    for col in ("region", "pixels", "top features"):
        table.add_column(col)
    counts = np.bincount(labels.ravel(), minlength=est.n_clusters_)
    for c, feats in enumerate(est.top_features(3)):
        table.add_row(str(c), f"{counts[c] / labels.size:.1%}", ", ".join(f"{name} {w:.2f}" for name, w in feats))
    out.print(table)


@app.command()
@_handle_errors
def evaluate(
    seg: Annotated[
        Path,
        typer.Argument(help="Result: label map (.png/.npy), BSDS .mat with 'segs' or 'ucm2', or a soft boundary PNG."),
    ],
    gt: Annotated[Path, typer.Option("--gt", help="BSDS ground-truth .mat file.")],
    nthresh: NThresh = 99,
    kind: Annotated[
        str, typer.Option("--kind", help="Input kind: auto, segs, ucm2 or boundary (soft boundary map).")
    ] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    max_pixels: MaxPixels = 3_000_000,
):
    """Score one result against human ground truth: boundary P/R/F, covering, PRI, VOI.

    Several thresholds (a 'segs' cell, a ucm2, a soft boundary map) give one
    row per threshold.

    Examples:
      segensemble evaluate fused.png --gt groundTruth/val/3096.mat
      segensemble evaluate 3096_ucm2.mat --gt groundTruth/val/3096.mat --nthresh 99 --json
    """
    from segensemble.evaluation.benchmark import KINDS, evaluate_image, load_result
    from segensemble.io import read_ground_truth

    if kind not in KINDS:
        raise InputError(f"--kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    result = load_result(seg, kind, max_pixels=max_pixels)
    truth = read_ground_truth(gt, max_pixels=max_pixels)
    shape = truth.segmentations[0].shape
    if result.shape != shape:
        raise InputError(f"{seg}: shape {result.shape} differs from the ground truth {gt} shape {shape}")
    ev = evaluate_image(result, truth, nthresh=nthresh, region=result.kind != "boundary")
    r = ev.region
    rows = [{"threshold": float(t), **ev.scores(k)} for k, t in enumerate(ev.boundary.thresholds)]
    if as_json:
        out.print(json.dumps(rows if len(rows) > 1 else rows[0], indent=1), markup=False)
        return
    cols = ["threshold", "recall", "precision", "f"] + (["covering", "pri", "voi"] if r is not None else [])
    table = Table(*["t", "R", "P", "F", "covering", "PRI", "VOI"][: len(cols)])
    for row in rows:
        table.add_row(*[f"{row[c]:.4g}" if c == "threshold" else f"{row[c]:.4f}" for c in cols])
    out.print(table)


@app.command()
@_handle_errors
def score(
    results_dir: Annotated[Path, typer.Argument(help="Folder of results: <id>.mat (segs/ucm2), <id>.png or <id>.npy.")],
    gt: Annotated[Path, typer.Option("--gt", help="Folder of BSDS ground truth <id>.mat; its ids are scored.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder for the official eval_*.txt files and more.")],
    nthresh: NThresh = 99,
    what: Annotated[str, typer.Option("--what", help="Benchmarks to run: all, boundary or region.")] = "all",
    kind: Annotated[str, typer.Option("--kind", help="Input kind: auto, segs, ucm2 or boundary.")] = "auto",
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Parallel worker processes.", min=1)] = 1,
    plot: Annotated[
        Optional[Path], typer.Option("--plot", help="Write the precision/recall figure (needs the 'plot' extra).")
    ] = None,
    subset: Annotated[
        bool, typer.Option("--subset", help="Score only the ids that have a result file (else missing ones fail).")
    ] = False,
    max_pixels: MaxPixels = 3_000_000,
):
    """Berkeley benchmark of a folder of results: the official output files.

    Writes eval_bdry.txt, eval_bdry_img.txt, eval_bdry_thr.txt, eval_cover.txt,
    eval_cover_img.txt, eval_cover_th.txt, eval_RI_VOI.txt, eval_RI_VOI_thr.txt
    (same columns as the official benchmark), summary.json and per_image.csv.
    Per-image results are kept; a re-run resumes. Failed images are reported at
    the end (exit code 1), the others are still scored.

    Example:
      segensemble score results/ --gt BSDS500/data/groundTruth/test --out eval/ --nthresh 99 --jobs 2 --plot pr.png
    """
    from segensemble.score import ScoreConfig, score_results

    if plot is not None and plot.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise InputError(f"--plot: expected a .png, .pdf or .svg file, got {str(plot)!r}")
    config = ScoreConfig(nthresh=nthresh, what=what, kind=kind)
    summary = _with_progress(
        "score",
        lambda cb: score_results(results_dir, gt, out_dir, config=config, jobs=jobs, subset=subset, progress=cb,
                                 max_pixels=max_pixels),
    )
    table = Table(title=f"{summary['n_images']} images", title_justify="left")
    for col in ("measure", "ODS", "OIS", "AP / best", "ODS threshold"):
        table.add_column(col)
    if "boundary" in summary:
        b = summary["boundary"]
        table.add_row("boundary F", f"{b['ods']['f']:.4f}", f"{b['ois']['f']:.4f}", f"{b['ap']:.4f}",
                      f"{b['ods']['threshold']:.4g}")
    if "region" in summary:
        rg = summary["region"]
        table.add_row("covering", f"{rg['covering']['ods']:.4f}", f"{rg['covering']['ois']:.4f}",
                      f"{rg['covering']['best']:.4f}", f"{rg['covering']['ods_threshold']:.4g}")
        table.add_row("PRI", f"{rg['pri']['ods']:.4f}", f"{rg['pri']['ois']:.4f}", "", f"{rg['pri']['ods_threshold']:.4g}")
        table.add_row("VOI", f"{rg['voi']['ods']:.4f}", f"{rg['voi']['ois']:.4f}", "", f"{rg['voi']['ods_threshold']:.4g}")
    out.print(table)
    out.print(f"results: {out_dir}", markup=False)
    if plot is not None and "pr_curve" in summary:
        from segensemble.evaluation.plot import plot_pr

        c = summary["pr_curve"]
        plot_pr({results_dir.name or "results": (c["recall"], c["precision"], summary["boundary"]["ods"]["f"])}, plot)
    _exit_on_failures(summary["failures"])


@app.command()
@_handle_errors
def methods():
    """List the registered segmenters and consensus methods."""
    from segensemble import consensus, segmenters

    for title, reg in (("segmenters", segmenters), ("consensus methods", consensus)):
        table = Table(title=title, title_justify="left")
        table.add_column("name")
        table.add_column("description")
        for name, doc in reg.describe().items():
            table.add_row(name, doc)
        out.print(table)


@app.command()
@_handle_errors
def bench(
    bsds: Annotated[
        Optional[Path],
        typer.Option(
            "--bsds", envvar="SEGENSEMBLE_BSDS_ROOT",
            help="BSDS500-layout dataset root (default: $SEGENSEMBLE_BSDS_ROOT, else the built-in synthetic dataset).",
        ),
    ] = None,
    split: Annotated[str, typer.Option("--split", help="Dataset split.")] = "test",
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder (fused PNGs, per-image JSON, summary.json).")] = Path(
        "segensemble-bench"
    ),
    recipe: Annotated[
        str, typer.Option("--recipe", "-r", help="Built-in recipe name (see 'segensemble recipes') or a recipe file.")
    ] = "default",
    segmenters: Annotated[
        Optional[str], typer.Option("--segmenters", "-s", help="Override the recipe's segmenters (comma-separated).")
    ] = None,
    method: Annotated[Optional[str], typer.Option("--method", "-m", help="Override the recipe's consensus method.")] = None,
    n_segments: Annotated[
        Optional[str], typer.Option("--n-segments", "-k", help="Override the number of fused regions, or 'auto'.")
    ] = None,
    param: Annotated[
        Optional[list[str]], typer.Option("--param", "-p", help="Consensus parameter key=value (repeatable).")
    ] = None,
    hierarchy: Annotated[
        bool, typer.Option("--hierarchy/--no-hierarchy", help="Also write and score the sweep over K (ODS/OIS/best).")
    ] = True,
    scheduler: Annotated[
        Optional[str],
        typer.Option("--scheduler", help="Run on a Dask distributed cluster (tcp://HOST:PORT); workers need the same paths."),
    ] = None,
    max_pixels: MaxPixels = 3_000_000,
    downscale: Downscale = False,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Parallel worker processes.", min=1)] = 1,
    limit: Annotated[Optional[int], typer.Option("--limit", help="Only the first N images.", min=1)] = None,
    seed: Seed = 0,
    synthetic: Annotated[
        bool, typer.Option("--synthetic", help="Use the built-in synthetic dataset even if $SEGENSEMBLE_BSDS_ROOT is set.")
    ] = False,
):
    """Segment, fuse and score every image of a dataset; print members vs fused.

    Without --bsds (and without $SEGENSEMBLE_BSDS_ROOT) it runs on a built-in
    synthetic dataset with known ground truth. Re-running resumes.

    Examples:
      segensemble bench
      segensemble bench --bsds BSDS500 --split test --out results/ --jobs 2
      segensemble bench --recipe classic -m vote --limit 20
      segensemble bench --bsds /shared/BSDS500 --scheduler tcp://10.0.0.5:8786
    """
    from segensemble.bench import BenchConfig, run_bench
    from segensemble.pipeline import parse_segmenter_list
    from segensemble.recipes import load_recipe

    chosen = load_recipe(recipe).with_overrides(
        segmenters=None if segmenters is None else parse_segmenter_list(segmenters),
        method=method,
        n_segments=None if n_segments is None else segensemble._validation.check_n_segments(n_segments, "--n-segments"),
        params=_params(param),
    ).validate()
    config = BenchConfig.from_recipe(chosen, seed=seed, hierarchy=hierarchy, max_pixels=max_pixels,
                                     downscale=downscale)
    summary = _with_progress(
        "bench",
        lambda cb: run_bench(
            out_dir, bsds=None if synthetic else bsds, split=split, config=config, jobs=jobs, limit=limit, progress=cb,
            scheduler=scheduler,
        ),
    )
    table = Table(title=f"{summary['n_images']} images of {summary['dataset']} ({split}), recipe {config.recipe}",
                  title_justify="left")
    table.add_column("method", no_wrap=True)  # member specs stay on one line; the score columns are narrow
    for col in ("covering ↑", "PRI ↑", "VOI ↓", "boundary F ↑", "regions"):
        table.add_column(col, overflow="fold", justify="right")
    for name, s in summary["table"].items():
        table.add_row(name, f"{s['covering']:.4f}", f"{s['pri']:.4f}", f"{s['voi']:.4f}", f"{s['f']:.4f}",
                      f"{s['n_segments']:.1f}")
    out.print(table)
    h = summary.get("hierarchy")
    if h:
        r, b = h["region"], h["boundary"]
        out.print(f"hierarchy (ODS / OIS): covering {r['covering']['ods']:.4f} / {r['covering']['ois']:.4f} "
                  f"(best {r['covering']['best']:.4f}), PRI {r['pri']['ods']:.4f} / {r['pri']['ois']:.4f}, "
                  f"VOI {r['voi']['ods']:.4f} / {r['voi']['ois']:.4f}, boundary F {b['ods']['f']:.4f} / "
                  f"{b['ois']['f']:.4f}", markup=False)
    out.print(f"results: {out_dir / 'summary.json'}", markup=False)
    if summary.get("downscaled"):
        err.print(f"{summary['downscaled']} image(s) above --max-pixels {max_pixels} were segmented downscaled "
                  "(results upscaled back to score)", markup=False)
    _exit_on_failures(summary["failures"])


@app.command()
@_handle_errors
def report(
    out_dir: Annotated[Path, typer.Argument(help="A 'segensemble bench' output folder.")],
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="HTML file (default OUT_DIR/report.html).")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", help="Per-image sections for the first N images.", min=1)] = None,
):
    """Write a self-contained HTML report of a bench run (images embedded).

    Examples:
      segensemble bench --out results/ && segensemble report results/
    """
    from segensemble.report import write_report

    path = write_report(out_dir, output=output, limit=limit)
    err.print(f"report -> {path}", markup=False)


datasets_app = typer.Typer(help="Datasets: download and verify BSDS500.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")


@datasets_app.command("fetch")
@_handle_errors
def datasets_fetch(
    name: Annotated[str, typer.Argument(help="Dataset name: bsds500.")],
    dest: Annotated[Path, typer.Option("--dest", help="Destination folder (receives BSDS500/data/...).")],
    url: Annotated[Optional[str], typer.Option("--url", help="Archive URL (tar/zip; default: the Berkeley archive).")] = None,
    sha256: Annotated[
        Optional[str], typer.Option("--sha256", help="Expected SHA-256 of the archive, checked before extraction.")
    ] = None,
    max_bytes: Annotated[
        int, typer.Option("--max-bytes", help="Largest download accepted; the extracted files may total 4 times as "
                                              "much.", min=1)
    ] = 256 * 1024**2,
):
    """Download BSDS500, extract it safely and verify every data file against the shipped SHA-256 manifest.

    Examples:
      segensemble datasets fetch bsds500 --dest ~/data
      segensemble bench --bsds ~/data/BSDS500 --split test
    """
    from segensemble.datasets.fetch import DEFAULT_URL, fetch_bsds500

    if name.lower() != "bsds500":
        raise InputError(f"NAME: expected 'bsds500', got {name!r}")
    root = _with_progress("download", lambda cb: fetch_bsds500(dest, url=url or DEFAULT_URL, sha256=sha256,
                                                                progress=cb, max_bytes=max_bytes))
    err.print(f"BSDS500 verified (1000 files) -> {root}   use: --bsds {root}", markup=False)


@app.command()
@_handle_errors
def recipes(
    name: Annotated[
        Optional[str],
        typer.Argument(help="A built-in recipe or a recipe file: print it in full, as JSON (a valid recipe file)."),
    ] = None,
):
    """List the built-in recipes, or print one in full.

    Examples:
      segensemble recipes
      segensemble recipes default > mine.json     # edit, then: segensemble bench --recipe mine.json
      segensemble bench --recipe classic
    """
    import json

    from segensemble.recipes import BUILTIN, load_recipe

    if name is not None:
        typer.echo(json.dumps(load_recipe(name).validate().to_dict(), indent=2))
        return
    table = Table(title="built-in recipes ('segensemble recipes NAME' prints one in full)", title_justify="left")
    table.add_column("name", no_wrap=True)
    table.add_column("version")
    table.add_column("method", no_wrap=True)
    table.add_column("members")
    table.add_column("description")
    for r in BUILTIN.values():
        table.add_row(r.name, r.version, r.method, str(len(r.segmenters)), r.description)
    out.print(table)


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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
