"""Wall time and peak memory of ``segensemble fuse PHOTO -o out.png`` (no other flag) on photos of every size.

With ``--commands`` the same photos also time ``segensemble edges PHOTO -o out.png`` (the learned boundary map,
thinned at full size) and ``segensemble fuse PHOTO --agree -o out.png`` (the members made to agree by CAP first),
one table per command.

The photos are made from scikit-learn's sample photo ``china.jpg`` (640 x 427)
upscaled with ``cv2.INTER_CUBIC`` and saved as a phone or camera saves them:

- the 640 x 427 original (0.27 MP), the baseline of the ratio column;
- 2048 x 1536 (3.1 MP, an old phone), 4000 x 3000 (12 MP), 6000 x 4000 (24 MP) JPEGs (quality 92);
- 4000 x 3000 stored sideways (3000 x 4000) with the EXIF tag "rotate 90" (orientation 6), as phones store an
  upright photo: the label map must have the displayed shape;
- the 12 MP photo as HEIC (pillow-heif), the default format of many phones;
- a 10 000 x 10 000 PNG (100 MP, a panorama's pixel count).

Every run is a fresh ``segensemble fuse`` process (start-up, imports and model loading included, as a user
sees it) started by a small wrapper that reports the child's peak resident memory (``getrusage``); each
photo runs ``--runs`` times, the median is printed, the runs of all photos interleaved so that the
machine's drift hits them alike. The bounds of the real-photos work are printed beside the numbers.

Usage::

    python benchmarks/bench_photos.py [--runs 3] [--dir /tmp/segensemble-photos] [--skip-100mp]
                                      [--commands fuse,edges,agree]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

#: name -> (width, height, suffix, EXIF orientation); (0, 0) is the original photo.
PHOTOS = {
    "640x427 JPEG (original)": (0, 0, ".jpg", 1),
    "2048x1536 JPEG (3 MP)": (2048, 1536, ".jpg", 1),
    "4000x3000 JPEG (12 MP)": (4000, 3000, ".jpg", 1),
    "4000x3000 JPEG, stored sideways + EXIF 6": (4000, 3000, ".jpg", 6),
    "4000x3000 HEIC (12 MP)": (4000, 3000, ".heic", 1),
    "6000x4000 JPEG (24 MP)": (6000, 4000, ".jpg", 1),
    "10000x10000 PNG (100 MP)": (10000, 10000, ".png", 1),
}
#: Bounds of the issue: peak memory (GB) per photo, and time against the original.
BOUNDS = {"4000x3000 JPEG (12 MP)": "<= 1.0 GB, <= 3x, <= 15 s", "6000x4000 JPEG (24 MP)": "<= 1.5 GB",
          "10000x10000 PNG (100 MP)": "<= 2.0 GB"}


def make_photos(folder: Path, names) -> dict:
    """Write the photos (once; kept in ``folder`` for later runs)."""
    import cv2
    from PIL import Image
    from sklearn.datasets import load_sample_image

    folder.mkdir(parents=True, exist_ok=True)
    china = load_sample_image("china.jpg")  # RGB
    paths = {}
    for name in names:
        w, h, suffix, orientation = PHOTOS[name]
        path = folder / (name.split(" ")[0] + ("-exif6" if orientation != 1 else "") + suffix)
        paths[name] = path
        if path.exists():
            continue
        rgb = china if w == 0 else cv2.resize(china, (w, h), interpolation=cv2.INTER_CUBIC)
        if suffix == ".heic":
            import pillow_heif

            pillow_heif.register_heif_opener()
            Image.fromarray(rgb).save(path, quality=90)
        elif orientation == 6:  # stored as the sensor saw it: the upright photo turned 90 degrees counter-clockwise
            exif = Image.Exif()
            exif[0x0112] = 6
            Image.fromarray(np.ascontiguousarray(np.rot90(rgb, 1))).save(path, quality=92, exif=exif.tobytes())
        else:
            params = [cv2.IMWRITE_JPEG_QUALITY, 92] if suffix == ".jpg" else [cv2.IMWRITE_PNG_COMPRESSION, 1]
            cv2.imwrite(str(path), rgb[:, :, ::-1], params)
    return paths


#: The commands ``--commands`` names: the segensemble arguments before the photo, and after it.
COMMANDS = {"fuse": (["fuse"], []), "edges": (["edges"], []), "agree": (["fuse"], ["--agree"])}


def run_command(photo: Path, out: Path, command: str = "fuse") -> tuple[float, float, int]:
    """(wall seconds, peak RSS GB, exit code) of one ``segensemble COMMAND photo -o out`` in a fresh process."""
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode; "
            "print(rc, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    exe = Path(sys.executable).with_name("segensemble")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "segensemble.cli"]
    before, after = COMMANDS[command]
    res = subprocess.run([sys.executable, "-c", code, *cmd, *before, str(photo), *after, "-o", str(out)],
                         capture_output=True, text=True, check=True)
    rc, seconds, kb = res.stdout.split()
    return float(seconds), int(kb) / 1024 ** 2, int(rc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/segensemble-photos"))
    ap.add_argument("--skip-100mp", action="store_true", help="leave the 10 000 x 10 000 PNG out")
    ap.add_argument("--commands", default="fuse", help=f"comma-separated, of {', '.join(COMMANDS)}")
    args = ap.parse_args()
    commands = args.commands.split(",")
    if unknown := [c for c in commands if c not in COMMANDS]:
        ap.error(f"--commands: expected names from {', '.join(COMMANDS)}, got {unknown[0]!r}")
    names = [n for n in PHOTOS if not (args.skip_100mp and "100 MP" in n)]
    from segensemble.io import read_image, read_labels

    start = time.perf_counter()
    paths = make_photos(args.dir, names)
    print(f"photos ready in {time.perf_counter() - start:.1f} s ({args.dir})", flush=True)
    times = {(c, n): [] for c in commands for n in names}
    peaks = {(c, n): [] for c in commands for n in names}
    shapes = {}
    for _ in range(args.runs):
        for command in commands:
            for name in names:
                out = args.dir / f"out-{command}-{paths[name].stem}.png"
                seconds, gb, rc = run_command(paths[name], out, command)
                if rc != 0:
                    raise SystemExit(f"{name}: segensemble {' '.join(COMMANDS[command][0])} exited {rc}")
                times[command, name].append(seconds)
                peaks[command, name].append(gb)
                result = read_image(out, max_pixels=None) if command == "edges" else read_labels(out, max_pixels=None)
                shapes[command, name] = (result.shape[:2], None if command == "edges" else int(result.max()) + 1)
    for command in commands:
        _table(command, names, times, peaks, shapes, args.runs)


def _table(command, names, times, peaks, shapes, runs) -> None:
    before, after = COMMANDS[command]
    base = statistics.median(times[command, names[0]])
    print(f"\nsegensemble {' '.join(before)} PHOTO {' '.join(after + ['-o', 'out.png'])} (default recipe and "
          f"model); median of {runs} runs, {os.cpu_count()} cores\n")
    print("| photo | output | regions | wall (median) | min-max | x original | peak RSS | bound |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        t = times[command, name]
        (h, w), k = shapes[command, name]
        bound = BOUNDS.get(name, "") if command == "fuse" else ""
        print(f"| {name} | {w}x{h} | {'' if k is None else k} | {statistics.median(t):.2f} s | "
              f"{min(t):.2f}-{max(t):.2f} s | {statistics.median(t) / base:.2f} | {max(peaks[command, name]):.2f} GB"
              f" | {bound} |")


if __name__ == "__main__":
    main()
