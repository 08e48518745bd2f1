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


_BLOCK = 1 << 16


def content_digest(fd, size):
    """SHA-256 of a file's logical content, holes read as zeros, in time
    and memory that follow its data rather than its size: the corpus has
    1 TiB sparse files.  Each 64 KiB block that holds data (SEEK_DATA) and
    is not all zeros is hashed with its offset, so two files with the same
    bytes have the same digest whatever their hole layout."""
    h = hashlib.sha256(b"%d:" % size)
    zero = bytes(_BLOCK)
    done = -1       # the last block hashed
    off = 0
    while off < size:
        try:
            data = os.lseek(fd, off, os.SEEK_DATA)
            hole = os.lseek(fd, data, os.SEEK_HOLE)
        except OSError:     # ENXIO: no data past OFF
            break
        block = data // _BLOCK
        while block * _BLOCK < hole:
            if block > done:
                chunk = os.pread(fd, _BLOCK, block * _BLOCK)
                if chunk != zero[:len(chunk)]:
                    h.update(b"%d:" % block + chunk)
                done = block
            block += 1
        off = hole
    return h.hexdigest()


def tree(top, mtime=True, owner=True):
    """What TOP holds, as a sorted list of tuples: relative path, type,
    mode, owner, size, SHA-256 of contents, link target, mtime (not for
    directories, whose mtime changes as they fill).

    Walked with directory fds and no recursion, so that trees deeper than
    PATH_MAX or than Python's recursion limit (the corpus has both) are
    read; a directory's fd is closed once its last child is opened, so a
    deep chain holds two fds at a time."""
    out = []
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(top, flags | os.O_DIRECTORY)
    stack = [[fd, "", sorted(os.listdir(fd), reverse=True)]]
    while stack:
        frame = stack[-1]
        dfd, drel, names = frame
        if not names:
            os.close(dfd)
            stack.pop()
            continue
        n = names.pop()
        rel = os.path.join(drel, n)
        st = os.lstat(n, dir_fd=dfd)
        row = [rel, stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode)]
        if owner:
            row += [st.st_uid, st.st_gid]
        if stat.S_ISREG(st.st_mode):
            ffd = os.open(n, flags, dir_fd=dfd)
            try:
                row += [st.st_size, content_digest(ffd, st.st_size)]
            finally:
                os.close(ffd)
        elif stat.S_ISLNK(st.st_mode):
            row += [os.readlink(n, dir_fd=dfd)]
        if mtime and not stat.S_ISDIR(st.st_mode):
            row += [st.st_mtime_ns]
        out.append(tuple(row))
        if stat.S_ISDIR(st.st_mode):
            cfd = os.open(n, flags | os.O_DIRECTORY, dir_fd=dfd)
            if not names:
                os.close(dfd)
                stack.pop()
            stack.append([cfd, rel, sorted(os.listdir(cfd), reverse=True)])
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
    every change outside DEST.  The test's archives go in ARCHIVES, a
    directory beside TOP (archive()), so that writing one is no change."""

    def __init__(self, top, archives):
        self.top = str(top)
        self.archives = str(archives)
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

    def archive(self, name):
        """Where the test writes the archive NAME: outside TOP."""
        return os.path.join(self.archives, name)

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
    (tmp_path / "top").mkdir()
    (tmp_path / "archives").mkdir()
    return Sandbox(tmp_path / "top", tmp_path / "archives")


@pytest.fixture
def dest(tmp_path):
    d = tmp_path / "dest"
    d.mkdir()
    return str(d)


@pytest.fixture
def se():
    return safe_extract
