"""Download BSDS500 safely: checksum, safe extraction, per-file verification against a shipped manifest.

The archive is downloaded to a temporary file beside the destination; when
its SHA-256 is known (``sha256=``) it is checked *before* anything is
extracted. Extraction goes to a staging folder and refuses members with an
absolute path, a ``..`` component, links, devices or anything else that is
not a plain file or folder. Every data file is then checked against the
SHA-256 manifest shipped with segensemble (built from a reference copy), and
only a complete, verified ``BSDS500/data`` tree is moved into place. Nothing
from an archive that fails any check reaches the destination.
"""

from __future__ import annotations

import hashlib
import lzma
import shutil
import tarfile
import tempfile
import urllib.request
import zipfile
import zlib
from importlib import resources
from pathlib import Path, PurePosixPath

from segensemble.atomic import file_digest
from segensemble.errors import InputError, describe_exception

__all__ = ["fetch_bsds500", "build_manifest", "read_manifest", "verify_tree", "safe_extract", "DEFAULT_URL",
           "MAX_DOWNLOAD_BYTES", "MAX_MEMBER_BYTES", "EXTRACT_FACTOR"]

#: The archive published by the Berkeley vision group (BSR: BSDS500 + benchmark code).
DEFAULT_URL = "http://www.eecs.berkeley.edu/Research/Projects/CS/vision/grouping/BSR/BSR_bsds500.tgz"
MANIFEST_NAME = "bsds500_manifest.txt"
#: Largest download accepted (the BSDS500 data are 60 MB in 1 000 files; the archive holds a little more).
MAX_DOWNLOAD_BYTES = 256 * 1024**2
#: Largest single file extracted (the largest BSDS500 data file is 126 kB).
MAX_MEMBER_BYTES = 64 * 1024**2
#: The files extracted from an archive may total at most this many times the download cap.
EXTRACT_FACTOR = 4


def build_manifest(data_dir) -> str:
    """Manifest text: ``<sha256>  <path relative to data_dir>`` for every file, sorted.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "a.txt").write_text("x")
    >>> build_manifest(d).split()
    ['2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881', 'a.txt']
    """
    data = Path(data_dir)
    lines = [f"{file_digest(p)}  {p.relative_to(data).as_posix()}" for p in sorted(data.rglob("*")) if p.is_file()]
    return "\n".join(lines) + "\n"


def read_manifest(text: str | None = None) -> dict:
    """{relative path: sha256} from manifest text (default: the one shipped with segensemble).

    Examples
    --------
    >>> len(read_manifest()) > 0
    True
    """
    if text is None:
        text = resources.files("segensemble.datasets").joinpath(MANIFEST_NAME).read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        if line.strip():
            digest, _, rel = line.partition("  ")
            out[rel] = digest
    return out


def verify_tree(data_dir, manifest: dict) -> list:
    """Problems of a data tree against a manifest (missing or altered files); empty when it matches.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "a.txt").write_text("x")
    >>> verify_tree(d, read_manifest(build_manifest(d))), verify_tree(d, {"b.txt": "0"})
    ([], ['b.txt: missing'])
    """
    data = Path(data_dir)
    problems = []
    for rel, digest in manifest.items():
        p = data / rel
        if not p.is_file():
            problems.append(f"{rel}: missing")
        elif file_digest(p) != digest:
            problems.append(f"{rel}: SHA-256 mismatch")
    return problems


def _check_member_name(name: str, archive: str) -> PurePosixPath:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise InputError(f"{archive}: refused: member {name!r} has an absolute path")
    if ".." in path.parts:
        raise InputError(f"{archive}: refused: member {name!r} escapes the destination ('..')")
    return path


def safe_extract(archive, dest, *, name: str | None = None, max_member: int = MAX_MEMBER_BYTES,
                 max_total: int = EXTRACT_FACTOR * MAX_DOWNLOAD_BYTES) -> None:
    """Extract a .tar(.gz/.bz2/.xz) or .zip archive, refusing anything that could escape ``dest`` or fill the disk.

    Refused: absolute paths, ``..`` components, symbolic or hard links,
    devices, FIFOs, a member declaring more than ``max_member`` bytes, and
    members declaring more than ``max_total`` bytes together. The whole
    archive is checked before the first file is written, and the bytes
    actually written are counted against the same limits (a member cannot
    lie about its size).

    Examples
    --------
    >>> import io, tempfile
    >>> d = Path(tempfile.mkdtemp()); buf = io.BytesIO()
    >>> with tarfile.open(fileobj=buf, mode="w") as t:
    ...     info = tarfile.TarInfo("../evil"); info.size = 0; t.addfile(info, io.BytesIO())
    >>> _ = (d / "a.tar").write_bytes(buf.getvalue())
    >>> safe_extract(d / "a.tar", d / "out")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: ...a.tar: refused: member '../evil' escapes the destination ('..')
    """
    archive, dest = Path(archive), Path(dest)
    label = str(archive) if name is None else name
    dest.mkdir(parents=True, exist_ok=True)
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                entries = []
                for info in zf.infolist():
                    mode = (info.external_attr >> 16) & 0o170000
                    plain = not mode or mode in (0o100000, 0o040000)  # only regular files and folders
                    entries.append((info.filename, plain, info.is_dir(), info.file_size,
                                    lambda info=info: zf.open(info)))
                _write_members(entries, dest, label, max_member, max_total)
            return
        try:
            tf = tarfile.open(archive)
        except (tarfile.TarError, OSError) as exc:
            raise InputError(f"{label}: not a readable tar or zip archive ({describe_exception(exc)})") from exc
        with tf:
            entries = [(m.name, m.isfile() or m.isdir(), m.isdir(), m.size, lambda m=m: tf.extractfile(m))
                       for m in tf.getmembers()]
            _write_members(entries, dest, label, max_member, max_total)
    except (EOFError, zlib.error, lzma.LZMAError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise InputError(f"{label}: corrupt or truncated archive ({describe_exception(exc)})") from exc


def _too_big(archive: str, what: str, size: int, limit: int) -> InputError:
    return InputError(f"{archive}: refused: {what} {size:,} bytes, above the limit of {limit:,} "
                      "(an archive bomb, or raise --max-bytes)")


def _write_members(entries, dest: Path, archive: str, max_member: int, max_total: int) -> None:
    """Check every (name, plain, is_dir, size, open) entry first, then write them under ``dest``, counting bytes."""
    declared = 0
    for name, plain, _, size, _ in entries:
        _check_member_name(name, archive)
        if not plain:
            raise InputError(f"{archive}: refused: member {name!r} is a link or special file")
        if size > max_member:
            raise _too_big(archive, f"member {name!r} declares", size, max_member)
        declared += size
        if declared > max_total:
            raise _too_big(archive, "the members declare more than", max_total, max_total)
    written = 0
    for name, _, is_dir, _, opener in entries:
        target = dest.joinpath(*_check_member_name(name, archive).parts)
        if is_dir:
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with opener() as src, open(target, "wb") as dst:
            size = 0
            for block in iter(lambda: src.read(1 << 20), b""):
                size += len(block)
                written += len(block)
                if size > max_member:
                    raise _too_big(archive, f"member {name!r} holds more than", max_member, max_member)
                if written > max_total:
                    raise _too_big(archive, "the members hold more than", max_total, max_total)
                dst.write(block)


def _find_data_dir(root: Path, manifest: dict) -> Path | None:
    probe = next(iter(manifest))
    for cand in [root, *sorted(p for p in root.rglob("data") if p.is_dir())]:
        if (cand / probe).is_file():
            return cand
    return None


def _download(url: str, target: Path, max_bytes: int, progress) -> str:
    """Stream ``url`` into ``target``, at most ``max_bytes``; return the SHA-256 computed on the way."""
    h = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=60) as resp, open(target, "wb") as out:
            total = resp.headers.get("Content-Length")
            total = int(total) if total and total.isdigit() else None
            if total is not None and total > max_bytes:
                raise InputError(f"--max-bytes: {url} announces {total:,} bytes, above the limit of {max_bytes:,}")
            done = 0
            for block in iter(lambda: resp.read(1 << 20), b""):
                done += len(block)
                if done > max_bytes:
                    raise InputError(f"--max-bytes: the download from {url} exceeds {max_bytes:,} bytes; stopped "
                                     "(a wrong URL, or raise --max-bytes)")
                out.write(block)
                h.update(block)
                if progress:
                    progress(done, total)
    except InputError:
        raise
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"download of {url} failed: {exc}") from exc
    return h.hexdigest()


def fetch_bsds500(dest, *, url: str = DEFAULT_URL, sha256: str | None = None, manifest: dict | None = None,
                  progress=None, max_bytes: int = MAX_DOWNLOAD_BYTES) -> Path:
    """Download, check and install BSDS500 under ``dest`` (``dest/BSDS500/data/...``).

    Parameters
    ----------
    dest : path
        Destination folder; the result is ``dest/BSDS500``, ready for
        ``--bsds``.
    url : str
        Archive address (http(s) or file), tar(.gz) or zip, holding a
        ``.../data/{images,groundTruth}/...`` tree.
    sha256 : str, optional
        Expected SHA-256 of the archive, checked before extraction.
    manifest : dict, optional
        {relative path: sha256} of the data files (default: the shipped
        BSDS500 manifest).
    progress : callable, optional
        ``progress(bytes_done, bytes_total_or_None)`` while downloading.
    max_bytes : int, default :data:`MAX_DOWNLOAD_BYTES`
        The download stops (nothing installed) past this many bytes; the
        extracted files may total :data:`EXTRACT_FACTOR` times as much, one
        file at most :data:`MAX_MEMBER_BYTES`.

    Returns
    -------
    Path of ``dest/BSDS500``.

    Examples
    --------
    >>> import tempfile
    >>> src = Path(tempfile.mkdtemp()); data = src / "BSR" / "BSDS500" / "data" / "images" / "test"
    >>> data.mkdir(parents=True); _ = (data / "1.jpg").write_bytes(b"jpeg bytes")
    >>> with tarfile.open(src / "bsr.tgz", "w:gz") as tf:
    ...     tf.add(src / "BSR", arcname="BSR")
    >>> manifest = read_manifest(build_manifest(src / "BSR" / "BSDS500" / "data"))
    >>> root = fetch_bsds500(src / "dest", url=(src / "bsr.tgz").as_uri(), manifest=manifest)
    >>> root.name, sorted(p.name for p in (root / "data" / "images" / "test").iterdir())
    ('BSDS500', ['1.jpg'])
    """
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise InputError(f"--dest: {dest} exists and is not a folder")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise InputError(f"max_bytes: expected a positive integer, got {max_bytes!r}")
    if sha256 is not None and (len(sha256) != 64 or any(c not in "0123456789abcdefABCDEF" for c in sha256)):
        raise InputError(f"--sha256: expected 64 hexadecimal digits, got {sha256!r}")
    manifest = read_manifest() if manifest is None else manifest
    final = dest / "BSDS500"
    if (final / "data").is_dir() and not verify_tree(final / "data", manifest):
        return final  # already there and intact
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest, prefix=".fetch-") as tmp:
        tmp = Path(tmp)
        archive = tmp / "archive"
        digest = _download(url, archive, max_bytes, progress)
        if sha256 is not None and digest != sha256.lower():
            raise InputError(f"--sha256: the archive from {url} has SHA-256 {digest}, expected {sha256}")
        staging = tmp / "staging"
        safe_extract(archive, staging, name=url, max_total=EXTRACT_FACTOR * max_bytes)
        data = _find_data_dir(staging, manifest)
        if data is None:
            raise InputError(f"{url}: the archive holds no BSDS500 data tree ({next(iter(manifest))} not found)")
        problems = verify_tree(data, manifest)
        if problems:
            shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
            raise InputError(f"{url}: {len(problems)} file(s) fail the SHA-256 manifest: {shown}")
        if final.exists():
            shutil.rmtree(final)
        final.mkdir(parents=True)
        shutil.move(str(data), str(final / "data"))
    return final
