"""Helpers of the hostile-input tests: run a command, expect one error line, check nothing was written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from segensemble.cli import app

runner = CliRunner()


def snapshot(folder: Path) -> dict:
    """Every file under ``folder`` with its bytes."""
    return {p: p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()}


@pytest.fixture
def refused():
    """``refused(args, *words, folder=...)``: exit 2, one stderr line holding every word, ``folder`` unchanged."""

    def check(args, *words, folder=None, code=2):
        before = snapshot(folder) if folder is not None else None
        result = runner.invoke(app, [str(a) for a in args])
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.exit_code == code, (args, result.exit_code, result.output)
        assert len(lines) == 1 and lines[0].startswith("error: "), lines
        for word in words:
            assert word in lines[0], (word, lines[0])
        if folder is not None:
            assert snapshot(folder) == before, "files were written or changed"
        return lines[0]

    return check


@pytest.fixture
def photo(tmp_path) -> Path:
    """A small two-region photo (PNG)."""
    from segensemble.io import write_image

    img = np.zeros((40, 60, 3))
    img[:, 30:] = (0.9, 0.2, 0.1)
    return write_image(tmp_path / "photo.png", img)
