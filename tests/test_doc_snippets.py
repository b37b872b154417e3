"""Every code block of the README and the user guide runs.

The fenced ``python`` and ``bash`` blocks of ``README.md`` and ``docs/**/*.md``
run in order, one sandbox per file: a temporary folder holding ``photo.jpg``,
a ``photos/`` folder, label maps made by other tools (``seg1.png``,
``seg2.png``, ``seg3.npy``; ``mask.png`` labelling a third of the image on a
0 background, ``full1.png`` and ``full2.png`` numbered from 1), a soft
boundary map (``hed.png``) and
``BSDS500`` (a link to the development copy). Python blocks of one file share
a namespace, like a notebook; bash blocks run with ``set -euo pipefail``. A
block may be skipped only with a ``<!-- snippet: skip (reason) -->`` line
among the comment lines right above it, and only if it installs something (``pip install``,
``python3 -m venv``): ``.ci/run`` runs those on a fresh machine. ``text``
blocks are output, not code. A stale example fails here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]
FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)\s*$")
SKIP = re.compile(r"<!-- snippet: skip \((?P<reason>[^)]+)\) -->")
INSTALLS = ("pip install", "python3 -m venv", "python -m venv")


def code_blocks(path: Path) -> list[tuple[str, str, int, str | None]]:
    """(language, code, first line number, skip reason) of every fenced block of a Markdown file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, k = [], 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m or not m["lang"]:
            k += 1
            continue
        indent, start, body = len(m["indent"]), k + 1, []
        k += 1
        while k < len(lines) and not FENCE.match(lines[k]):
            body.append(lines[k][indent:] if lines[k][:indent].strip() == "" else lines[k])
            k += 1
        above = []  # the HTML comments right above the fence (blank lines between them allowed)
        for ln in reversed(lines[: start - 1]):
            if ln.strip() and not ln.strip().startswith("<!--"):
                break
            above.append(ln)
        skip = next((m for m in map(SKIP.search, above) if m), None)
        blocks.append((m["lang"], "\n".join(body) + "\n", start + 1, skip["reason"] if skip else None))
        k += 1
    return blocks


def test_code_blocks_are_found():
    blocks = code_blocks(ROOT / "README.md")
    assert {lang for lang, *_ in blocks} >= {"bash", "python"}
    assert any("pytest" in code and reason for _, code, _, reason in blocks)  # the test command: run by .ci/run


def _make_sandbox(tmp: Path, bsds_root: Path) -> None:
    from skimage import data
    from skimage.transform import rescale

    from segensemble import segment
    from segensemble.edges import detect_boundaries
    from segensemble.io import write_image, write_labels

    photo = (rescale(data.coffee(), 0.5, channel_axis=-1, anti_aliasing=True) * 255).astype(np.uint8)
    write_image(tmp / "photo.jpg", photo)
    (tmp / "photos").mkdir()
    write_image(tmp / "photos" / "coffee.jpg", photo)
    write_image(tmp / "photos" / "cat.jpg", (rescale(data.chelsea(), 0.5, channel_axis=-1) * 255).astype(np.uint8))
    slic, felzenszwalb = segment(photo, "slic", rng=0).labels, segment(photo, "felzenszwalb", rng=0).labels
    write_labels(tmp / "seg1.png", slic)
    write_labels(tmp / "seg2.png", felzenszwalb)
    np.save(tmp / "seg3.npy", segment(photo, "watershed", rng=0).labels)
    third = photo.shape[1] // 3
    mask = np.zeros_like(slic)  # a member that labels the left third only, 0 elsewhere
    mask[:, :third] = segment(photo, "kmeans", n_segments=4, rng=0).labels[:, :third] + 1
    write_labels(tmp / "mask.png", mask)
    write_labels(tmp / "full1.png", slic + 1)  # full members numbered from 1
    write_labels(tmp / "full2.png", felzenszwalb + 1)
    write_image(tmp / "hed.png", np.round(detect_boundaries(photo, nms=False) * 255).astype(np.uint8))
    os.symlink(bsds_root, tmp / "BSDS500")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_code_block_runs(page, tmp_path, bsds_root, monkeypatch):
    blocks = code_blocks(page)
    for lang, code, line, reason in blocks:
        if reason is not None:
            commands = [c.strip() for c in re.split(r"&&|\n", code) if c.strip() and not c.strip().startswith("#")]
            assert commands and commands[0].startswith(INSTALLS), (
                f"{page.name}:{line}: only installation commands may be skipped, not {commands[:1]}")
    runnable = [b for b in blocks if b[3] is None and b[0] in ("python", "bash")]
    if not runnable:
        pytest.skip("no runnable code block")
    _make_sandbox(tmp_path, bsds_root)
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "SEGENSEMBLE_BSDS_ROOT": str(tmp_path / "BSDS500"), "MPLBACKEND": "Agg",
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    namespace: dict = {"__name__": "__snippet__"}
    for lang, code, line, _ in runnable:
        where = f"{page.relative_to(ROOT)}:{line}"
        if lang == "python":
            try:
                exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the documentation's own examples
            except Exception as exc:  # pragma: no cover - the message is the report
                raise AssertionError(f"{where}: {type(exc).__name__}: {exc}\n{code}") from exc
        else:
            assert shutil.which("bash"), "bash is needed for the shell examples"
            run = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env,
                                 capture_output=True, text=True, timeout=600)
            assert run.returncode == 0, f"{where}: exit {run.returncode}\n{code}\n{run.stderr[-2000:]}"


def test_the_ci_reads_the_readme_test_command():
    """.ci/run takes the lines between the test-command markers, fences and blank lines dropped: they must be the
    command alone (a comment line there once broke CI)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    inside = text.split("<!-- test-command -->", 1)[1].split("<!-- /test-command -->", 1)[0]
    command = [ln.strip() for ln in inside.splitlines() if ln.strip() and not ln.strip().startswith("```")]
    assert command == ['pip install ".[test]" && pytest']
