"""``segensemble segment``: one segmenter on one image."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from segensemble.cli._app import (SEGMENTERS, Downscale, IgnoreOrientation, MaxPixels, Seed, app, check_jobs,
                                  check_output, counted, err, handle_errors, parse_params)
from segensemble.cli._deferred import batch, io, pipeline
from segensemble.checks import MAX_PIXELS, check_distinct_paths

IMAGE_OUTPUTS = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")


def announce_downscale(path, original, shape, max_pixels, working_pixels=None) -> None:
    """Say on stderr that an image was processed at a smaller size (and its results brought back to full size)."""
    if original is None:
        return
    if max_pixels is not None and original[0] * original[1] > max_pixels:
        err.print(f"{path}: downscaled from {original[1]}x{original[0]} to {shape[1]}x{shape[0]} "
                  f"(--max-pixels {max_pixels}); the result is upscaled back", markup=False)
    else:
        err.print(f"{path}: processed at {shape[1]}x{shape[0]} (working scale {working_pixels} pixels), labels "
                  f"refined at {original[1]}x{original[0]}", markup=False)


@app.command()
@handle_errors
def segment(
    image: Annotated[Path, typer.Argument(help="Image to segment.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Label map to write (.png, .npy or .mat).")],
    method: Annotated[str, typer.Option("--method", "-m", help=f"Segmenter: {', '.join(SEGMENTERS)} (see "
                                                          "'segensemble methods').")] = "slic",
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
    max_pixels: MaxPixels = MAX_PIXELS,
    downscale: Downscale = False,
    ignore_orientation: IgnoreOrientation = False,
    working_pixels: Annotated[Optional[int], typer.Option(
        "--working-pixels", help="Segment images of more pixels at this many and refine the labels at full "
        "resolution (0: every image at its own size).", min=0)] = 154_401,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", help="Threads that refine a photo's labels at full resolution (-1: one per available core; "
        "the labels do not depend on it).", min=-1, callback=check_jobs)] = -1,
):
    """Segment one image with one segmenter.

    \b
    Examples:
      segensemble segment photo.jpg -m ncut -k 8 -o seg.png --overlay overlay.png
      segensemble segment photo.jpg -m felzenszwalb -p scale=500 -p min_size=80 -o seg.png
    """
    check_output(output)
    # a bomb is refused before the numeric layers are imported
    io().check_image_file(image, max_pixels, downscale=downscale)
    if overlay is not None:
        check_output(overlay, IMAGE_OUTPUTS, "--overlay")
    check_distinct_paths({"--output": output, "--overlay": overlay}, {"IMAGE": image})

    pipeline().deferred.segmenters().get(method)
    params = parse_params(param) | ({} if n_segments is None else {"n_segments": n_segments})
    working = working_pixels or None
    if ignore_orientation:
        source = pipeline().imagesize.read_unoriented(image, max_pixels, downscale)
    else:
        source = image
    _, labels, img, original = pipeline().runner.segment_image(source, method, rng=seed, max_pixels=max_pixels,
                                                               downscale=downscale, working_pixels=working,
                                                               n_jobs=jobs, **params)
    announce_downscale(image, original, img.shape, max_pixels, working)
    io().write_labels(output, labels)
    if overlay is not None:  # drawn on the photo at the labels' (full) size
        batch("photos").write_overlay(overlay, source, labels)
    # the regions written: at a working scale, a region of a pixel or two can vanish at full resolution
    err.print(f"{method}: {counted(int(labels.max()) + 1, 'region')} -> {output}", markup=False)
