"""Writers of the official BSDS500 benchmark output files.

Same file names, columns and number format (MATLAB ``%10g`` / ``%10d``) as
``collect_eval_bdry.m`` and ``collect_eval_reg.m``.
"""

from __future__ import annotations

from pathlib import Path

from segensemble.atomic import atomic_write_text
from segensemble.evaluation.aggregate import BoundarySummary, RegionSummary

__all__ = ["format_row", "official_files", "write_official_files"]


def format_row(*values, int_first: bool = False) -> str:
    """One line as MATLAB ``fprintf('%10g %10g ...\\n', ...)`` prints it.

    Examples
    --------
    >>> format_row(3, 0.5, 1 / 3, int_first=True)
    '         3        0.5   0.333333\\n'
    """
    parts = []
    for k, v in enumerate(values):
        parts.append(f"{int(v):10d}" if (int_first and k == 0) else f"{float(v):10g}")
    return " ".join(parts) + "\n"


def official_files(boundary: BoundarySummary | None = None, region: RegionSummary | None = None) -> dict:
    """Text of every official output file, by file name.

    Examples
    --------
    >>> import numpy as np
    >>> from segensemble.evaluation.aggregate import collect_regions, ImageRegionResult
    >>> r = ImageRegionResult(np.array([1.]), np.array([3.]), np.array([4.]), np.array([1.]),
    ...                       np.array([2.]), np.array([.9]), np.array([1.]), 3.0)
    >>> official_files(region=collect_regions([r]))["eval_cover.txt"]
    '         1       0.75       0.75       0.75\\n'
    """
    files = {}
    if boundary is not None:
        b = boundary
        files["eval_bdry.txt"] = format_row(b.ods_t, b.ods_R, b.ods_P, b.ods_F, b.ois_R, b.ois_P, b.ois_F, b.ap)
        files["eval_bdry_img.txt"] = "".join(
            format_row(i + 1, *row, int_first=True) for i, row in enumerate(b.per_image)
        )
        files["eval_bdry_thr.txt"] = "".join(
            format_row(t, r, p, f) for t, r, p, f in zip(b.thresholds, b.R_thr, b.P_thr, b.F_thr)
        )
    if region is not None:
        r = region
        files["eval_cover.txt"] = format_row(r.covering_ods_t, r.covering_ods, r.covering_ois, r.covering_best)
        files["eval_cover_img.txt"] = "".join(
            format_row(i + 1, *row, int_first=True) for i, row in enumerate(r.per_image)
        )
        files["eval_cover_th.txt"] = "".join(format_row(t, c) for t, c in zip(r.thresholds, r.covering_thr))
        files["eval_RI_VOI.txt"] = format_row(r.pri_ods_t, r.pri_ods, r.pri_ois, r.voi_ods_t, r.voi_ods, r.voi_ois)
        files["eval_RI_VOI_thr.txt"] = "".join(
            format_row(t, p, v) for t, p, v in zip(r.thresholds, r.pri_thr, r.voi_thr)
        )
    return files


def write_official_files(out_dir, boundary: BoundarySummary | None = None, region: RegionSummary | None = None) -> list:
    """Write the official output files atomically; returns their paths.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from segensemble.evaluation.aggregate import collect_regions, ImageRegionResult
    >>> r = ImageRegionResult(np.array([1.]), np.array([3.]), np.array([4.]), np.array([1.]),
    ...                       np.array([2.]), np.array([.9]), np.array([1.]), 3.0)
    >>> sorted(p.name for p in write_official_files(tempfile.mkdtemp(), region=collect_regions([r])))[:2]
    ['eval_RI_VOI.txt', 'eval_RI_VOI_thr.txt']
    """
    out = Path(out_dir)
    return [atomic_write_text(out / name, text) for name, text in official_files(boundary, region).items()]
