"""The Berkeley precision/recall figure (needs the ``plot`` extra: matplotlib)."""

from __future__ import annotations

import io

import numpy as np

from segensemble.atomic import atomic_write_bytes
from segensemble.errors import InputError

__all__ = ["plot_pr", "pr_figure"]


def plot_pr(curves: dict, path, *, title: str = "Boundary precision/recall") -> None:
    """Write a precision/recall figure with iso-F curves (:func:`pr_figure`), atomically.

    Parameters
    ----------
    curves : dict name -> (recall, precision, ods_f[, (ods_recall, ods_precision)])
        One curve per method; the ODS F is shown in the legend, the ODS point (when given) marked.
    path : path
        PNG, PDF or SVG output.

    Examples
    --------
    >>> import tempfile, os
    >>> plot_pr({"m": ([0.2, 0.6, 0.9], [0.95, 0.8, 0.5], 0.7)}, os.path.join(tempfile.mkdtemp(), "pr.png"))
    """
    suffix = str(path).rsplit(".", 1)[-1].lower() if "." in str(path) else "png"
    atomic_write_bytes(path, pr_figure(curves, suffix, title=title))


def pr_figure(curves: dict, fmt: str = "png", *, title: str = "Boundary precision/recall") -> bytes:
    """The precision/recall figure as bytes: ``fmt`` 'png' (660 x 660 pixels), 'svg' or 'pdf'.

    Examples
    --------
    >>> pr_figure({"m": ([0.2, 0.6, 0.9], [0.95, 0.8, 0.5], 0.7)}, "svg")[:5]
    b'<?xml'
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise InputError("plot: the figure needs matplotlib: pip install 'segensemble[plot]'") from exc
    fig, ax = plt.subplots(figsize=(5.5, 5.5), dpi=120)
    r = np.linspace(0.01, 1, 200)
    for f in np.arange(0.1, 1.0, 0.1):
        p = f * r / (2 * r - f)
        ok = (p > 0) & (p <= 1)
        ax.plot(r[ok], p[ok], color="0.85", lw=0.8, zorder=0)
        k = np.flatnonzero(ok)
        if len(k):
            ax.annotate(f"F={f:.1f}", (r[k[-1]], p[k[-1]]), fontsize=6, color="0.6")
    for name, (rec, prec, ods_f, *ods_point) in curves.items():
        shown = str(name).replace("$", r"\$")  # a label is text, never mathtext
        line, = ax.plot(rec, prec, lw=2, label=f"[F={ods_f:.3f}] {shown}")
        if ods_point:  # the ODS operating point, as plot_eval.m marks it
            ax.plot(*ods_point[0], "o", color=line.get_color(), ms=6)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="Recall", ylabel="Precision", title=title)
    ax.grid(True, color="0.92")
    ax.legend(loc="lower left", fontsize=8)
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format=fmt)  # a fixed size: figsize x dpi (660 x 660 px)
    plt.close(fig)
    return buf.getvalue()
