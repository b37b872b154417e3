"""Fuse many photos: a recipe over an iterable of images, or over files into a folder, resumable.

:func:`iter_recipe` is the library's way to apply one recipe to many images
(paths or arrays) one after the other. :func:`fuse_files` is the batch behind
``segensemble fuse a.jpg b.jpg … --out-dir OUT`` and ``segensemble fuse
FOLDER --out-dir OUT``: one task per image on the project's resumable-batch
machinery (:mod:`segensemble.batch.tasks`: worker processes or a Dask cluster,
failures collected per image), every output written atomically, a per-image
record under ``OUT/per_image/`` so that a re-run skips the images whose input
and settings are unchanged, and ``OUT/summary.json`` listing what failed.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segensemble.batch.folders import batch_folder
from segensemble.batch.tasks import check_scheduler, input_digests, resume_tasks, settings_key
from segensemble.atomic import atomic_write_text
from segensemble.errors import InputError, renamed_keywords
from segensemble.io import IMAGE_SUFFIXES, MAX_PIXELS, decode_image, write_array, write_image, write_labels
from segensemble.batch.drawing import overlay_boundaries
from segensemble.pipeline.imagesize import read_unoriented
from segensemble.validation import check_distinct_paths, check_output_path
from segensemble.pipeline.recipes import Recipe, load_recipe, recipe_from_mapping
from segensemble.pipeline.runner import run_recipe

__all__ = ["image_files", "iter_recipe", "fuse_files", "write_fused", "write_overlay",
           "FuseSettings"]


def image_files(paths) -> dict:
    """``{name: path}`` of the images named: files as given, folders expanded to the image files in them.

    A folder contributes every file whose suffix is an image suffix
    (:data:`segensemble.io.IMAGE_SUFFIXES`, any case), sorted by name; other
    files are left out; a file named twice (given, and in a folder given) counts once. The name is what the
    outputs are called (``<name>.png``): the file's stem, or its whole file name when several images share the
    stem (a phone's ``IMG_0001.HEIC`` and ``IMG_0001.JPG`` write ``IMG_0001.HEIC.png`` and
    ``IMG_0001.JPG.png``). Two files whose names are the same but for letter case, or with one file name in two
    folders, would write one output: refused.

    Raises
    ------
    InputError
        A path that does not exist, a folder without images, or two images that would write one output.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> for name in ("b.JPG", "a.png", "a.heic", "notes.txt"):
    ...     _ = open(os.path.join(d, name), "wb").write(b"")
    >>> sorted(image_files([d]))
    ['a.heic', 'a.png', 'b']
    """
    files: dict = {}  # path -> None: each file once, in the order named
    for p in map(Path, paths):
        if p.is_dir():
            inside = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
            if not inside:
                raise InputError(f"PATHS: {p} holds no image files ({', '.join(IMAGE_SUFFIXES)})")
        elif p.exists():
            inside = [p]
        else:
            raise InputError(f"PATHS: {p}: file not found")
        files.update(dict.fromkeys(inside))
    if not files:
        raise InputError("PATHS: expected at least one image")
    stems = Counter(f.stem.lower() for f in files)  # lower case: a case-insensitive disk would clash too
    found: dict = {}
    seen: dict = {}  # output name in lower case -> the file writing it
    for f in files:
        name = f.stem if stems[f.stem.lower()] == 1 else f.name
        if name.lower() in seen:
            raise InputError(f"PATHS: {seen[name.lower()]} and {f} would both write {name}.png; rename one")
        seen[name.lower()] = f
        found[name] = f
    return found


def iter_recipe(images, recipe="default", **kwargs):
    """Apply one recipe to many images, one after the other: yields ``(image, FusionResult)``.

    Parameters
    ----------
    images : iterable of paths or arrays
    recipe : str or Recipe
        Loaded and validated once.
    **kwargs
        Passed to :func:`segensemble.pipeline.runner.run_recipe` for every image.

    Examples
    --------
    >>> img = np.zeros((24, 32, 3)); img[:, 16:] = 1
    >>> [result.labels.shape for _, result in iter_recipe([img, img[:12]], "classic")]
    [(24, 32), (12, 32)]
    """
    chosen = recipe if isinstance(recipe, Recipe) else load_recipe(recipe)
    for image in images:
        yield image, run_recipe(image, chosen, **kwargs)


def write_fused(result, output, *, source=None, overlay=None, confidence=None) -> None:
    """Write a fused result: the label map, and optionally the boundaries drawn on the photo and the confidence.

    ``source`` is the image (a path, read again at full resolution, or an
    array) the overlay is drawn on.

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.pipeline.runner import run_recipe
    >>> img = np.zeros((24, 32, 3)); img[:, 16:] = 1
    >>> d = tempfile.mkdtemp()
    >>> write_fused(run_recipe(img, "classic"), os.path.join(d, "f.png"), source=img,
    ...             overlay=os.path.join(d, "f.jpg"))
    >>> sorted(os.listdir(d))
    ['f.jpg', 'f.png']
    """
    write_labels(output, result.labels)
    if overlay is not None:
        write_overlay(overlay, source, result.labels)
    if confidence is not None:
        conf = result.confidence
        if Path(confidence).suffix.lower() == ".npy":
            write_array(confidence, np.asarray(conf, dtype=np.float32))
        else:
            write_image(confidence, conf)


def write_overlay(path, source, labels) -> None:
    """Write the photo (a path, read at full resolution as displayed, or an array) with the boundaries of ``labels``.

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.io import read_image
    >>> p = os.path.join(tempfile.mkdtemp(), "o.png")
    >>> write_overlay(p, np.zeros((4, 4), np.uint8), np.array([[0, 0, 1, 1]] * 4))
    >>> read_image(p)[0, :, 0].tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    if source is None:
        raise InputError("--overlay: needs the image (with --inputs, give --image)")
    photo = decode_image(source) if isinstance(source, (str, Path)) else np.asarray(source)
    if photo.shape[:2] != labels.shape:  # e.g. a JPEG decoded at reduced size above --max-pixels
        import cv2

        photo = cv2.resize(photo, labels.shape[::-1], interpolation=cv2.INTER_AREA)
    write_image(path, overlay_boundaries(photo, labels))


@dataclass
class FuseSettings:
    """Everything that decides a batch's per-image outputs; their hash decides whether a record is reused."""

    recipe: dict
    random_state: int = 0
    max_pixels: int | None = MAX_PIXELS
    downscale: bool = False
    image_aware: bool = True
    working_pixels: object = "recipe"
    confidence: str | None = None
    overlay: str | None = None
    confidence_dir: str | None = None
    orient: bool = True

    def key(self) -> str:
        return settings_key(self)


def _outputs(out: Path, image_id: str, settings: FuseSettings) -> dict:
    paths = {"labels": out / f"{image_id}.png"}
    if settings.overlay is not None:
        paths["overlay"] = Path(settings.overlay) / f"{image_id}.jpg"
    if settings.confidence_dir is not None:
        paths["confidence"] = Path(settings.confidence_dir) / f"{image_id}.png"
    return paths


def _fuse_task(image_id: str, files: dict, settings: FuseSettings, out_dir: str, threads: int) -> dict:
    """Fuse one image into ``out_dir`` (atomic writes); its record is written last."""
    import time

    start = time.perf_counter()
    out = Path(out_dir)
    path = Path(files[image_id])
    recipe = recipe_from_mapping(dict(settings.recipe), source=f"recipe {settings.recipe.get('name')!r}")
    image = path if settings.orient else read_unoriented(path, settings.max_pixels, settings.downscale)
    result = run_recipe(image, recipe, rng=settings.random_state, max_pixels=settings.max_pixels,
                        downscale=settings.downscale, image_aware=settings.image_aware,
                        working_pixels=settings.working_pixels, confidence=settings.confidence, n_jobs=threads)
    paths = _outputs(out, image_id, settings)
    write_fused(result, paths["labels"], source=image, overlay=paths.get("overlay"),
                confidence=paths.get("confidence"))
    record = {"id": image_id, "config": settings.key(), "inputs": input_digests({"image": path}),
              "image": str(path), "shape": list(result.labels.shape), "n_regions": int(result.labels.max()) + 1,
              "processed_at": None if result.image is None else list(result.image.shape[:2]),
              "exposure_gain": round(result.exposure_gain, 4), "colourless": result.colourless,
              "seconds": round(time.perf_counter() - start, 3)}
    atomic_write_text(out / "per_image" / f"{image_id}.json", json.dumps(record, indent=1))
    return record


@renamed_keywords(random_state="rng")
def fuse_files(paths, out_dir, *, recipe="default", rng: int = 0, max_pixels: int | None = MAX_PIXELS,
               downscale: bool = False, image_aware: bool = True, working_pixels="recipe", orient: bool = True,
               confidence: str | None = None, overlay_dir=None, confidence_dir=None, n_jobs: int = 1,
               threads: int = 1, scheduler: str | None = None, progress=None) -> dict:
    """Fuse every image of ``paths`` (files, or folders of them) into ``out_dir/<stem>.png``; resumable.

    Parameters
    ----------
    paths : sequence of paths
        Image files and folders (every image file in a folder, not recursive).
    out_dir : path
        Written: ``<stem>.png`` per image, ``per_image/<stem>.json``, ``summary.json``.
    recipe : str or Recipe
    rng : int, default 0
        Seed of every image's recipe run (``random_state``: its deprecated name).
    overlay_dir, confidence_dir : path, optional
        Also write ``<stem>.jpg`` (the boundaries drawn on the photo) / ``<stem>.png`` (the confidence) there.
    orient : bool, default True
        Apply the photos' EXIF orientation (False: their pixel grids as stored).
    confidence : {'max', 'entropy', 'auto'} or None
        The confidence map's kind (see :func:`~segensemble.pipeline.runner.run_recipe`); needed with ``confidence_dir``.
    n_jobs : int
        Images at once, in worker processes; ``threads`` members at once within each.
    scheduler : str, optional
        A Dask scheduler address: the images run on its workers (a shared file system).
    progress : callable, optional
        ``progress(done, total)``.

    Returns
    -------
    dict
        The summary also written to ``out_dir/summary.json``: ``images``, ``fused`` (this run),
        ``skipped`` (finished before, unchanged), ``failures`` ``{stem: message}``.

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.io import write_image
    >>> d = tempfile.mkdtemp()
    >>> img = np.zeros((24, 32, 3)); img[:, 16:] = 1
    >>> _ = write_image(os.path.join(d, "a.png"), img)
    >>> s = fuse_files([d], os.path.join(d, "out"), recipe="classic")
    >>> s["fused"], s["failures"], sorted(os.listdir(os.path.join(d, "out")))
    (1, {}, ['a.png', 'per_image', 'summary.json'])
    """
    files = image_files(paths)
    chosen = recipe if isinstance(recipe, Recipe) else load_recipe(recipe)
    check_scheduler(scheduler)
    if confidence_dir is not None and confidence is None:
        raise InputError("confidence: give the kind of confidence map to write into confidence_dir")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out-dir: {out} exists and is not a folder")
    check_output_path(out / "summary.json", "--out-dir")
    folders = {f"PATHS[{i}]": p if Path(p).is_dir() else Path(p).parent for i, p in enumerate(paths)}
    for name, folder in (("--out-dir", out), ("--overlay", overlay_dir), ("--confidence", confidence_dir)):
        check_distinct_paths({name: folder}, folders)  # outputs never land among the photos they come from
    for folder in (overlay_dir, confidence_dir):
        if folder is not None:
            Path(folder).mkdir(parents=True, exist_ok=True)
    settings = FuseSettings(recipe=chosen.to_dict(), random_state=rng, max_pixels=max_pixels,
                            downscale=downscale, image_aware=image_aware, working_pixels=working_pixels,
                            confidence=confidence, overlay=None if overlay_dir is None else str(overlay_dir),
                            confidence_dir=None if confidence_dir is None else str(confidence_dir), orient=orient)
    with batch_folder(out, "--out-dir"):
        key, ids = settings.key(), list(files)
        done, failures, skipped = resume_tasks(
            _fuse_task, ids, ({i: str(p) for i, p in files.items()}, settings, str(out), threads), out, key,
            required=("{id}.png",), inputs=lambda i: {"image": files[i]},
            complete=lambda i: all(p.is_file() for p in _outputs(out, i, settings).values()), jobs=n_jobs,
            progress=progress, scheduler=scheduler)
        summary = {"recipe": f"{chosen.name}@{chosen.version}", "config": key, "images": len(ids),
                   "fused": len(done) - skipped, "skipped": skipped, "failures": dict(sorted(failures.items())),
                   "outputs": {i: str(_outputs(out, i, settings)["labels"]) for i in ids if i not in failures}}
        atomic_write_text(out / "summary.json", json.dumps(summary, indent=1))
        return summary
