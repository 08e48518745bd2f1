"""Every kind of source: a path (str, bytes, PathLike), bytes-like
content, file objects (regular, at an offset, pipe-backed, in memory),
and the failures of each.  No fd may stay open after any of them."""
import io
import mmap
import os
import pathlib
import subprocess
import threading
import zipfile

import pytest

import safe_extract
from conftest import CORPUS, open_fds, tar_bytes, tree

MEMBERS = [("d", "d"), ("f", "d/a", "alpha\n"), ("f", "b", os.urandom(300000))]


@pytest.fixture
def archive(tmp_path):
    p = tmp_path / "a.tar"
    p.write_bytes(tar_bytes(MEMBERS))
    return p


@pytest.fixture
def reference(tmp_path, archive):
    d = tmp_path / "ref"
    d.mkdir()
    assert safe_extract.extract(str(archive), str(d)).status == 0
    return tree(str(d))


def _check(result, d, reference):
    assert result.status == 0
    assert tree(str(d)) == reference


def _dest(tmp_path, name):
    d = tmp_path / name
    d.mkdir()
    return d


@pytest.mark.parametrize("kind", ["str", "bytes", "pathlike"])
def test_path_source(tmp_path, archive, reference, kind):
    src = {"str": str(archive), "bytes": os.fsencode(str(archive)),
           "pathlike": pathlib.Path(archive)}[kind]
    d = _dest(tmp_path, "d")
    _check(safe_extract.extract(src, str(d)), d, reference)


@pytest.mark.parametrize("kind", ["bytearray", "memoryview", "mmap"])
def test_bytes_like_source(tmp_path, archive, reference, kind):
    data = archive.read_bytes()
    d = _dest(tmp_path, "d")
    if kind == "mmap":
        with open(archive, "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as m:
            _check(safe_extract.extract(m, str(d)), d, reference)
        return
    src = bytearray(data) if kind == "bytearray" else memoryview(data)
    _check(safe_extract.extract(src, str(d)), d, reference)


def test_bytes_with_nul_is_not_taken_as_a_path(archive, dest):
    with pytest.raises(ValueError, match="memoryview"):
        safe_extract.extract(archive.read_bytes(), dest)


def test_regular_file_object(tmp_path, archive, reference):
    d = _dest(tmp_path, "d")
    with open(archive, "rb") as f:
        f.read(10)
        f.seek(0)
        _check(safe_extract.extract(f, str(d)), d, reference)


def test_file_object_at_an_offset_is_read_from_there(tmp_path, archive, reference):
    # An archive after a header of the caller's own: read as a stream
    # from the object's position, not from the file's start.
    p = tmp_path / "wrapped"
    p.write_bytes(b"HEADER--" * 64 + archive.read_bytes())
    d = _dest(tmp_path, "d")
    with open(p, "rb") as f:
        f.read(512)
        _check(safe_extract.extract(f, str(d)), d, reference)


def test_bytesio_source(tmp_path, archive, reference):
    d = _dest(tmp_path, "d")
    _check(safe_extract.extract(io.BytesIO(archive.read_bytes()), str(d)), d, reference)


def test_pipe_backed_file_object(tmp_path, archive, reference):
    d = _dest(tmp_path, "d")
    with subprocess.Popen(["cat", str(archive)], stdout=subprocess.PIPE) as p:
        r = safe_extract.extract(p.stdout, str(d))
    _check(r, d, reference)


def test_pipe_fed_by_a_thread_in_small_pieces(tmp_path, archive, reference):
    data = archive.read_bytes()
    rfd, wfd = os.pipe()

    def writer():
        with os.fdopen(wfd, "wb", buffering=0) as w:
            for i in range(0, len(data), 777):
                w.write(data[i:i + 777])
    t = threading.Thread(target=writer)
    t.start()
    d = _dest(tmp_path, "d")
    with os.fdopen(rfd, "rb") as f:
        r = safe_extract.extract(f, str(d))
    t.join()
    _check(r, d, reference)


def test_zip_from_file_object_and_memory(tmp_path):
    z = tmp_path / "a.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("x/one", "one\n")
        zf.writestr("two", "two\n")
    for src in (lambda: open(z, "rb"), lambda: bytearray(z.read_bytes())):
        d = _dest(tmp_path, "d%d" % len(os.listdir(tmp_path)))
        s = src()
        try:
            r = safe_extract.extract(s, str(d))
        finally:
            if hasattr(s, "close"):
                s.close()
        assert r.status == 0
        assert (d / "x/one").read_text() == "one\n"


def test_compressed_corpus_archive_from_a_pipe(tmp_path):
    src = os.path.join(CORPUS, "corpus", "compressed-gz.tar.gz")
    if not os.path.exists(src):
        pytest.skip("no %s" % src)
    d = _dest(tmp_path, "d")
    with subprocess.Popen(["cat", src], stdout=subprocess.PIPE) as p:
        r = safe_extract.extract(p.stdout, str(d))
    assert r.status == 1
    assert any(e.action == "refused" for e in r.entries)


class Broken(io.RawIOBase):
    """A stream that fails after N bytes."""

    def __init__(self, data, n):
        self.data, self.n, self.pos = data, n, 0

    def readable(self):
        return True

    def readinto(self, b):
        if self.pos >= self.n:
            raise OSError(5, "the disk went away")
        k = min(len(b), self.n - self.pos, 4096)
        b[:k] = self.data[self.pos:self.pos + k]
        self.pos += k
        return k


def test_read_error_of_a_file_object_propagates(tmp_path, archive, dest):
    data = archive.read_bytes()
    with pytest.raises(OSError, match="the disk went away"):
        safe_extract.extract(io.BufferedReader(Broken(data, 100000)), dest)
    from conftest import temporaries
    assert temporaries(dest) == []


def test_text_file_object_is_a_type_error(tmp_path, archive, dest):
    with open(archive, "r", encoding="latin-1") as f:
        with pytest.raises(TypeError, match="binary mode"):
            safe_extract.extract(f, dest)


def test_read_returning_str_is_a_type_error(dest):
    class Wrong:
        def read(self, n=-1):
            return "text"
    with pytest.raises(TypeError, match="returned str, not bytes"):
        safe_extract.extract(Wrong(), dest)


@pytest.mark.parametrize("src", [3, 2.5, None, ["a.tar"]])
def test_unknown_source_type(dest, src):
    with pytest.raises(TypeError, match="source must be a path"):
        safe_extract.extract(src, dest)


def test_no_fd_leak(tmp_path, archive):
    """Every kind of source, success, refusal, fatal error and an
    exception in a callback: the fds open before are the fds open after."""
    data = archive.read_bytes()

    def raiser(e):
        raise KeyError("stop")

    def runs():
        yield str(archive), {}
        yield bytearray(data), {}
        yield io.BytesIO(data), {}
        yield open(archive, "rb"), {}
        yield io.BytesIO(data), {"on_entry": raiser}
        yield io.BytesIO(data[:5000]), {}
        yield str(tmp_path / "missing"), {}
        yield io.BytesIO(tar_bytes([("f", "../x", "x")])), {}
    before = open_fds()
    for i in range(3):
        for src, kw in runs():
            d = _dest(tmp_path, "leak%d" % len(os.listdir(tmp_path)))
            try:
                safe_extract.extract(src, str(d), **kw)
            except (safe_extract.FatalError, KeyError):
                pass
            finally:
                if hasattr(src, "close"):
                    src.close()
        with subprocess.Popen(["cat", str(archive)], stdout=subprocess.PIPE) as p:
            safe_extract.extract(p.stdout, str(_dest(tmp_path, "pipe%d" % i)))
    assert open_fds() == before
