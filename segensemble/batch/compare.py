"""Compare benchmarked methods side by side: one precision/recall figure, one table.

Each input is a folder written by ``segensemble score`` (its ``summary.json``)
or by ``segensemble bench`` (its hierarchy's ``eval_hierarchy/summary.json``).
The figure is the Berkeley one (``plot_eval.m``): every method's dataset
precision/recall curve over its thresholds on iso-F contours, its ODS point
marked, the ODS F in the legend. The table puts the boundary ODS / OIS / AP
beside the region scores (covering, PRI, VOI at ODS and OIS) and, when
present, GCE / LCE / BDE.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from segensemble.errors import FileFormatError, InputError
from segensemble.atomic import atomic_write_all
from segensemble.batch.folders import output_lock
from segensemble.validation import check_distinct_paths, check_output_path
from segensemble.evaluation.plot import pr_figure

__all__ = ["COLUMNS", "compare_results", "load_scored", "present_columns"]

#: Table columns: (key, header, higher is better).
COLUMNS = (
    ("ods_f", "ODS F", True), ("ois_f", "OIS F", True), ("ap", "AP", True), ("r50", "R50", True),
    ("covering_ods", "cover ODS", True), ("covering_ois", "cover OIS", True),
    ("pri_ods", "PRI ODS", True), ("pri_ois", "PRI OIS", True),
    ("voi_ods", "VOI ODS", False), ("voi_ois", "VOI OIS", False),
    ("fop_ods", "Fop ODS", True), ("fop_ois", "Fop OIS", True),
    ("gce_ods", "GCE", False), ("lce_ods", "LCE", False), ("bde_ods", "BDE", False),
)


def _summary_file(folder: Path) -> Path:
    for p in (folder / "eval_hierarchy" / "summary.json", folder / "summary.json"):
        if p.is_file():
            return p
    raise InputError(f"RESULTS: {folder} has no summary.json (a 'segensemble score' or 'bench' output folder)")


def load_scored(folder) -> dict:
    """The scores and curve of one ``score`` / ``bench`` output folder.

    Returns
    -------
    dict
        ``n_images``, the :data:`COLUMNS` keys present (floats), and
        ``curve`` = (recall list, precision list) when the boundary benchmark ran.

    Examples
    --------
    >>> import tempfile
    >>> load_scored(tempfile.mkdtemp())
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: RESULTS: ... has no summary.json (a 'segensemble score' or 'bench' output folder)
    """
    path = _summary_file(Path(folder))
    if path.stat().st_size > MAX_SUMMARY_BYTES:
        raise FileFormatError(f"{path}: {path.stat().st_size:,} bytes; a benchmark summary has at most "
                              f"{MAX_SUMMARY_BYTES:,}")
    try:
        s = json.loads(path.read_text())
        if not isinstance(s, dict):
            raise TypeError(f"expected an object, got {type(s).__name__}")
        n = s["n_images"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n_images: expected a whole number >= 0, got {n!r}")
        row = {"n_images": n}
        if "boundary" in s:
            b = _table(s["boundary"], "boundary")
            ods, ois = _table(b["ods"], "boundary.ods"), _table(b["ois"], "boundary.ois")
            row.update(ods_f=_score(ods["f"], "boundary.ods.f"), ods_r=_score(ods["recall"], "boundary.ods.recall"),
                       ods_p=_score(ods["precision"], "boundary.ods.precision"),
                       ois_f=_score(ois["f"], "boundary.ois.f"), ap=_score(b["ap"], "boundary.ap"))
            if b.get("r50") is not None:  # summaries written before R50 have none
                row["r50"] = _score(b["r50"], "boundary.r50")
            row["curve"] = _curve(s.get("pr_curve"))
        for name, scores in _table(s.get("region", {}), "region").items():
            for k, v in _table(scores, f"region.{name}").items():
                if k in ("ods", "ois"):
                    row[f"{name}_{k}"] = _score(v, f"region.{name}.{k}", unit=name not in _UNBOUNDED)
    except (ValueError, KeyError, TypeError) as exc:
        raise FileFormatError(f"{path}: not a benchmark summary ({type(exc).__name__}: {exc})") from exc
    return row


#: Largest summary.json read (bytes): a 200-image summary with a 99-point curve is about 20 kB.
MAX_SUMMARY_BYTES = 10_000_000
#: Region measures that are not in [0, 1] (VOI in bits, BDE in pixels).
_UNBOUNDED = ("voi", "bde")


def _table(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise TypeError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _score(value, where: str, *, unit: bool = True) -> float:
    """A finite score, in [0, 1] unless ``unit`` is False (then >= 0)."""
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: expected a finite number, got {value!r}")
    if value < 0 or (unit and value > 1):
        raise ValueError(f"{where}: expected a value in {'[0, 1]' if unit else '[0, inf)'}, got {value!r}")
    return float(value)


def _curve(c):
    """(recall, precision) of a summary's ``pr_curve``: two lists of the same length, each value in [0, 1]."""
    if c is None:
        return None
    c = _table(c, "pr_curve")
    r, p = c["recall"], c["precision"]
    if not isinstance(r, list) or not isinstance(p, list) or len(r) != len(p) or not r:
        raise ValueError("pr_curve: expected recall and precision lists of one non-zero length")
    return [_score(v, "pr_curve.recall") for v in r], [_score(v, "pr_curve.precision") for v in p]


def _labels(folders, labels) -> list[str]:
    if labels is None:
        names = [Path(f).resolve().name or str(f) for f in folders]
        return [n if names.count(n) == 1 else str(f) for n, f in zip(names, folders)]
    labels = list(labels)
    if len(labels) != len(folders):
        raise InputError(f"labels: expected {len(folders)} labels (one per folder), got {len(labels)}")
    return labels


def compare_results(folders, *, labels=None, out_dir=None, figure: str = "png") -> dict:
    """Compare several benchmarked methods; optionally write the figure and the tables.

    Parameters
    ----------
    folders : list of paths
        ``segensemble score`` or ``segensemble bench`` output folders.
    labels : list of str, optional
        One name per folder (default: the folder names).
    out_dir : path, optional
        Receives ``compare.<figure>`` (the precision/recall figure; needs the
        ``plot`` extra), ``compare.csv``, ``compare.md`` and ``compare.html``
        (the table and the figure as inline SVG: one self-contained page).
    figure : {'png', 'svg', 'pdf'}, default 'png'

    Returns
    -------
    dict
        label -> row of :func:`load_scored` (without the curve).

    Examples
    --------
    >>> import tempfile, os
    >>> from segensemble.datasets import make_synthetic_dataset
    >>> from segensemble.io import read_ground_truth, write_labels
    >>> from segensemble.batch.score import score_results
    >>> root = make_synthetic_dataset(tempfile.mkdtemp(), n_images=2, shape=(30, 40))
    >>> gt_dir = root / "data" / "groundTruth" / "test"
    >>> res, scored = tempfile.mkdtemp(), tempfile.mkdtemp()
    >>> for p in sorted(gt_dir.glob("*.mat")):
    ...     _ = write_labels(os.path.join(res, p.stem + ".png"), read_ground_truth(p).segmentations[0])
    >>> _ = score_results(res, gt_dir, scored)
    >>> rows = compare_results([scored], labels=["human 1"])
    >>> sorted(rows), rows["human 1"]["ods_f"] > 0.6
    (['human 1'], True)
    """
    folders = [Path(f) for f in folders]
    if not folders:
        raise InputError("RESULTS: expected at least one scored folder, got none")
    if figure not in ("png", "svg", "pdf"):
        raise InputError(f"figure: expected 'png', 'svg' or 'pdf', got {figure!r}")
    names = _labels(folders, labels)
    rows = {name: load_scored(f) for name, f in zip(names, folders)}
    if out_dir is not None:
        out = check_output_path(Path(out_dir), "--out", folder=True)
        check_distinct_paths({"--out": out}, {f"RESULTS[{i}]": f for i, f in enumerate(folders)})
        curves = {n: (*r["curve"], r["ods_f"], (r["ods_r"], r["ods_p"])) for n, r in rows.items() if r.get("curve")}
        files, svg = {}, ""
        if curves:
            files[out / f"compare.{figure}"] = drawn = pr_figure(curves, figure)
            svg = (drawn if figure == "svg" else pr_figure(curves, "svg")).decode("utf-8")
        files[out / "compare.csv"] = _csv(rows).encode()
        files[out / "compare.md"] = _markdown(rows).encode()
        files[out / "compare.html"] = _html(rows, svg).encode()
        with output_lock(out, "--out"):  # every output drawn first, then written together
            atomic_write_all(files)
    return {n: {k: v for k, v in r.items() if k != "curve"} for n, r in rows.items()}


def present_columns(rows: dict) -> list[tuple]:
    """The :data:`COLUMNS` that at least one row has (a score-only-boundaries folder has no region columns).

    Examples
    --------
    >>> [c[0] for c in present_columns({"a": {"ods_f": 0.7, "ap": 0.6}})]
    ['ods_f', 'ap']
    """
    return [c for c in COLUMNS if any(c[0] in r for r in rows.values())]


def _best(rows: dict, cols) -> dict:
    """Best value of every column (max or min by its direction); None where fewer than two rows have it."""
    best = {}
    for key, _, up in cols:
        vals = [r[key] for r in rows.values() if key in r]
        best[key] = (max(vals) if up else min(vals)) if len(vals) > 1 else None  # bold only among several
    return best


def _csv(rows) -> str:
    cols = present_columns(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["method", "n_images", *[c[0] for c in cols]])
    for name, r in rows.items():
        w.writerow([name, r["n_images"], *[f"{r[c[0]]:.6g}" if c[0] in r else "" for c in cols]])
    return buf.getvalue()


def _markdown(rows) -> str:
    """Markdown table; the best value of every column in bold."""
    cols = present_columns(rows)
    lines = ["| method | images | " + " | ".join(f"{h} {'↑' if up else '↓'}" for _, h, up in cols) + " |",
             "|---|---|" + "---|" * len(cols)]
    best = _best(rows, cols)
    for name, r in rows.items():
        cells = [("**{:.4f}**" if r[k] == best[k] else "{:.4f}").format(r[k]) if k in r else "" for k, _, _ in cols]
        shown = str(name).replace("\\", "\\\\").replace("|", "\\|")  # a '|' in a label is not a column
        lines.append(f"| {shown} | {r['n_images']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _html(rows, svg: str) -> str:
    """One self-contained page: the table (best value per column in bold) and the figure as inline SVG."""
    import html

    cols = present_columns(rows)
    best = _best(rows, cols)
    head = "".join(f"<th>{html.escape(h)} {'↑' if up else '↓'}</th>" for _, h, up in cols)
    body = []
    for name, r in rows.items():
        cells = "".join(("<td><b>{:.4f}</b></td>" if r[k] == best[k] else "<td>{:.4f}</td>").format(r[k])
                        if k in r else "<td></td>" for k, _, _ in cols)
        body.append(f"<tr><td>{html.escape(name)}</td><td>{r['n_images']}</td>{cells}</tr>")
    svg = svg[svg.find("<svg"):] if "<svg" in svg else ""
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>segensemble compare</title>"
            "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
            "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}th{background:#eee}</style></head><body>"
            "<h1>Benchmark comparison</h1><table id='compare-table'><tr><th>method</th><th>images</th>" + head
            + "</tr>" + "".join(body) + "</table>" + (f"<div id='pr-figure'>{svg}</div>" if svg else "")
            + "</body></html>\n")
