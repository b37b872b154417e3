"""``segensemble fuse``: fuse several segmentations of one image (a thin caller of the recipe runner)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

import segensemble
from segensemble.cli._app import (CONSENSUS_METHODS, ConfidenceKind, Downscale, IgnoreOrientation, MaxPixels, Params,
                                  Seed, app, check_jobs, check_output, counted, err, exit_on_failures, handle_errors,
                                  note_dropped_member_params, out, parse_params, with_progress)
from segensemble.cli._deferred import batch, evaluation, io, pipeline
from segensemble.cli.segment import IMAGE_OUTPUTS, announce_downscale
from segensemble.errors import InputError
from segensemble.checks import MAX_PIXELS, check_distinct_paths, check_n_segments

#: The recipe ``fuse`` applies when no ``--recipe`` is given (its newest version): -s/-m/-k/-p override it.
DEFAULT_RECIPE = "default"


def _recipe(recipe, segmenters, method, n_segments, param, inputs):
    """The recipe to apply: the named or file recipe (default: the default recipe) with the command-line overrides.

    With ``--inputs`` the members are not the recipe's segmenters, so the parameters fitted to those are dropped.
    """
    specs = None if segmenters is None else pipeline().specs.parse_segmenter_list(segmenters)
    if n_segments is not None:
        check_n_segments(n_segments, "--n-segments")
    named = pipeline().recipes.load_recipe(recipe or DEFAULT_RECIPE)
    chosen = named.without_member_params() if inputs else named  # other tools' segmentations: expected to drop them
    chosen = chosen.with_overrides(segmenters=specs, method=method, n_segments=n_segments,
                                   params=parse_params(param)).validate()  # validate() checks a file's n_segments
    if not inputs:
        note_dropped_member_params(named, chosen)
    return chosen


def _check_options(chosen, confidence, explain) -> None:
    consensus = pipeline().deferred.consensus()
    cls = consensus.get(chosen.method)
    if confidence is not None:
        check_output(confidence, (".png", ".npy"), "--confidence")
        if not cls.capabilities.soft:
            raise InputError(f"--confidence: method {chosen.method!r} gives no memberships; use one of "
                             f"{', '.join(consensus.soft_methods())}")
    if explain and not cls.capabilities.feature_weights:
        raise InputError(f"--explain: method {chosen.method!r} gives no feature weights; use one of "
                         f"{', '.join(consensus.methods_with('feature_weights'))}")


def _inputs(paths, image, max_pixels, unlabeled=None):
    """The label maps given on the command line (all of one shape) and the optional image of the same shape.

    ``unlabeled``: the label value that means "this member leaves the pixel unlabelled" (read as -1).
    """
    segs = [s for p in paths for s in io().read_segmentations(p, max_pixels=max_pixels)]
    if unlabeled is not None:
        segs = [s.astype("int64") for s in segs]
        for s in segs:
            s[s == unlabeled] = -1
    shape = segs[0].shape
    for p, s in zip(paths, segs):
        if s.shape != shape:
            raise InputError(f"{p}: segmentation shape {s.shape} differs from {paths[0]}'s {shape}")
    img = None
    if image is not None:
        img = io().read_image(image, max_pixels=max_pixels)
        if img.shape[:2] != shape:
            raise InputError(f"--image: {image} has shape {img.shape[:2]}, the segmentations {shape}")
    return segs, img


def _boundary(boundary, img, max_pixels):
    """``--boundary``: the recipe's (unset), the colour gradient, 'learned', or the soft map read from its file."""
    if boundary is None or boundary == "gradient":
        return "recipe" if boundary is None else None
    if boundary == "learned":
        if img is None:
            raise InputError("--boundary: 'learned' runs the boundary detector on the image; with --inputs, give "
                             "--image")
        return boundary
    from pathlib import Path

    try:
        return io().read_boundary_map(Path(boundary), max_pixels=max_pixels)
    except InputError as exc:
        raise InputError(f"--boundary: {exc}") from exc


def _diagnostics(result, cap) -> None:
    stability = evaluation().ensemble_stability
    before = stability(segensemble.Ensemble.from_segmentations(result.members))
    err.print(f"{len(result.members)} members, {result.ensemble.n_objects} atoms; ensemble stability (mean pairwise "
              f"Jaccard) {before:.4f}", markup=False)
    if cap is not None:
        h = cap.objective_history_
        err.print(f"after --agree: stability {stability(result.ensemble):.4f}; agreement objective "
                  f"{h[0]:.4f} -> {h[-1]:.4f} ({cap.n_moves_} moves, {cap.n_rounds} rounds)", markup=False)


def _write_confidence(path: Path, conf, kind: str) -> None:
    import numpy as np

    if path.suffix.lower() == ".npy":
        io().write_array(path, conf.astype(np.float32))
    else:
        io().write_image(path, conf)
    err.print(f"confidence ({kind}): mean {conf.mean():.3f}, {np.mean(conf < 0.5):.1%} of pixels below 0.5 "
              f"-> {path}", markup=False)


def _print_explanation(est, labels) -> None:
    """A table: every fused region, its share of the pixels and its top features (Delta*)."""
    import numpy as np
    from rich.table import Table

    table = Table(title="fused regions and the features that define them (feature weights)")
    for col in ("region", "pixels", "top features"):
        table.add_column(col)
    counts = np.bincount(labels.ravel(), minlength=est.n_clusters_)
    for c, feats in enumerate(est.top_features(3)):
        table.add_row(str(c), f"{counts[c] / labels.size:.1%}", ", ".join(f"{name} {w:.2f}" for name, w in feats))
    out.print(table)


def _extras(result, explain: bool, confidence, kind: str) -> None:
    """``--explain`` and ``--confidence`` of a fused result."""
    if explain:  # the method's own clusters (in the image-aware frame: of the superatoms, before the merging)
        _print_explanation(result.estimator, result.ensemble.to_image(result.estimator.labels_))
    if confidence is not None:
        _write_confidence(confidence, result.confidence, kind)


def _agreement(agree, img, words, seed, jobs):
    """The CAP step of ``--agree`` (None without it), its clusterings climbed in ``jobs`` threads."""
    if not agree:
        return None
    if img is None:
        raise InputError("--agree: needs the image for its visual words (with --inputs, give --image)")
    return pipeline().deferred.consensus().CAP(n_words=words, random_state=seed,
                                               n_jobs=pipeline().available_cores(jobs))


def _report(result, chosen, output) -> None:
    objects = (counted(result.ensemble.n_objects, "atom") if result.fusion is None else
               f"{counted(len(result.fusion.superatoms), 'atom')}, {counted(result.ensemble.n_objects, 'superatom')}")
    lit = "" if result.exposure_gain == 1.0 else f", brightened x{result.exposure_gain:.2f} (the recipe's exposure)"
    if result.colourless:
        cut = result.recipe.spatial["colourless_threshold"]
        lit += f", no colour: cut at {cut:g} (the recipe's colourless_threshold)"
    err.print(f"fused {counted(len(result.members), 'segmentation')} ({objects}) with {chosen.method} "
              f"into {counted(int(result.labels.max()) + 1, 'region')}{lit} -> {output}", markup=False)


def _check_paths(paths, output, confidence, overlay, image, inputs, max_pixels, downscale, boundary,
                 scheduler, recipe=None, unlabeled=None) -> None:
    """Refuse bad outputs and, from the files' headers, inputs above the pixel limit: before any heavy import."""
    if unlabeled is not None and not inputs:
        raise InputError("--unlabeled: only with --inputs (the label value that means 'unlabelled' in those files)")
    if scheduler is not None:
        raise InputError("--scheduler: only with --out-dir (many images)")
    if not inputs and len(paths) == 1 and Path(paths[0]).is_dir():
        raise InputError(f"PATHS: {str(paths[0])!r} is a folder: fuse its images with --out-dir DIR (one label map "
                         f"each); -o writes the map of one image")
    if output is None:
        raise InputError("--output: give the label map to write (-o fused.png), or --out-dir for many images")
    check_output(output)
    if overlay is not None:
        check_output(overlay, IMAGE_OUTPUTS, "--overlay")
        if inputs and image is None:
            raise InputError("--overlay: with --inputs, give --image to draw the boundaries on")
    if image is not None and not inputs:
        raise InputError("--image: only with --inputs (the segmentations' image); the image to fuse is PATHS")
    if inputs:
        for p in paths:
            io().check_label_file(p, max_pixels)
    elif len(paths) != 1:
        raise InputError(f"PATHS: expected one image with -o (or --out-dir for many, --inputs to fuse "
                         f"segmentations), got {len(paths)} paths")
    else:
        io().check_image_file(paths[0], max_pixels, downscale=downscale)
    boundary_file = None if boundary in (None, "learned", "gradient") else boundary
    recipe_file = recipe if recipe and Path(recipe).is_file() else None
    check_distinct_paths({"--output": output, "--confidence": confidence, "--overlay": overlay},
                         {**{f"PATHS[{i}]": p for i, p in enumerate(paths)}, "--image": image,
                          "--boundary": boundary_file, "--recipe": recipe_file})


def _check_batch(output, confidence, overlay, inputs, image, explain, boundary, agree, unlabeled=None):
    """``--out-dir``: the options that apply to many images; ``--confidence``/``--overlay`` name folders."""
    if output is not None:
        raise InputError("--output: one image writes -o FILE, many write --out-dir DIR; give one of them")
    for given, name in ((inputs, "--inputs"), (image, "--image"), (explain, "--explain"), (boundary, "--boundary"),
                        (agree, "--agree"), (unlabeled is not None, "--unlabeled")):
        if given:
            raise InputError(f"{name}: not with --out-dir (it applies to one image; fuse that image with -o)")
    for folder, name in ((confidence, "--confidence"), (overlay, "--overlay")):
        if folder is not None and folder.suffix:
            raise InputError(f"{name}: with --out-dir, give a folder (one file per image is written there), "
                             f"got {str(folder)!r}")


class _Stages:
    """The stages of one fuse on a terminal's stderr (a spinner with the stage and the members finished)."""

    def __init__(self, quiet: bool, total: int):
        from rich.status import Status

        self.enabled = not quiet and err.is_terminal
        self.members, self.total = 0, total
        self.status = Status("starting", console=err) if self.enabled else None

    def __enter__(self):
        if self.enabled:
            self.status.start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.status.stop()

    def __call__(self, stage: str) -> None:
        if not self.enabled:
            return
        if stage.startswith("member "):
            self.members += 1
            stage = f"members: {self.members} of {self.total} done ({stage.split()[1]} last)"
        self.status.update(stage)


def _fuse_many(paths, out_dir, chosen, seed, max_pixels, downscale, plain, working, confidence, confidence_kind,
               overlay, jobs, scheduler, quiet, orient):
    workers = pipeline().available_cores(jobs)
    kind = None if confidence is None else confidence_kind.value
    run = lambda cb: batch("photos").fuse_files(  # noqa: E731
        paths, out_dir, recipe=chosen, rng=seed, max_pixels=max_pixels, downscale=downscale,
        image_aware=not plain, working_pixels=working, confidence=kind, overlay_dir=overlay,
        confidence_dir=confidence, orient=orient, n_jobs=workers, threads=-1 if workers == 1 else 1,
        scheduler=scheduler, progress=cb)
    summary = run(None) if quiet else with_progress("fuse", run)
    err.print(f"{summary['fused']} fused, {summary['skipped']} unchanged (skipped), {len(summary['failures'])} "
              f"failed -> {out_dir} (summary.json)", markup=False)
    exit_on_failures(summary["failures"])


def _fuse_one(paths, output, inputs, chosen, image, seed, overlay, confidence, confidence_kind, explain, agree, words,
              max_pixels, downscale, working, plain, boundary, jobs, quiet, verbose, ignore_orientation,
              unlabeled=None) -> None:
    """One image (or one set of --inputs) into ``output``, its stages shown on a terminal."""
    members, img = _inputs(paths, image, max_pixels, unlabeled) if inputs else (None, paths[0])
    if ignore_orientation and not inputs:
        img = pipeline().imagesize.read_unoriented(img, max_pixels, downscale)
    cap = _agreement(agree, img, words, seed, jobs)
    with _Stages(quiet, len(chosen.segmenters)) as stages:
        result = pipeline().runner.run_recipe(
            img, chosen, members=members, rng=seed, agree=cap or False, max_pixels=max_pixels, downscale=downscale,
            confidence=None if confidence is None else confidence_kind.value, image_aware=not plain,
            boundary=_boundary(boundary, img, max_pixels), n_jobs=jobs, working_pixels=working, progress=stages)
        stages("writing")
        if result.image is not None and not inputs:
            announce_downscale(paths[0], result.downscaled_from, result.image.shape, max_pixels,
                               result.working_pixels)
        if verbose:
            _diagnostics(result, cap)
        batch("photos").write_fused(result, output, source=img, overlay=overlay)
    _report(result, chosen, output)
    _extras(result, explain, confidence, confidence_kind.value)


_Paths = Annotated[list[Path], typer.Argument(
        help="One image to segment and fuse (-o); image files and folders with --out-dir; with --inputs, the "
        "segmentations to fuse.", show_default=False)]
_Output = Annotated[Optional[Path], typer.Option(
        "--output", "-o", help="Fused label map to write (.png, .npy or .mat), for one image.")]
_OutDir = Annotated[Optional[Path], typer.Option(
        "--out-dir", help="Fuse many images (PATHS: image files and folders of them) into this folder: "
        "<stem>.png each (<file name>.png where two images share a stem), per_image/<stem>.json, summary.json; a "
        "re-run skips the finished ones.")]
_Overlay = Annotated[Optional[Path], typer.Option(
        "--overlay", help="Also write the photo with the fused boundaries drawn on it (.jpg/.png; with --out-dir: "
        "a folder, <stem>.jpg each).")]
_WorkingPixels = Annotated[Optional[int], typer.Option(
        "--working-pixels", help="Process images of more pixels at this many and refine the labels at full "
        "resolution (default: the recipe's: 154401, a BSDS500 image, for the default recipe; 0: every image at "
        "its own size).",
        min=0)]
_Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display on stderr.")]
_Scheduler = Annotated[Optional[str], typer.Option(
        "--scheduler", help="With --out-dir: a Dask scheduler address (tcp://host:port); the images run on its "
        "workers, which must see the same paths.")]
_Inputs = Annotated[bool, typer.Option(
        "--inputs", help="Treat PATHS as label maps (.png/.npy/.mat) made by other tools and fuse them.")]
_Segmenters = Annotated[Optional[str], typer.Option(
        "--segmenters", "-s", help="Comma-separated segmenters with optional parameters, e.g. "
        "'slic:n_segments=300,felzenszwalb:scale=500' (default: the recipe's).")]
_Method = Annotated[Optional[str], typer.Option(
        "--method", "-m", help=f"Consensus method: {', '.join(CONSENSUS_METHODS)} (see 'segensemble methods'; "
        "default: the recipe's). Alone it keeps the recipe's members, image-aware settings and post-processing "
        "and swaps the method.")]
_NSegments = Annotated[Optional[str], typer.Option(
        "--n-segments", "-k", help="Number of fused regions, or 'auto' (default).")]
_Recipe = Annotated[Optional[str], typer.Option(
        "--recipe", "-r", help="A recipe (see 'segensemble recipes'; pin a version as NAME@VERSION): its ensemble, "
        "method, parameters and post-processing; -s/-m/-k/-p override it. Default: 'default', the newest "
        "default recipe.")]
_Image = Annotated[Optional[Path], typer.Option(
        "--image", help="With --inputs: the image, for methods that use image features.")]
_Unlabeled = Annotated[Optional[int], typer.Option(
        "--unlabeled", help="With --inputs: the label value that marks pixels a member leaves unlabelled, in every "
        "input file (e.g. 0 for masks on a 0 background; full members then number their regions from 1); the "
        "member does not vote there. Not every method accepts it (see 'segensemble methods').", min=0)]
_Confidence = Annotated[Optional[Path], typer.Option(
        "--confidence", help="Also write a per-pixel confidence map (.png, 0-255 gray, or .npy, float) - soft "
        "methods only (see 'segensemble methods').")]
_ConfidenceKind = Annotated[ConfidenceKind, typer.Option(
        "--confidence-kind", help="Largest membership, or 1 - normalised entropy.")]
_Explain = Annotated[bool, typer.Option(
        "--explain", help="Print the top image features of every fused region (ecbpce, cbpce).")]
_Agree = Annotated[bool, typer.Option(
        "--agree", help="Make the segmentations agree first (Clustering Agreement Process, visual words).")]
_Words = Annotated[int, typer.Option("--words", help="Visual words for --agree.", min=2)]
_Plain = Annotated[bool, typer.Option(
        "--plain", help="Run the method as in its paper on the atoms, without the image-aware frame (superatoms of "
        "the learned boundary hierarchy, the method's partition as a vote, image-aware -k auto).")]
_Boundary = Annotated[Optional[str], typer.Option(
        "--boundary", help="Boundary evidence for merge and the image-aware frame: a soft boundary map of the "
        "image's size from any edge detector (8/16-bit PNG, or .npy floats in [0, 1]), or 'learned' for the "
        "built-in detector, or 'gradient' for the image's colour gradient (default: the recipe's; 'learned' for "
        "the default recipe from version 5).")]
_Jobs = Annotated[int, typer.Option(
        "--jobs", "-j", help="One image: segmenters at once, the strips of a photo's full-resolution "
        "refinement and --agree's clusterings, in threads; --out-dir: images at once, in worker processes "
        "(-1: one per available core; the results do not depend on it).", min=-1, callback=check_jobs)]
_Verbose = Annotated[bool, typer.Option(
        "--verbose", "-v", help="Diagnostics on stderr: atoms, ensemble stability (before/after --agree).")]


@app.command()
@handle_errors
def fuse(
    paths: _Paths,
    output: _Output = None,
    out_dir: _OutDir = None,
    inputs: _Inputs = False,
    segmenters: _Segmenters = None,
    method: _Method = None,
    n_segments: _NSegments = None,
    param: Params = None,
    recipe: _Recipe = None,
    image: _Image = None,
    unlabeled: _Unlabeled = None,
    seed: Seed = 0,
    overlay: _Overlay = None,
    confidence: _Confidence = None,
    confidence_kind: _ConfidenceKind = ConfidenceKind.max,
    explain: _Explain = False,
    agree: _Agree = False,
    words: _Words = 32,
    max_pixels: MaxPixels = MAX_PIXELS,
    downscale: Downscale = False,
    working_pixels: _WorkingPixels = None,
    plain: _Plain = False,
    boundary: _Boundary = None,
    jobs: _Jobs = -1,
    scheduler: _Scheduler = None,
    ignore_orientation: IgnoreOrientation = False,
    quiet: _Quiet = False,
    verbose: _Verbose = False,
):
    """Fuse several segmentations of an image (or of every image of a folder) into one label map.

    Without options the default recipe is applied (its eight segmenters, boundary consensus with the learned
    criterion, post-processing). On an image every method runs image-aware: connected regions of at least the
    recipe's minimum size, -k auto chosen from the image. Photos of any size run at the recipe's working scale, the
    labels come back at full resolution with boundaries refined against the photo, EXIF orientation applied.

    \b
    Examples:
      segensemble fuse photo.jpg -o fused.png --overlay fused.jpg
      segensemble fuse photos/ --out-dir fused/ --overlay fused/overlays
      segensemble fuse photo.jpg --recipe seed -m borda -o fused.png
      segensemble fuse --inputs seg1.png seg2.png seg3.png -m eac -o fused.png
      segensemble fuse photo.jpg -m borda -k 6 -o fused.png --confidence conf.png
      segensemble fuse photo.jpg -m sccc -k 6 -o fused.png --agree --verbose
      segensemble fuse --inputs seg1.png seg2.png --image photo.jpg --boundary hed.png -o fused.png
    """
    working = None if working_pixels == 0 else ("recipe" if working_pixels is None else working_pixels)
    if out_dir is not None:
        _check_batch(output, confidence, overlay, inputs, image, explain, boundary, agree, unlabeled)
    else:
        _check_paths(paths, output, confidence, overlay, image, inputs, max_pixels, downscale, boundary, scheduler,
                     recipe, unlabeled)
    chosen = _recipe(recipe, segmenters, method, n_segments, param, inputs)
    _check_options(chosen, confidence, explain)
    if out_dir is not None:
        return _fuse_many(paths, out_dir, chosen, seed, max_pixels, downscale, plain, working, confidence,
                          confidence_kind, overlay, jobs, scheduler, quiet, not ignore_orientation)
    _fuse_one(paths, output, inputs, chosen, image, seed, overlay, confidence, confidence_kind, explain, agree, words,
              max_pixels, downscale, working, plain, boundary, jobs, quiet, verbose, ignore_orientation, unlabeled)
