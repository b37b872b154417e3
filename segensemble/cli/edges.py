"""``segensemble edges``: the learned boundary detector on one image."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from segensemble.cli._app import Downscale, MaxPixels, app, check_output, err, handle_errors


@app.command()
@handle_errors
def edges(
    image: Annotated[Path, typer.Argument(help="Image to detect boundaries in.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Soft boundary map to write: .png (8-bit, "
                                                                "255 = certain) or .npy (float32 in [0, 1]).")],
    raw: Annotated[bool, typer.Option("--raw", help="The probability before non-maximum suppression "
                                                    "(thick ridges).")] = False,
    model: Annotated[Optional[Path], typer.Option("--model", help="A boundary model file (default: the one "
                                                                  "that ships, trained on BSDS500 train).")] = None,
    max_pixels: MaxPixels = 3_000_000,
    downscale: Downscale = False,
):
    """Detect boundaries: the learned probability that a person draws a boundary at each pixel.

    The map is thinned by non-maximum suppression, as the Berkeley boundary
    benchmark expects; score a folder of them with
    'segensemble score RESULTS --kind boundary'.

    \b
    Examples:
      segensemble edges photo.jpg -o edges.png
      segensemble edges photo.jpg --raw -o probability.npy
    """
    from segensemble.imagesize import check_image_file
    from segensemble.validation import check_distinct_paths

    check_output(output, (".png", ".npy"))
    check_image_file(image, max_pixels, downscale=downscale)
    check_distinct_paths({"--output": output}, {"IMAGE": image, "--model": model})
    if model is not None and not model.is_file():
        from segensemble.errors import InputError

        raise InputError(f"--model: no such file: {model}")
    import numpy as np

    from segensemble.atomic import atomic_write_bytes
    from segensemble.edges import detect_boundaries, load_boundary_model
    from segensemble.imagesize import load_image
    from segensemble.io import write_array

    detector = load_boundary_model(model)
    img, original = load_image(image, max_pixels, downscale=downscale)
    edges_map = detect_boundaries(img, model=detector, nms=not raw)
    if original is not None:
        import cv2

        edges_map = cv2.resize(edges_map, (original[1], original[0]), interpolation=cv2.INTER_LINEAR)
        err.print(f"{image}: downscaled from {original[1]}x{original[0]} for detection; the map is upscaled back",
                  markup=False)
    if output.suffix.lower() == ".npy":
        write_array(output, edges_map.astype(np.float32))
    else:  # one 8-bit gray channel
        import cv2

        ok, buf = cv2.imencode(".png", np.round(np.clip(edges_map, 0, 1) * 255).astype(np.uint8))
        atomic_write_bytes(output, buf.tobytes())
    err.print(f"boundaries ({'raw probability' if raw else 'thinned'}), max {float(edges_map.max()):.2f} -> {output}",
              markup=False)
