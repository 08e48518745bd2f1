"""Shared helpers of the safe_extract tests.

Run by python/tests/*.test (pytest.sh) with SAFE_EXTRACT_LIBRARY naming
this build's library and the package from the source tree; by hand:

    SAFE_EXTRACT_LIBRARY=$B/src/lib/.libs/libsafe-extract.so.0 \\
    PYTHONPATH=python top_builddir=$B /usr/bin/python3 -m pytest python/tests

Archives are written with tarfile's writer (writing is safe); nothing here
extracts with tarfile.
"""
import hashlib
import io
import os
import stat
import tarfile

import pytest

import safe_extract

TOP_SRCDIR = os.environ.get("top_srcdir") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
TOP_BUILDDIR = os.environ.get("top_builddir")
CLI = os.environ.get("SAFE_EXTRACT") or (
    os.path.join(TOP_BUILDDIR, "src", "safe-extract") if TOP_BUILDDIR else None)
CORPUS = os.path.join(TOP_SRCDIR, "tests", "archives")


def tar_bytes(members, fmt=tarfile.PAX_FORMAT):
    """A tar archive, in memory, of MEMBERS: tuples
    ('f', name, content[, mode]), ('d', name[, mode]), ('l', name, target),
    ('h', name, target), ('p', name) for a fifo, with uid/gid 1234."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        for m in members:
            kind, name = m[0], m[1]
            ti = tarfile.TarInfo(name)
            ti.uid = ti.gid = 1234
            ti.uname = ti.gname = ""
            ti.mtime = 1700000000
            data = None
            if kind == "f":
                data = m[2].encode() if isinstance(m[2], str) else m[2]
                ti.size = len(data)
                ti.mode = m[3] if len(m) > 3 else 0o644
            elif kind == "d":
                ti.type = tarfile.DIRTYPE
                ti.mode = m[2] if len(m) > 2 else 0o755
            elif kind == "l":
                ti.type = tarfile.SYMTYPE
                ti.linkname = m[2]
                ti.mode = 0o777
            elif kind == "h":
                ti.type = tarfile.LNKTYPE
                ti.linkname = m[2]
                ti.mode = 0o644
            elif kind == "p":
                ti.type = tarfile.FIFOTYPE
                ti.mode = 0o644
            else:
                raise ValueError("unknown member kind %r" % kind)
            tf.addfile(ti, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def write_tar(path, members, **kw):
    with open(path, "wb") as f:
        f.write(tar_bytes(members, **kw))
    return str(path)


def tree(top, mtime=True, owner=True):
    """What TOP holds, as a sorted list of tuples: relative path, type,
    mode, owner, size, SHA-256 of contents, link target, mtime (not for
    directories, whose mtime changes as they fill)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        for n in sorted(dirnames + filenames):
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            rel = os.path.relpath(p, top)
            row = [rel, stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode)]
            if owner:
                row += [st.st_uid, st.st_gid]
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    row += [st.st_size, hashlib.sha256(f.read()).hexdigest()]
            elif stat.S_ISLNK(st.st_mode):
                row += [os.readlink(p)]
            if mtime and not stat.S_ISDIR(st.st_mode):
                row += [st.st_mtime_ns]
            out.append(tuple(row))
    return sorted(out)


def temporaries(top):
    """Names the library uses for its temporaries, left anywhere in TOP."""
    left = []
    for dirpath, dirnames, filenames in os.walk(top):
        left += [os.path.join(dirpath, n) for n in dirnames + filenames
                 if n.startswith(".safe-extract-")]
    return left


def open_fds():
    return sorted(os.listdir("/proc/self/fd"))


class Sandbox:
    """TOP/l1/l2/s/{dest,outside/victim,flag}: DEST four levels down, so
    that links climbing out of it land inside TOP, where snapshot() sees
    every change outside DEST."""

    def __init__(self, top):
        self.top = str(top)
        self.s = os.path.join(self.top, "l1", "l2", "s")
        self.dest = os.path.join(self.s, "dest")
        self.outside = os.path.join(self.s, "outside")
        os.makedirs(self.dest)
        os.makedirs(self.outside)
        with open(os.path.join(self.outside, "victim"), "w") as f:
            f.write("victim\n")
        with open(os.path.join(self.s, "flag"), "w") as f:
            f.write("flag\n")
        self.before = self.snapshot()

    def snapshot(self):
        return [row for row in tree(self.top)
                if not (row[0] + "/").startswith(
                    os.path.relpath(self.dest, self.top) + "/")]

    def changed_outside(self):
        """What changed outside DEST since the sandbox was made."""
        after = self.snapshot()
        return sorted(set(self.before) ^ set(after))


@pytest.fixture
def sandbox(tmp_path):
    return Sandbox(tmp_path)


@pytest.fixture
def dest(tmp_path):
    d = tmp_path / "dest"
    d.mkdir()
    return str(d)


@pytest.fixture
def se():
    return safe_extract
