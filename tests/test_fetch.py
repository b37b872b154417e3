"""Dataset fetcher: checksums before extraction, safe extraction, manifest verification (local HTTP server)."""

import functools
import hashlib
import http.server
import io
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from segensemble import InputError
from segensemble.cli import app
from segensemble.datasets import make_synthetic_dataset
from segensemble.datasets.fetch import build_manifest, fetch_bsds500, read_manifest, safe_extract, verify_tree


@pytest.fixture
def server(tmp_path):
    """Serve tmp_path/www over HTTP on loopback; yields the base URL."""
    www = tmp_path / "www"
    www.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(www))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield www, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture
def dataset(tmp_path):
    root = make_synthetic_dataset(tmp_path / "src", n_images=2, shape=(20, 30))
    data = Path(root) / "data"
    return data, read_manifest(build_manifest(data))


def _tgz(data: Path, prefix: str = "BSR/BSDS500/data") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(data, arcname=prefix)
    return buf.getvalue()


def _tar_with(member: tarfile.TarInfo, payload: bytes = b"") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        member.size = len(payload) if member.isfile() else 0
        tf.addfile(member, io.BytesIO(payload) if member.isfile() else None)
    return buf.getvalue()


def test_fetch_verifies_and_installs(server, dataset, tmp_path):
    www, base = server
    data, manifest = dataset
    blob = _tgz(data)
    (www / "bsr.tgz").write_bytes(blob)
    dest = tmp_path / "dest"
    root = fetch_bsds500(dest, url=f"{base}/bsr.tgz", sha256=hashlib.sha256(blob).hexdigest(), manifest=manifest)
    assert root == dest / "BSDS500" and verify_tree(root / "data", manifest) == []
    assert [p.name for p in dest.iterdir()] == ["BSDS500"]  # no temporary left
    # a second call finds it intact and downloads nothing
    (www / "bsr.tgz").unlink()
    assert fetch_bsds500(dest, url=f"{base}/bsr.tgz", manifest=manifest) == root


def test_wrong_archive_checksum_is_refused_before_extraction(server, dataset, tmp_path):
    www, base = server
    data, manifest = dataset
    (www / "bsr.tgz").write_bytes(_tgz(data))
    with pytest.raises(InputError, match="--sha256"):
        fetch_bsds500(tmp_path / "dest", url=f"{base}/bsr.tgz", sha256="0" * 64, manifest=manifest)
    assert list((tmp_path / "dest").iterdir()) == []


def test_altered_file_fails_the_manifest_and_nothing_is_installed(server, dataset, tmp_path):
    www, base = server
    data, manifest = dataset
    victim = next(iter(manifest))
    (data / victim).write_bytes(b"tampered")
    (www / "bsr.tgz").write_bytes(_tgz(data))
    with pytest.raises(InputError, match="fail the SHA-256 manifest.*SHA-256 mismatch"):
        fetch_bsds500(tmp_path / "dest", url=f"{base}/bsr.tgz", manifest=manifest)
    assert list((tmp_path / "dest").iterdir()) == []


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "symlink", "hardlink"])
def test_crafted_tar_archives_are_refused(kind, tmp_path):
    if kind == "absolute":
        m = tarfile.TarInfo(str(tmp_path / "outside.txt"))
    elif kind == "dotdot":
        m = tarfile.TarInfo("data/../../outside.txt")
    elif kind == "symlink":
        m = tarfile.TarInfo("data/link")
        m.type, m.linkname = tarfile.SYMTYPE, str(tmp_path / "outside.txt")
    else:
        m = tarfile.TarInfo("data/hard")
        m.type, m.linkname = tarfile.LNKTYPE, "../../outside.txt"
    archive = tmp_path / "evil.tar"
    archive.write_bytes(_tar_with(m, b"pwned"))
    with pytest.raises(InputError, match="refused"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "outside.txt").exists()
    assert not any((tmp_path / "out").rglob("*"))


def test_crafted_zip_archives_are_refused(tmp_path):
    for name in ("../outside.txt", "/abs.txt"):
        archive = tmp_path / "evil.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr(name, b"pwned")
        with pytest.raises(InputError, match="refused"):
            safe_extract(archive, tmp_path / "out")
    info = zipfile.ZipInfo("data/link")
    info.external_attr = (0o120777 << 16)  # a symbolic link entry
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(InputError, match="link or special file"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "outside.txt").exists()


def test_cli_fetch_refuses_a_traversal_archive_with_exit_2(server, tmp_path):
    www, base = server
    (www / "evil.tar").write_bytes(_tar_with(tarfile.TarInfo("../../x.txt"), b"pwned"))
    result = CliRunner().invoke(app, ["datasets", "fetch", "bsds500", "--dest", str(tmp_path / "d"),
                                      "--url", f"{base}/evil.tar"])
    assert result.exit_code == 2, result.output
    assert "refused" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "x.txt").exists()
    bad = CliRunner().invoke(app, ["datasets", "fetch", "cifar", "--dest", str(tmp_path / "d")])
    assert bad.exit_code == 2 and "NAME" in bad.stderr


def test_shipped_manifest_covers_bsds500():
    manifest = read_manifest()
    assert len(manifest) == 1000
    assert sum(p.startswith("images/test/") for p in manifest) == 200
    assert all(len(d) == 64 for d in manifest.values())
