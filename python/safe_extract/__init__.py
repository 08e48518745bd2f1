"""safe_extract - unpack untrusted archives, every operation scoped by the
kernel to one destination directory (libsafe-extract, from Python).

    import safe_extract
    result = safe_extract.extract("upload.tar.gz", "/srv/unpacked")
    result.status      # 0 all extracted, 1 some refused or failed
    result.entries     # [Entry(path, type, action, reason, errno), ...]

A fatal error (the destination or the archive unusable, the archive
damaged or truncated) raises FatalError.  See README.md in this directory
and libsafe-extract(3).

How it reaches the library: cffi in ABI mode.  The declarations below are
written from include/safe-extract.h and the library is loaded with
ffi.dlopen() by its SONAME, libsafe-extract.so.0, at import.  So the
package is pure Python (nothing to compile, no compiler or header needed
where it is installed), it is versioned with the system library rather than
with a copy built into an extension module, and a security fix to the
library reaches Python programs with the library's package alone.  The
price of ABI mode is that a declaration here cannot be checked against
the header by a compiler: the binding therefore uses only functions and
the one struct (se_entry, which starts with its size and is checked) whose
layout the header fixes for every architecture, never struct stat
(Root.lstat() opens the name with O_PATH through the library and fstat()s
that fd instead), and it checks se_version() before the first call.

Which library is loaded: the file that $SAFE_EXTRACT_LIBRARY names (the
test suite points it at the library of the build tree), else the one in
the libdir this package was installed with, else libsafe-extract.so.0 as
the dynamic linker finds it.

The GIL is released during every call into the library (cffi does that
for every call); the entry and log callbacks take it back while Python
code runs.  Distinct extractions may run in distinct threads at once.
"""

import collections
import io
import os
import stat
import threading

__version__ = "0.3.0"

__all__ = ["extract", "Root", "Entry", "Result", "Error", "FatalError",
           "SKIP", "library_version", "library_path", "__version__"]

# The oldest library this binding works with: 0.3 is the first whose
# AFTER callback always has the entry (se_entry.entry never NULL) and
# whose se_entry has the fields declared below.
LIBRARY_NEEDED = (0, 3, 0)
SONAME = "libsafe-extract.so.0"

# From include/safe-extract.h.  Enums are declared as int: a C enum whose
# values fit an int is an int on every Linux ABI.
_CDEF = """
typedef unsigned int mode_t;
typedef struct se_root se_root;
typedef struct se_run se_run;
struct archive;
struct archive_entry;

const char *se_version(void);

int se_root_open(const char *path, unsigned int flags, se_root **root);
const char *se_root_backend(const se_root *root);
int se_root_is_userspace(const se_root *root);
int se_root_openat(se_root *root, const char *path, int oflags, mode_t mode);
int se_root_unlinkat(se_root *root, const char *path, int flags);
int se_root_renameat(se_root *root, const char *from, const char *to,
                     unsigned int flags);
void se_root_close(se_root *root);

se_run *se_run_new(se_root *root, unsigned long long opts);
void se_run_set_umask(se_run *run, mode_t mask);
int se_run_set_jobs(se_run *run, unsigned int n);
int se_run_set_strip_components(se_run *run, int n);
int se_run_add_include(se_run *run, const char *pattern);
int se_run_add_exclude(se_run *run, const char *glob);
const char *se_run_unmatched(const se_run *run, size_t i);

struct se_entry {
    size_t size;
    int stage;
    struct archive_entry *entry;
    const char *path;
    int action;
    int error;
    const char *reason;
    const char *type;
    const char *name;
    uint64_t bytes;
    const unsigned char *sha256;
};
typedef int se_entry_cb(void *data, struct se_entry *e);
int se_run_set_callback(se_run *run, se_entry_cb *cb, void *data);
typedef void se_log_cb(void *data, int level, const char *msg);
int se_run_set_log(se_run *run, se_log_cb *cb, void *data);

int se_run_open_fd(se_run *run, int fd, const char *formats, struct archive **a);
int se_run_archive(se_run *run, struct archive *a);
int se_run_finish(se_run *run);
void se_run_free(se_run *run);

const char *se_action_name(int a);

/* libarchive: a reader from se_run_open_fd() is the caller's to free,
 * and a BEFORE callback renames an entry through its archive_entry. */
int archive_read_free(struct archive *a);
const char *archive_entry_pathname(struct archive_entry *e);
void archive_entry_set_pathname(struct archive_entry *e, const char *name);
const char *archive_entry_hardlink(struct archive_entry *e);
mode_t archive_entry_filetype(struct archive_entry *e);
"""

# se_root_open() flags
_SE_IN_ROOT = 1 << 0
_SE_CROSS_MOUNTS = 1 << 1
_SE_KEEP_DIR_SYMLINKS = 1 << 3
# se_run_new() options
_SE_OPT_KEEP_OLD = 1 << 0
_SE_OPT_DURABLE = 1 << 2
_SE_OPT_SAME_OWNER = 1 << 3
_SE_OPT_SAME_PERMS = 1 << 4
_SE_OPT_NUMERIC_OWNER = 1 << 5
_SE_JOBS_MAX = 64
# struct se_entry .stage, and what an entry callback returns
_SE_BEFORE = 0
_SE_CONTINUE, _SE_SKIP, _SE_ABORT = 0, 1, 2
_SE_LOG_ERROR = 3
_AT_REMOVEDIR = 0x200
_RENAME_NOREPLACE = 1 << 0
_RENAME_EXCHANGE = 1 << 1

# The library's type names (src/lib/plan.c) for a BEFORE entry.
_TYPE_NAMES = {
    stat.S_IFREG: "file", stat.S_IFDIR: "directory", stat.S_IFLNK: "symlink",
    stat.S_IFIFO: "fifo", stat.S_IFCHR: "char-device",
    stat.S_IFBLK: "block-device", stat.S_IFSOCK: "socket",
}


def _version_tuple(text):
    parts = []
    for p in text.split(".")[:3]:
        digits = ""
        for ch in p:
            if not ch.isdigit():
                break
            digits += ch
        parts.append(int(digits or 0))
    return tuple(parts + [0] * (3 - len(parts)))


def _candidates():
    env = os.environ.get("SAFE_EXTRACT_LIBRARY")
    if env:
        return [env]
    found = []
    try:
        from safe_extract import _libdir
        found.append(os.path.join(_libdir.LIBDIR, SONAME))
    except ImportError:
        pass
    found.append(SONAME)
    return found


def _mapped_path(fallback):
    """The file the dynamic linker mapped for the library, for messages."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                if "libsafe-extract.so" in line:
                    return line.split(None, 5)[-1].strip()
    except OSError:
        pass
    return fallback


def _load():
    try:
        import cffi
    except ImportError as e:
        raise ImportError("safe_extract needs cffi (Debian: python3-cffi): %s"
                          % e) from e
    ffi = cffi.FFI()
    ffi.cdef(_CDEF)
    errors = []
    for name in _candidates():
        if "/" in name and not os.path.exists(name):
            errors.append("%s: no such file" % name)
            continue
        try:
            lib = ffi.dlopen(name)
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise ImportError("safe_extract cannot load libsafe-extract "
                          "(Debian: libsafe-extract0): %s" % "; ".join(errors))
    path = _mapped_path(name)
    version = ffi.string(lib.se_version()).decode("ascii", "replace")
    if _version_tuple(version) < LIBRARY_NEEDED:
        raise ImportError(
            "safe_extract %s needs libsafe-extract %s or newer; %s is %s"
            % (__version__, ".".join(map(str, LIBRARY_NEEDED)), path, version))
    # libarchive's functions come through the library's own dependency
    # (dlsym on a handle searches what the handle loaded): the very copy
    # that made the readers.
    try:
        lib.archive_read_free
        arc = lib
    except AttributeError:
        arc = ffi.dlopen("libarchive.so.13")
    return ffi, lib, arc, version, path


_ffi, _lib, _arc, library_version, library_path = _load()


# ---- what a caller gets back ------------------------------------------------

Entry = collections.namedtuple(
    "Entry", "path type action reason errno name bytes", defaults=(None, 0))
Entry.__doc__ = """One entry and what happened to it.

path    the name used, cleaned, relative to the destination (str; bytes
        that are not UTF-8 are surrogate-escaped as os.fsdecode() does);
        the raw name when it was refused before it could be cleaned
type    "file", "directory", "symlink", "hardlink", "fifo", "char-device",
        "block-device", "socket" or "unknown"
action  "created", "replaced", "skipped", "refused", "failed",
        "incomplete", or "unverified" (an entry listed a second time: the
        compressed stream failed a check after its data; the run raises);
        None for the entry on_entry() sees before it is made
reason  why it was refused or failed (printable ASCII), or None
errno   an errno value, or 0
name    the raw name from the archive (what the JSON report calls path)
bytes   data bytes written for it
"""


class _Skip:
    __slots__ = ()

    def __repr__(self):
        return "safe_extract.SKIP"

    def __reduce__(self):
        return "SKIP"


SKIP = _Skip()
"""What on_entry() returns to skip an entry."""


class Result:
    """What extract() did: status (0 every entry extracted, 1 some refused,
    failed or incomplete), entries (a list of Entry in archive order),
    unmatched (include patterns that matched no member) and warnings (the
    library's messages about the run)."""

    def __init__(self, status, entries, unmatched, warnings):
        self.status = status
        self.entries = entries
        self.unmatched = unmatched
        self.warnings = warnings

    def __repr__(self):
        return "<safe_extract.Result status=%d entries=%d>" % (
            self.status, len(self.entries))


class Error(Exception):
    """The base of this package's exceptions."""


class FatalError(Error):
    """The run could not go on: status (2), message, entries done so far,
    errno (0 when the library gave none)."""

    def __init__(self, message, entries=(), errno=0, status=2):
        super().__init__(message)
        self.message = message
        self.status = status
        self.entries = list(entries)
        self.errno = errno


# ---- arguments ---------------------------------------------------------------

def _bool_arg(value, name, none_ok=False):
    if value is None and none_ok:
        return None
    if not isinstance(value, bool):
        raise TypeError("%s must be %s, not %s" % (
            name, "True, False or None" if none_ok else "True or False",
            type(value).__name__))
    return value


def _int_arg(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__))
    return value


def _name_arg(value, name):
    """A path or pattern as the library's bytes: str, bytes or PathLike."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError("%s must be str, bytes or os.PathLike, not %s"
                        % (name, type(value).__name__))
    b = os.fsencode(value)
    if b"\0" in b:
        # cffi would pass the bytes up to the NUL: another name.
        raise ValueError("%s holds a NUL byte: %r" % (name, value))
    return b


def _patterns_arg(value, name):
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError("%s must be a list of patterns, not one %s"
                        % (name, type(value).__name__))
    try:
        items = list(value)
    except TypeError:
        raise TypeError("%s must be a list of patterns, not %s"
                        % (name, type(value).__name__)) from None
    return [_name_arg(p, "a pattern of %s" % name) for p in items]


def _show(path):
    return os.fsdecode(path) if isinstance(path, bytes) else str(path)


def _oserror(err, what):
    return OSError(err, "%s: %s" % (what, os.strerror(err)))


def _process_umask():
    """The umask, read without changing it (umask(2) would race with
    other threads creating files)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


# ---- the archive's bytes -----------------------------------------------------

class _Source:
    """The archive as an fd for se_run_open_fd(): a path opened, bytes-like
    content in a memfd (seekable, so zip and 7z read as from a file), a
    file object's own file when it is a regular file read from its start,
    else a pipe that a thread fills from the object's read()."""

    def __init__(self, source):
        self.fd = -1
        self.what = None
        self._thread = None
        self._wfd = -1
        self.read_error = None
        self._kind = None
        self._obj = None
        if isinstance(source, (str, os.PathLike)) or isinstance(source, bytes):
            # bytes is a path, as in the os module; content comes as
            # bytearray, memoryview or a file object.  A NUL byte means
            # someone passed content: say so rather than guess.
            if isinstance(source, bytes) and b"\0" in source:
                raise ValueError(
                    "source: bytes are taken as a path, and these hold a NUL "
                    "byte; pass archive content as memoryview(data) or "
                    "io.BytesIO(data)")
            self._kind = "path"
            self._obj = _name_arg(source, "source")
            self.what = "'%s'" % _show(source)
        elif hasattr(source, "read"):
            if isinstance(source, io.TextIOBase):
                raise TypeError("source: a file object opened in binary mode "
                                "is needed, not a text one")
            self._kind = "file"
            self._obj = source
            self.what = "the file object %r" % (source,)
        else:
            try:
                view = memoryview(source)
            except TypeError:
                raise TypeError(
                    "source must be a path (str, bytes, os.PathLike), a "
                    "bytes-like object or a binary file object, not %s"
                    % type(source).__name__) from None
            self._kind = "buffer"
            self._obj = view.cast("B") if view.ndim != 1 or view.format != "B" else view
            self.what = "the archive in memory"

    def open(self):
        """The fd, or FatalError."""
        if self._kind == "path":
            try:
                self.fd = os.open(self._obj, os.O_RDONLY | os.O_CLOEXEC)
            except OSError as e:
                raise FatalError("cannot open the archive %s: %s"
                                 % (self.what, e.strerror), errno=e.errno) from None
        elif self._kind == "buffer":
            self._open_buffer()
        else:
            self._open_file()
        return self.fd

    def _open_buffer(self):
        view = self._obj
        try:
            fd = os.memfd_create("safe-extract-archive", os.MFD_CLOEXEC)
        except (AttributeError, OSError):
            self._feed(lambda: view, lambda: None)
            return
        try:
            done = 0
            while done < len(view):
                done += os.write(fd, view[done:])
            os.lseek(fd, 0, os.SEEK_SET)
        except OSError as e:
            os.close(fd)
            raise FatalError("cannot copy the archive in memory to a memfd: %s"
                             % e.strerror, errno=e.errno) from None
        self.fd = fd

    def _open_file(self):
        f = self._obj
        # A regular file read from its start: the library reads it by its
        # own open file description (the object's offset is left alone)
        # and may seek, which zip and 7z need.
        try:
            if f.seekable() and f.tell() == 0:
                st = os.fstat(f.fileno())
                if stat.S_ISREG(st.st_mode):
                    fd = os.open("/proc/self/fd/%d" % f.fileno(),
                                 os.O_RDONLY | os.O_CLOEXEC)
                    if os.path.samestat(os.fstat(fd), st):
                        self.fd = fd
                        return
                    os.close(fd)
        except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
            pass
        def chunk():
            data = f.read(256 * 1024)
            if data is None:
                raise Error("source: %s is non-blocking and had no data" % (f,))
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise TypeError("source: %r.read() returned %s, not bytes"
                                % (f, type(data).__name__))
            return data
        self._feed(None, chunk)

    def _feed(self, whole, chunk):
        """A pipe, and a thread writing into it WHOLE() once, or CHUNK()
        until it returns nothing."""
        rfd, wfd = os.pipe2(os.O_CLOEXEC)
        self.fd, self._wfd = rfd, wfd

        def feeder():
            try:
                if whole is not None:
                    data = memoryview(whole())
                    done = 0
                    while done < len(data):
                        done += os.write(wfd, data[done:])
                    return
                while True:
                    data = chunk()
                    if not data:
                        return
                    data = memoryview(data)
                    done = 0
                    while done < len(data):
                        done += os.write(wfd, data[done:])
            except BrokenPipeError:
                pass        # the run stopped reading: nothing to report
            except BaseException as e:   # noqa: B902 - re-raised by the caller
                self.read_error = e
            finally:
                os.close(wfd)
        self._thread = threading.Thread(target=feeder, daemon=True,
                                        name="safe-extract source")
        self._thread.start()

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)       # a feeder blocked in write() gets EPIPE
            self.fd = -1
        if self._thread is not None:
            self._thread.join()
            self._thread = None


# ---- one run -----------------------------------------------------------------

class _Run:
    """The callbacks' state: entries so far, messages, the first exception
    raised by on_entry (or by this code), which stops the run."""

    def __init__(self, on_entry):
        self.on_entry = on_entry
        self.entries = []
        self.errors = []
        self.warnings = []
        self.exception = None

    def entry(self, data, e):
        try:
            if self.exception is not None:
                return _SE_ABORT
            if e.stage == _SE_BEFORE:
                return self._before(e)
            self._after(e)
            return _SE_CONTINUE
        except BaseException as exc:    # noqa: B902 - re-raised by extract()
            if self.exception is None:
                self.exception = exc
            return _SE_ABORT

    def _before(self, e):
        if self.on_entry is None:
            return _SE_CONTINUE
        raw = _arc.archive_entry_pathname(e.entry)
        name = os.fsdecode(_ffi.string(raw)) if raw != _ffi.NULL else ""
        ftype = _arc.archive_entry_filetype(e.entry)
        kind = _TYPE_NAMES.get(ftype, "unknown")
        if _arc.archive_entry_hardlink(e.entry) != _ffi.NULL:
            kind = "hardlink"
        got = self.on_entry(Entry(name, kind, None, None, 0, name, 0))
        if got is None:
            return _SE_CONTINUE
        if got is SKIP:
            return _SE_SKIP
        if isinstance(got, (str, bytes, os.PathLike)):
            # Cleaned and checked by the library after this callback, as
            # any name from the archive: a new name cannot weaken a check.
            _arc.archive_entry_set_pathname(e.entry, _name_arg(got, "the name on_entry returned"))
            return _SE_CONTINUE
        raise TypeError("on_entry returned %s: expected None, safe_extract.SKIP "
                        "or a new name (str)" % type(got).__name__)

    def _after(self, e):
        def text(p):
            return _ffi.string(p) if p != _ffi.NULL else None
        path = text(e.path)
        name = text(e.name)
        reason = text(e.reason)
        kind = text(e.type)
        self.entries.append(Entry(
            os.fsdecode(path) if path is not None else os.fsdecode(name or b""),
            kind.decode("ascii", "replace") if kind else "unknown",
            _ffi.string(_lib.se_action_name(e.action)).decode("ascii", "replace"),
            reason.decode("ascii", "replace") if reason is not None else None,
            e.error,
            os.fsdecode(name) if name is not None else None,
            e.bytes))

    def log(self, data, level, msg):
        try:
            text = _ffi.string(msg).decode("ascii", "replace")
            (self.errors if level <= _SE_LOG_ERROR else self.warnings).append(text)
        except BaseException as exc:    # noqa: B902
            if self.exception is None:
                self.exception = exc


def _open_root(dest, flags):
    rootp = _ffi.new("se_root **")
    r = _lib.se_root_open(dest, flags, rootp)
    return r, rootp[0]


def extract(source, dest, *, in_root=False, durable=False, keep_old=False,
            strip_components=0, include=None, exclude=None, jobs=None,
            same_owner=None, numeric_owner=False, on_entry=None,
            same_permissions=None, cross_mounts=False,
            keep_directory_symlinks=False):
    """Extract SOURCE into the existing directory DEST; return a Result.

    source     a path (str, bytes, os.PathLike), a bytes-like object other
               than bytes (bytearray, memoryview, mmap), or a binary file
               object (read as it streams; one that is a regular file at
               offset 0 is read through its file, so zip and 7z work)
    dest       the destination directory (the caller's path: symlinks in
               it are followed; nothing inside it is)
    in_root    follow symlinks in the destination, resolved as if DEST
               were '/' (a system image); default: follow none
    durable    fsync everything before it gets its name (--durable)
    keep_old   never replace an existing name
    strip_components  drop N leading name components
    include    patterns: extract only these members (anchored, as tar)
    exclude    globs: skip members they match
    jobs       threads for decoding and writing (1 to 64); None: one
    same_owner restore owners; None: when running as root (as tar)
    numeric_owner  owners by number, never by name
    on_entry   called with an Entry (action None, path the name as the
               archive has it, not yet cleaned) before each entry;
               returns None (go on), SKIP, or a new name, which is
               checked as any archive name ('../x' is refused).  An
               exception raised there stops the run and propagates;
               temporaries are removed.
    same_permissions  modes without the umask; None: when root (as tar)
    cross_mounts      cross mount points below DEST (a weakening)
    keep_directory_symlinks  go through symlinks to directories that were
               in DEST before (tar's --keep-directory-symlink; a weakening)

    Raises TypeError or ValueError for a bad argument (before anything is
    touched), FatalError when the run cannot go on.
    """
    in_root = _bool_arg(in_root, "in_root")
    durable = _bool_arg(durable, "durable")
    keep_old = _bool_arg(keep_old, "keep_old")
    numeric_owner = _bool_arg(numeric_owner, "numeric_owner")
    cross_mounts = _bool_arg(cross_mounts, "cross_mounts")
    keep_directory_symlinks = _bool_arg(keep_directory_symlinks,
                                        "keep_directory_symlinks")
    same_owner = _bool_arg(same_owner, "same_owner", none_ok=True)
    same_permissions = _bool_arg(same_permissions, "same_permissions", none_ok=True)
    strip_components = _int_arg(strip_components, "strip_components")
    if strip_components < 0:
        raise ValueError("strip_components must be 0 or more, not %d"
                         % strip_components)
    if jobs is not None:
        jobs = _int_arg(jobs, "jobs")
        if not 1 <= jobs <= _SE_JOBS_MAX:
            raise ValueError("jobs must be from 1 to %d, not %d"
                             % (_SE_JOBS_MAX, jobs))
    includes = _patterns_arg(include, "include")
    excludes = _patterns_arg(exclude, "exclude")
    if on_entry is not None and not callable(on_entry):
        raise TypeError("on_entry must be callable or None, not %s"
                        % type(on_entry).__name__)
    dest_b = _name_arg(dest, "dest")
    src = _Source(source)
    if in_root and keep_directory_symlinks:
        raise ValueError("in_root and keep_directory_symlinks exclude each other")

    root_flags = ((_SE_IN_ROOT if in_root else 0) |
                  (_SE_CROSS_MOUNTS if cross_mounts else 0) |
                  (_SE_KEEP_DIR_SYMLINKS if keep_directory_symlinks else 0))
    privileged = os.geteuid() == 0
    opts = ((_SE_OPT_KEEP_OLD if keep_old else 0) |
            (_SE_OPT_DURABLE if durable else 0) |
            (_SE_OPT_NUMERIC_OWNER if numeric_owner else 0))
    if same_owner or (same_owner is None and privileged):
        opts |= _SE_OPT_SAME_OWNER
    if same_permissions or (same_permissions is None and privileged):
        opts |= _SE_OPT_SAME_PERMS

    r, root = _open_root(dest_b, root_flags)
    if r < 0:
        raise FatalError("cannot open the destination '%s': %s"
                         % (_show(dest), os.strerror(-r)), errno=-r)
    run = _ffi.NULL
    state = _Run(on_entry)
    try:
        run = _lib.se_run_new(root, opts)
        if run == _ffi.NULL:
            raise MemoryError("se_run_new: out of memory")
        _lib.se_run_set_umask(run, _process_umask())
        _check(_lib.se_run_set_strip_components(run, strip_components),
               "strip_components", strip_components)
        _check(_lib.se_run_set_jobs(run, jobs or 1), "jobs", jobs)
        for p in includes:
            _check(_lib.se_run_add_include(run, p), "include pattern", p)
        for p in excludes:
            _check(_lib.se_run_add_exclude(run, p), "exclude pattern", p)
        # The callbacks stay referenced until the run is freed.
        entry_cb = _ffi.callback("se_entry_cb", state.entry)
        log_cb = _ffi.callback("se_log_cb", state.log)
        _lib.se_run_set_callback(run, entry_cb, _ffi.NULL)
        _lib.se_run_set_log(run, log_cb, _ffi.NULL)

        fd = src.open()
        ap = _ffi.new("struct archive **")
        r = _lib.se_run_open_fd(run, fd, _ffi.NULL, ap)
        if r == 0:
            r = _lib.se_run_archive(run, ap[0])
            _lib.archive_read_free(ap[0])
        status = _lib.se_run_finish(run)
        unmatched = []
        while True:
            p = _lib.se_run_unmatched(run, len(unmatched))
            if p == _ffi.NULL:
                break
            unmatched.append(os.fsdecode(_ffi.string(p)))
    finally:
        # Free the run first: it removes the temporaries it still owns.
        if run != _ffi.NULL:
            _lib.se_run_free(run)
        _lib.se_root_close(root)
        src.close()
    if state.exception is not None:
        raise state.exception
    if src.read_error is not None:
        raise src.read_error
    if r < 0 or status >= 2:
        err = -r if r < 0 else 0
        message = state.errors[-1] if state.errors else (
            "cannot read the archive %s: %s" % (src.what, os.strerror(err))
            if err else "extracting %s into '%s' failed" % (src.what, _show(dest)))
        raise FatalError(message, state.entries, errno=err)
    return Result(status, state.entries, unmatched, state.warnings)


def _check(r, what, value):
    if r < 0:
        raise ValueError("%s %r: %s" % (what, value, os.strerror(-r)))


# ---- the destination, for a program's own steps --------------------------------

class Root:
    """A destination opened once, for a program's own steps after
    extraction (check a file, rename it to .pacnew, remove an old one).
    Every PATH is an archive-style name inside the root, resolved with the
    root's scoping ('..' refused, no symlink followed unless in_root, the
    last component never followed).  Errors raise OSError (its subclasses
    by errno) naming the call and the path."""

    def __init__(self, dest, in_root=False, *, cross_mounts=False,
                 keep_directory_symlinks=False):
        in_root = _bool_arg(in_root, "in_root")
        cross_mounts = _bool_arg(cross_mounts, "cross_mounts")
        keep_directory_symlinks = _bool_arg(keep_directory_symlinks,
                                            "keep_directory_symlinks")
        dest_b = _name_arg(dest, "dest")
        self._lock = threading.Lock()
        self._root = _ffi.NULL
        self.dest = _show(dest)
        r, root = _open_root(dest_b, (_SE_IN_ROOT if in_root else 0) |
                             (_SE_CROSS_MOUNTS if cross_mounts else 0) |
                             (_SE_KEEP_DIR_SYMLINKS if keep_directory_symlinks else 0))
        if r < 0:
            raise _oserror(-r, "cannot open the destination '%s'" % self.dest)
        self._root = root

    def _handle(self):
        if self._root == _ffi.NULL:
            raise ValueError("Root of '%s' is closed" % self.dest)
        return self._root

    def _where(self, path):
        return "'%s' in '%s'" % (_show(path), self.dest)

    @property
    def backend(self):
        """"openat2", "at" (this project's kernel flags) or "walk"."""
        with self._lock:
            return _ffi.string(_lib.se_root_backend(self._handle())).decode()

    @property
    def is_userspace(self):
        """True when paths are resolved by a userspace walk (no defence
        against a concurrent rename inside the root)."""
        with self._lock:
            return bool(_lib.se_root_is_userspace(self._handle()))

    def open(self, path, flags, mode=0o666):
        """An fd (O_CLOEXEC) on PATH opened with FLAGS (os.O_*); the caller
        closes it.  To replace a file, create a new one with
        O_CREAT|O_EXCL and rename() it over the name."""
        p = _name_arg(path, "path")
        flags = _int_arg(flags, "flags")
        mode = _int_arg(mode, "mode")
        with self._lock:
            fd = _lib.se_root_openat(self._handle(), p, flags | os.O_CLOEXEC, mode)
        if fd < 0:
            raise _oserror(-fd, "cannot open %s" % self._where(path))
        return fd

    def lstat(self, path):
        """os.stat_result of PATH, not following its last component."""
        p = _name_arg(path, "path")
        with self._lock:
            fd = _lib.se_root_openat(self._handle(), p,
                                     os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, 0)
        if fd < 0:
            raise _oserror(-fd, "cannot lstat %s" % self._where(path))
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)

    def unlink(self, path):
        """Remove the name PATH (not a directory)."""
        p = _name_arg(path, "path")
        with self._lock:
            r = _lib.se_root_unlinkat(self._handle(), p, 0)
        if r < 0:
            raise _oserror(-r, "cannot unlink %s" % self._where(path))

    def rmdir(self, path):
        """Remove the empty directory PATH."""
        p = _name_arg(path, "path")
        with self._lock:
            r = _lib.se_root_unlinkat(self._handle(), p, _AT_REMOVEDIR)
        if r < 0:
            raise _oserror(-r, "cannot remove the directory %s" % self._where(path))

    def rename(self, src, dst, *, noreplace=False, exchange=False):
        """Rename SRC to DST inside the root (renameat2 flags by name)."""
        s = _name_arg(src, "src")
        d = _name_arg(dst, "dst")
        flags = ((_RENAME_NOREPLACE if _bool_arg(noreplace, "noreplace") else 0) |
                 (_RENAME_EXCHANGE if _bool_arg(exchange, "exchange") else 0))
        with self._lock:
            r = _lib.se_root_renameat(self._handle(), s, d, flags)
        if r < 0:
            raise _oserror(-r, "cannot rename %s to '%s'" % (self._where(src), _show(dst)))

    def close(self):
        with self._lock:
            if self._root != _ffi.NULL:
                _lib.se_root_close(self._root)
                self._root = _ffi.NULL

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_root", _ffi.NULL) != _ffi.NULL:
            _lib.se_root_close(self._root)
            self._root = _ffi.NULL

    def __repr__(self):
        return "<safe_extract.Root '%s'%s>" % (
            self.dest, "" if self._root != _ffi.NULL else " closed")
