"""``segensemble edges``: the learned boundary detector on one image."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from segensemble.cli._app import Downscale, MaxPixels, app, check_jobs, check_output, err, handle_errors
from segensemble.cli._deferred import edges as edge_layer, io, pipeline
from segensemble.atomic import atomic_write_bytes
from segensemble.errors import InputError
from segensemble.checks import MAX_PIXELS, check_distinct_paths


@app.command()
@handle_errors
def edges(
    image: Annotated[Path, typer.Argument(help="Image to detect boundaries in.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Soft boundary map to write: .png (8-bit, "
                                                                "255 = certain) or .npy (float32 in [0, 1]).")],
    raw: Annotated[bool, typer.Option("--raw", help="The probability before non-maximum suppression "
                                                    "(thick ridges).")] = False,
    ucm2: Annotated[Optional[Path], typer.Option("--ucm2", help="Also write the map's hierarchy of regions "
                                                 "(watershed + ultrametric contour map) as a BSDS ucm2 .mat.")] = None,
    model: Annotated[Optional[Path], typer.Option(
        "--model", help="A boundary model file or the name of a shipped one (default: boundary-v4, the best shipped "
        "detector: BSDS500 test ODS F 0.742, AP 0.799).")] = None,
    max_pixels: MaxPixels = MAX_PIXELS,
    downscale: Downscale = False,
    working_pixels: Annotated[Optional[int], typer.Option(
        "--working-pixels", help="Detect in images of more pixels at this many (the scale the model was trained "
        "on) and bring the map back to full resolution before thinning (0: every image at its own size).",
        min=0)] = 154_401,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", help="Threads of the detector's prediction (-1: one per available core; the map does not "
        "depend on it).", min=-1, callback=check_jobs)] = -1,
):
    """Detect boundaries: the learned probability that a person draws a boundary at each pixel.

    The map is thinned by non-maximum suppression, as the Berkeley boundary
    benchmark expects; score a folder of them with
    'segensemble score RESULTS --kind boundary'.

    \b
    Examples:
      segensemble edges photo.jpg -o edges.png
      segensemble edges photo.jpg --raw -o probability.npy
      segensemble edges photo.jpg -o edges.png --ucm2 photo_ucm2.mat
    """
    _check_paths(image, output, ucm2, model, max_pixels, downscale)
    import numpy as np

    detector = edge_layer().load_boundary_model(edge_layer().RECOMMENDED_MODEL if model is None else model)
    img, original, _ = pipeline().imagesize.prepare_image(image, max_pixels, downscale, working_pixels or None)
    if ucm2 is not None and original is not None:
        raise InputError(f"--ucm2: {image} is {original[1]}x{original[0]}, processed at {img.shape[1]}x"
                         f"{img.shape[0]}; its hierarchy would not match the image (give --working-pixels 0)")
    probability = edge_layer().detect_boundaries(img, model=detector, nms=False, n_jobs=jobs)
    if ucm2 is not None:
        ucm = edge_layer().ucm
        io().write_ucm2(ucm2, ucm.boundary_hierarchy(probability, min_size=ucm.UCM_MIN_SIZE).ucm2())
    if original is not None:  # thinned at full resolution, with the normal and the reach of the working scale
        workscale = pipeline().workscale
        edges_map = (workscale.upsample_map(probability, original) if raw
                     else workscale.thin_upsampled_map(probability, original).astype(np.float32))
        err.print(f"{image}: {original[1]}x{original[0]} detected at {img.shape[1]}x{img.shape[0]}; the map is "
                  "brought back to full resolution", markup=False)
    else:
        edges_map = probability if raw else edge_layer().non_maximum_suppression(probability).astype(np.float32)
    _write_map(output, edges_map)
    err.print(f"boundaries ({'raw probability' if raw else 'thinned'}), max {float(edges_map.max()):.2f} -> {output}",
              markup=False)


def _check_paths(image, output, ucm2, model, max_pixels, downscale) -> None:
    """Refuse bad outputs, a missing model and (from its header) an image above the pixel limit, before any work."""
    check_output(output, (".png", ".npy"))
    io().check_image_file(image, max_pixels, downscale=downscale)
    if ucm2 is not None:
        check_output(ucm2, (".mat",), "--ucm2")
    check_distinct_paths({"--output": output, "--ucm2": ucm2}, {"IMAGE": image, "--model": model})
    if model is not None and not model.is_file() and str(model) not in edge_layer().boundary_models():
        raise InputError(f"--model: no such file or shipped model ({', '.join(edge_layer().boundary_models())}): "
                         f"{model}")


def _write_map(path: Path, edges_map) -> None:
    """A soft map as .npy (float32) or as an 8-bit gray PNG (255 = certain), atomically."""
    import cv2
    import numpy as np

    if path.suffix.lower() == ".npy":
        io().write_array(path, edges_map.astype(np.float32))
    else:
        _, buf = cv2.imencode(".png", np.round(np.clip(edges_map, 0, 1) * 255).astype(np.uint8))
        atomic_write_bytes(path, buf.tobytes())
