"""A self-contained HTML report of a bench run: per image, the input, every member, the fused result, scores.

Images are embedded as base64 JPEG thumbnails (200 pixels wide) and the precision/recall figure
is inline SVG, so the page is one file that opens anywhere (no network, no
external assets).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import cv2
import numpy as np

from segensemble.atomic import atomic_write_text
from segensemble.errors import FileFormatError, InputError
from segensemble.io import read_image, read_labels, read_segmentations
from segensemble.datasets import BSDS500
from segensemble.evaluation.benchmark import ImageEvaluation
from segensemble.evaluation.boundaries import boundary_matches, seg2bdry
from segensemble.batch.drawing import draw_boundaries, draw_matches

__all__ = ["write_report", "draw_boundaries", "draw_matches"]

THUMB_WIDTH = 200


def _jpeg_data_uri(rgb: np.ndarray) -> str:
    img = np.clip(np.asarray(rgb, dtype=np.float64), 0, 1)
    h, w = img.shape[:2]
    if w > THUMB_WIDTH:
        img = cv2.resize(img, (THUMB_WIDTH, max(1, round(h * THUMB_WIDTH / w))), interpolation=cv2.INTER_AREA)
    if img.ndim == 2:
        img = np.repeat(img[:, :, None], 3, axis=2)
    ok, buf = cv2.imencode(".jpg", np.round(img[:, :, ::-1] * 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 85])
    return "data:image/jpeg;base64," + base64.b64encode(buf.tobytes()).decode("ascii")


def _match_figure(out: Path, ds, split: str, image_id: str, image, fused, ods_t) -> tuple[str, np.ndarray]:
    """Caption and view of the boundary matches: the hierarchy's level at its ODS threshold, else the fused result."""
    labels, what = fused, "fused"
    segs = out / "segs" / f"{image_id}.mat"
    if ods_t is not None and segs.is_file():
        levels = read_segmentations(segs)
        k = int(np.clip(round(ods_t) - 1, 0, len(levels) - 1))  # 'segs' thresholds are 1..n
        labels, what = levels[k], f"hierarchy level {k + 1} (ODS)"
    tp, fp, fn = boundary_matches(seg2bdry(labels), ds.ground_truth(split, image_id).boundaries)
    return f"boundaries of {what}: matched green, false blue, missed red", draw_matches(image, tp, fp, fn)


def _pr_svg(curve: dict, size: int = 320) -> str:
    pts = [(r, p) for r, p in zip(curve["recall"], curve["precision"]) if r > 0 or p > 0]
    coords = " ".join(f"{30 + r * (size - 40):.1f},{size - 30 - p * (size - 40):.1f}" for r, p in pts)
    iso = []
    for f in (0.2, 0.4, 0.6, 0.8):  # iso-F curves
        rs = np.linspace(f / (2 - f) + 1e-3, 1, 40)
        ps = f * rs / (2 * rs - f)
        iso.append(" ".join(f"{30 + r * (size - 40):.1f},{size - 30 - p * (size - 40):.1f}"
                            for r, p in zip(rs, ps) if 0 <= p <= 1))
    lines = "".join(f'<polyline points="{c}" fill="none" stroke="#ccc" stroke-width="1"/>' for c in iso)
    return (f'<svg id="pr-curve" xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
            f'role="img" aria-label="precision-recall curve">'
            f'<rect x="30" y="10" width="{size - 40}" height="{size - 40}" fill="none" stroke="#444"/>{lines}'
            f'<polyline points="{coords}" fill="none" stroke="#c00" stroke-width="2"/>'
            f'<text x="{size / 2}" y="{size - 8}" text-anchor="middle" font-size="12">recall</text>'
            f'<text x="12" y="{size / 2}" text-anchor="middle" font-size="12" '
            f'transform="rotate(-90 12 {size / 2})">precision</text></svg>')


def _read_json(path: Path, keys) -> dict:
    """A JSON object written by ``bench`` with the given keys, or an error naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise FileFormatError(f"{path}: not a readable bench record ({type(exc).__name__}: {exc})") from exc
    missing = [k for k in keys if not isinstance(data, dict) or k not in data]
    if missing:
        raise FileFormatError(f"{path}: not a bench record (missing {', '.join(missing)})")
    return data


def write_report(out_dir, *, output=None, limit: int | None = None) -> Path:
    """Write ``report.html`` for a ``segensemble bench`` output folder.

    Parameters
    ----------
    out_dir : path
        A bench output (``summary.json``, ``per_image/``, ``fused/``, and
        ``members/`` when present).
    output : path, optional
        Default ``out_dir/report.html``.
    limit : int, optional
        Only the first images (sorted ids) get a per-image section.

    Returns
    -------
    Path of the report.

    Examples
    --------
    >>> import tempfile
    >>> from segensemble.batch.bench import run_bench
    >>> d = tempfile.mkdtemp(); _ = run_bench(d, synthetic_images=1)
    >>> write_report(d).name
    'report.html'
    """
    out = Path(out_dir)
    summary_path = out / "summary.json"
    if not summary_path.is_file():
        raise InputError(f"OUT_DIR: {out} has no summary.json (run 'segensemble bench --out {out}' first)")
    summary = _read_json(summary_path, ("dataset", "split", "n_images"))
    ds = BSDS500(summary["dataset"])
    split = summary["split"]
    ids = sorted(p.stem for p in (out / "per_image").glob("*.json"))
    if limit is not None:
        ids = ids[:limit]
    cfg = summary.get("config", {})
    members = list(cfg.get("segmenters", []))
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>segensemble report: {esc(str(summary['dataset']))} ({esc(split)})</title>",
        "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
        "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}th{background:#eee}"
        ".image{margin:1.5em 0;border-top:2px solid #444}.strip{display:flex;flex-wrap:wrap;gap:8px}"
        "figure{margin:0}figcaption{font-size:12px;text-align:center}</style></head><body>",
        f"<h1>segensemble bench report</h1><p>{summary['n_images']} images of {esc(str(summary['dataset']))}, "
        f"split {esc(split)}, recipe {esc(str(cfg.get('recipe', '')))}, method {esc(str(cfg.get('method', '')))}</p>",
        "<h2>Dataset scores (one segmentation per image)</h2><table id='dataset-table'><tr><th>method</th>"
        "<th>covering ↑</th><th>PRI ↑</th><th>VOI ↓</th><th>boundary F ↑</th><th>regions</th></tr>",
    ]
    for name, s in summary.get("table", {}).items():
        parts.append(f"<tr class='method'><td>{esc(name)}</td><td>{s['covering']:.4f}</td><td>{s['pri']:.4f}</td>"
                     f"<td>{s['voi']:.4f}</td><td>{s['f']:.4f}</td><td>{s['n_segments']:.1f}</td></tr>")
    parts.append("</table>")
    h = summary.get("hierarchy")
    ods_t = h["boundary"]["ods"]["threshold"] if h and h.get("boundary") else None
    if h and h.get("region") and h.get("boundary"):
        r, b = h["region"], h["boundary"]
        parts.append("<h2>Hierarchy</h2><table id='hierarchy-table'><tr><th></th><th>covering</th><th>PRI</th>"
                     "<th>VOI</th><th>boundary F</th></tr>")
        parts.append(f"<tr><td>ODS</td><td>{r['covering']['ods']:.4f}</td><td>{r['pri']['ods']:.4f}</td>"
                     f"<td>{r['voi']['ods']:.4f}</td><td>{b['ods']['f']:.4f}</td></tr>")
        parts.append(f"<tr><td>OIS</td><td>{r['covering']['ois']:.4f}</td><td>{r['pri']['ois']:.4f}</td>"
                     f"<td>{r['voi']['ois']:.4f}</td><td>{b['ois']['f']:.4f}</td></tr></table>")
        curve = _read_json(out / "eval_hierarchy" / "summary.json", ()).get("pr_curve") \
            if (out / "eval_hierarchy" / "summary.json").is_file() else None
        if curve:
            parts.append("<h2>Precision / recall of the hierarchy's boundaries</h2>" + _pr_svg(curve))
    parts.append("<h2>Images</h2>")
    for image_id in ids:
        rec = _read_json(out / "per_image" / f"{image_id}.json", ("fused", "members"))
        image = ds.image(split, image_id)
        fused = read_labels(out / "fused" / f"{image_id}.png")
        figs = [("input", image)]
        member_labels = read_segmentations(out / "members" / f"{image_id}.mat") \
            if (out / "members" / f"{image_id}.mat").is_file() else []
        for name, lab in zip(members, member_labels):
            figs.append((name, draw_boundaries(image, lab)))
        figs.append(("fused", draw_boundaries(image, fused)))
        figs.append(_match_figure(out, ds, split, image_id, image, fused, ods_t))
        conf = out / "confidence" / f"{image_id}.png"
        if conf.is_file():
            kind = rec.get("confidence")
            caption = "boundary confidence (hierarchy)" if kind == "hierarchy" else "confidence"
            figs.append((caption, read_image(conf)))
        parts.append(f"<section class='image' id='img-{esc(image_id)}'><h3>{esc(image_id)}</h3><div class='strip'>")
        for caption, pic in figs:
            parts.append(f"<figure><img alt='{esc(caption)}' src='{_jpeg_data_uri(pic)}'>"
                         f"<figcaption>{esc(caption)}</figcaption></figure>")
        parts.append("</div><table class='scores'><tr><th>method</th><th>covering</th><th>PRI</th><th>VOI</th>"
                     "<th>F</th></tr>")
        for name in members + ["fused"]:
            try:
                s = ImageEvaluation.from_dict(rec["fused"] if name == "fused" else rec["members"][name]).scores()
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise FileFormatError(f"{out / 'per_image' / (image_id + '.json')}: no readable scores for {name!r} "
                                      f"({type(exc).__name__}: {exc})") from exc
            parts.append(f"<tr><td>{esc(name)}</td><td>{s['covering']:.3f}</td><td>{s['pri']:.3f}</td>"
                         f"<td>{s['voi']:.3f}</td><td>{s['f']:.3f}</td></tr>")
        parts.append("</table></section>")
    # marks how many embedded images the browser decoded (checked by the headless-browser test)
    parts.append("<script>window.addEventListener('load',function(){var n=0;document.querySelectorAll('img')"
                 ".forEach(function(i){if(i.complete&&i.naturalWidth>0)n++;});"
                 "document.body.setAttribute('data-images-loaded',n);});</script>")
    parts.append("</body></html>")
    target = Path(output) if output is not None else out / "report.html"
    atomic_write_text(target, "\n".join(parts))
    return target
