"""Declared array sizes of a MATLAB ``.mat`` file, read before ``scipy.io.loadmat`` allocates anything.

A few hundred kilobytes of compressed ``.mat`` can declare a 20000x20000
array; ``loadmat`` would allocate it. This scanner walks the element
headers of a MAT-file (level 5, the format of the BSDS files, and level 4),
streaming through compressed elements with a bounded buffer, and stops at
the first array whose declared number of elements is above the limit, and
when the declared total is. Array data are skipped, never kept.

Format: *MAT-File Format*, The MathWorks, 2019, ch. 1 (level 4) and ch. 2
(level 5: 128-byte header, tagged data elements, ``miCOMPRESSED`` zlib
streams, ``miMATRIX`` with array flags, dimensions, name and sub-elements).
"""

from __future__ import annotations

import struct
import zlib

__all__ = ["MatSizeError", "scan_mat"]

_MI_INT8, _MI_INT32, _MI_UINT32, _MI_MATRIX, _MI_COMPRESSED = 1, 5, 6, 14, 15
_CELL, _STRUCT, _OBJECT = 1, 2, 3
_CHUNK = 1 << 16
#: Array flags, dimensions and names are a few bytes; more is a damaged or hostile file.
_MAX_HEADER_BYTES = 1 << 20


class MatSizeError(Exception):
    """A declared array (or the declared total) is above the limit; ``args = (elements, limit, what)``."""


class _FileStream:
    def __init__(self, fh):
        self.fh = fh

    def read(self, n: int) -> bytes:
        return self.fh.read(n)

    def skip(self, n: int) -> None:
        self.fh.seek(n, 1)

    def tell(self) -> int:
        return self.fh.tell()


class _ZlibStream:
    """Decompressed view of ``nbytes`` compressed bytes of ``parent``; memory bounded by the chunk size."""

    def __init__(self, parent, nbytes: int):
        self.parent, self.left = parent, nbytes
        self.dec = zlib.decompressobj()
        self.buf = b""
        self.pos = 0

    def _more(self) -> bool:
        if self.dec.unconsumed_tail:
            out = self.dec.decompress(self.dec.unconsumed_tail, _CHUNK)
        elif self.left > 0:
            data = self.parent.read(min(_CHUNK, self.left))
            if not data:
                return False
            self.left -= len(data)
            out = self.dec.decompress(data, _CHUNK)
        else:
            return False
        self.buf += out
        return True

    def read(self, n: int) -> bytes:
        while len(self.buf) < n and self._more():
            pass
        out, self.buf = self.buf[:n], self.buf[n:]
        self.pos += len(out)
        return out

    def skip(self, n: int) -> None:
        while n > 0:
            if not self.buf and not self._more():
                return
            k = min(n, len(self.buf))
            self.buf = self.buf[k:]
            self.pos += k
            n -= k

    def tell(self) -> int:
        return self.pos


class _Recorder:
    """A stream that keeps every byte read or skipped from ``source`` (the element handed to the reader)."""

    def __init__(self, source):
        self.source, self.data = source, bytearray()

    def read(self, n: int) -> bytes:
        out = self.source.read(n)
        self.data += out
        return out

    def skip(self, n: int) -> None:
        while n > 0:
            chunk = self.read(min(n, _CHUNK))
            if not chunk:
                return
            n -= len(chunk)

    def tell(self) -> int:
        return self.source.tell()


#: Bytes an array's data may take per declared element (complex double: 16) and for its tags and padding.
_BYTES_PER_ELEMENT, _DATA_SLACK = 16, 256
_SPARSE = 5


class _Scanner:
    def __init__(self, endian: str, limit: int, total_limit: int):
        self.e, self.limit, self.total_limit, self.total = endian, limit, total_limit, 0

    def tag(self, s):
        raw = s.read(8)
        if len(raw) < 8:
            return None
        dtype, nbytes = struct.unpack(self.e + "II", raw)
        if dtype >> 16:  # small data element: type and size in the first word, data in the second
            return dtype & 0xFFFF, dtype >> 16, raw[4:4 + (dtype >> 16)], True
        return dtype, nbytes, None, False

    def element_data(self, s, nbytes: int, small, is_small: bool) -> bytes:
        if is_small:
            return small
        if nbytes > _MAX_HEADER_BYTES:
            raise MatSizeError(nbytes, _MAX_HEADER_BYTES, "bytes of an array header (flags, dimensions or names)")
        data = s.read(nbytes)
        s.skip((-nbytes) % 8)
        return data

    def count(self, n: int, what: str) -> None:
        if n > self.limit:
            raise MatSizeError(n, self.limit, what)
        self.total += n
        if self.total > self.total_limit:
            raise MatSizeError(self.total, self.total_limit, "all arrays together")

    def matrix(self, s, nbytes: int, what: str) -> None:
        if nbytes == 0:
            return
        end = s.tell() + nbytes
        t = self.tag(s)
        if t is None:
            return
        flags = self.element_data(s, t[1], t[2], t[3])
        cls = struct.unpack(self.e + "I", flags[:4])[0] & 0xFF if len(flags) >= 4 else 0
        nzmax = struct.unpack(self.e + "I", flags[4:8])[0] if cls == _SPARSE and len(flags) >= 8 else 0
        t = self.tag(s)
        if t is None:
            return
        dims_raw = self.element_data(s, t[1], t[2], t[3])
        dims = struct.unpack(self.e + f"{len(dims_raw) // 4}i", dims_raw[: len(dims_raw) // 4 * 4])
        n = 1
        for d in dims:
            n *= max(int(d), 0)
        dims_text = "x".join(str(d) for d in dims)
        t = self.tag(s)  # array name
        if t is None:
            return
        name = self.element_data(s, t[1], t[2], t[3]).rstrip(b"\0").decode("latin-1", "replace")
        label = f"{what}{'.' if what and name else ''}{name}" or "array"
        if cls in (_CELL, _STRUCT, _OBJECT):
            if cls == _OBJECT:  # class name
                t = self.tag(s)
                self.element_data(s, t[1], t[2], t[3])
            n_fields = 1
            if cls in (_STRUCT, _OBJECT):
                t = self.tag(s)  # field name length
                width = struct.unpack(self.e + "i", self.element_data(s, t[1], t[2], t[3])[:4])[0]
                t = self.tag(s)
                names = self.element_data(s, t[1], t[2], t[3])
                n_fields = len(names) // width if width > 0 else 0
            self.count(n * max(n_fields, 1), f"{label} ({dims_text} cells)")
            for _ in range(n * n_fields):
                t = self.tag(s)
                if t is None:
                    return
                self.matrix(s, t[1], label)
        else:
            self.count(n + nzmax, f"{label} ({dims_text}{f', {nzmax:,} non-zeros' if nzmax else ''})")
        here = s.tell()
        data = _BYTES_PER_ELEMENT * (n + nzmax) + 8 * (dims[-1] + 1 if dims else 0) + _DATA_SLACK
        if 4 <= cls <= 15 and end - here > data:  # numeric, char, sparse: more bytes than the array can hold
            raise MatSizeError(end - here, data, f"bytes of data for {label} ({dims_text})")
        if end > here:
            s.skip(end - here)


def _scan_v4(fh, limit: int, total_limit: int) -> None:
    scanner = _Scanner("<", limit, total_limit)
    while True:
        head = fh.read(20)
        if len(head) < 20:
            return
        mopt = struct.unpack("<i", head[:4])[0]
        endian = "<" if 0 <= mopt < 5000 else ">"
        mopt, mrows, ncols, imagf, namlen = struct.unpack(endian + "5i", head)
        prec = (mopt % 100) // 10
        size = {0: 8, 1: 4, 2: 4, 3: 2, 4: 2, 5: 1}.get(prec, 8)
        scanner.count(max(mrows, 0) * max(ncols, 0), f"{mrows}x{ncols} matrix")
        fh.seek(max(namlen, 0) + max(mrows, 0) * max(ncols, 0) * size * (2 if imagf else 1), 1)


def scan_mat(path, limit: int, total_limit: int, *, keep: bool = False) -> bytes | None:
    """Raise :class:`MatSizeError` when an array the file declares has more than ``limit`` elements.

    Cells and structs count their elements too; the declared total of all
    arrays may not exceed ``total_limit``. Files this scanner cannot follow
    (HDF5-based v7.3, damaged headers) are left to the reader's own errors.

    With ``keep``, a level-5 file is returned as the bytes of the same file
    uncompressed (every ``miCOMPRESSED`` element replaced by the element it
    holds), read and decompressed once, for ``scipy.io.loadmat`` to parse
    without decompressing again; None for files it cannot follow (and
    without ``keep``). Memory: the arrays' declared sizes, which are checked
    before their data is read.

    Examples
    --------
    >>> import io, tempfile, os, numpy as np, scipy.io
    >>> p = os.path.join(tempfile.mkdtemp(), "s.mat")
    >>> scipy.io.savemat(p, {"segs": np.zeros((30, 40))}, do_compression=True)
    >>> scan_mat(p, 1200, 10_000)
    >>> scan_mat(p, 1000, 10_000)
    Traceback (most recent call last):
    ...
    segensemble.io._matscan.MatSizeError: (1200, 1000, 'segs (30x40)')
    """
    with open(path, "rb") as fh:
        head = fh.read(128)
        if len(head) < 128 or not head.startswith(b"MATLAB 5.0"):
            if len(head) >= 20 and not head.startswith(b"MATLAB"):
                fh.seek(0)
                try:
                    _scan_v4(fh, limit, total_limit)
                except struct.error:
                    pass
            return
        endian = {b"IM": "<", b"MI": ">"}.get(head[126:128])
        version = struct.unpack((endian or "<") + "H", head[124:126])[0]
        if endian is None or version != 0x0100:  # not level 5 (v7.3 is HDF5): the reader refuses it
            return
        scanner = _Scanner(endian, limit, total_limit)
        stream = _FileStream(fh)
        out = bytearray(head) if keep else None
        try:
            while True:
                t = scanner.tag(stream)
                if t is None:
                    return None if out is None else bytes(out)
                dtype, nbytes = t[0], t[1]
                start = stream.tell()
                if dtype == _MI_COMPRESSED:
                    inner = _Recorder(_ZlibStream(stream, nbytes)) if keep else _ZlibStream(stream, nbytes)
                    t2 = scanner.tag(inner)
                    if t2 is None or t2[0] != _MI_MATRIX:
                        if keep:  # not an array inside: the reader takes the file as it is
                            return None
                    else:
                        scanner.matrix(inner, t2[1], "")
                    if keep:
                        if len(inner.data) != 8 + t2[1]:  # a damaged element: the reader reports it
                            return None
                        out += inner.data + bytes((-len(inner.data)) % 8)
                    fh.seek(start + nbytes)
                elif dtype == _MI_MATRIX:
                    inner = _Recorder(stream) if keep else stream  # the element kept as it is read, not read again
                    scanner.matrix(inner, nbytes, "")
                    fh.seek(start + nbytes + (-nbytes) % 8)
                    if keep:
                        if len(inner.data) != nbytes:  # a damaged element: the reader reports it
                            return None
                        out += struct.pack(endian + "II", dtype, nbytes) + inner.data + bytes((-nbytes) % 8)
                else:
                    stream.skip(nbytes + (-nbytes) % 8)
        except (struct.error, zlib.error, TypeError, IndexError, ValueError):
            return None  # a damaged file: loadmat reports it
