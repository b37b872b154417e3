"""The HTML report of a bench run: structure, and loading in a real headless browser."""

import os
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from segensemble.cli import app

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.imgs = [], set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "img":
            self.imgs.append(a)


@pytest.fixture(scope="module")
def bench_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    result = CliRunner().invoke(app, ["bench", "--synthetic", "--out", str(out), "--limit", "2"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["report", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_report_structure(bench_out):
    from segensemble.pipeline.recipes import BUILTIN

    page = (bench_out / "report.html").read_text()
    p = _Collect()
    p.feed(page)
    assert {"dataset-table", "hierarchy-table", "pr-curve"} <= p.ids
    n_members = len(BUILTIN["default"].segmenters)
    assert len(p.imgs) == 2 * (n_members + 4)  # per image: input, every member, fused, matches, confidence
    assert all(i["src"].startswith("data:image/jpeg;base64,") for i in p.imgs)
    assert {"input", "fused", "slic:n_segments=200", "boundary confidence (hierarchy)"} <= {i["alt"] for i in p.imgs}
    views = [i["alt"] for i in p.imgs if i["alt"].startswith("boundaries of hierarchy level")]
    assert len(views) == 2 and all("(ODS): matched green, false blue, missed red" in v for v in views)
    assert not any(f'{attr}="http' in page or f"{attr}='http" in page for attr in ("src", "href"))  # self-contained


def test_report_refuses_a_folder_without_a_bench(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "summary.json" in result.stderr


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("SEGENSEMBLE_REQUIRE_BROWSER"),
                    reason="no chromium on this machine (CI installs Debian's chromium)")
def test_report_loads_in_headless_chromium(bench_out):
    assert CHROMIUM, "SEGENSEMBLE_REQUIRE_BROWSER is set but chromium is missing"
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000", "--dump-dom",
         (bench_out / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120,
    ).stdout
    p = _Collect()
    p.feed(dom)
    assert {"dataset-table", "hierarchy-table", "pr-curve"} <= p.ids
    loaded = dom.split('data-images-loaded="')[1].split('"')[0]
    assert int(loaded) == len(p.imgs) > 0  # the browser decoded every embedded image


def test_soft_method_confidence_reaches_the_report(tmp_path):
    import numpy as np

    from segensemble.io import read_image

    result = CliRunner().invoke(app, ["bench", "--synthetic", "--out", str(tmp_path), "--limit", "1", "-m", "vote_sum",
                                      "-s", "slic,felzenszwalb", "-k", "3"])
    assert result.exit_code == 0, result.output
    conf = read_image(next((tmp_path / "confidence").glob("*.png")))
    assert conf.min() >= 1 / 3 - 0.01 and conf.max() == 1.0  # largest of three memberships
    assert CliRunner().invoke(app, ["report", str(tmp_path)]).exit_code == 0
    p = _Collect()
    p.feed((tmp_path / "report.html").read_text())
    assert "confidence" in {i["alt"] for i in p.imgs}
    assert not np.isnan(conf).any()
