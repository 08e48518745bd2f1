"""safe_extract.extract(): results, fatal errors, every argument."""
import errno
import os
import re
import subprocess
import sys

import pytest

import safe_extract
from conftest import TOP_BUILDDIR, TOP_SRCDIR, tar_bytes, temporaries, write_tar

SIMPLE = [("d", "a"), ("f", "a/one.txt", "one\n"), ("l", "a/link", "one.txt"),
          ("h", "a/hard", "a/one.txt"), ("f", "two.txt", "two\n", 0o600)]


def test_version_is_configure_version():
    want = None
    if TOP_BUILDDIR and os.path.exists(os.path.join(TOP_BUILDDIR, "config.h")):
        with open(os.path.join(TOP_BUILDDIR, "config.h")) as f:
            m = re.search(r'#define PACKAGE_VERSION "([^"]*)"', f.read())
            want = m.group(1)
    else:
        with open(os.path.join(TOP_SRCDIR, "configure.ac")) as f:
            want = re.search(r"AC_INIT\(\[[^]]*\], \[([^]]*)\]", f.read()).group(1)
    assert safe_extract.__version__ == want


def test_library_found_is_this_build():
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", safe_extract.library_version)
    lib = os.environ.get("SAFE_EXTRACT_LIBRARY")
    if not lib:
        pytest.skip("SAFE_EXTRACT_LIBRARY is not set")
    assert os.path.realpath(safe_extract.library_path) == os.path.realpath(lib)


def _import_in_child(code, env_extra):
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True)


def test_older_library_refused_at_import():
    # The binding as it would be if it needed a library newer than this
    # one: the module's own source with LIBRARY_NEEDED raised.
    src = os.path.join(os.path.dirname(safe_extract.__file__), "__init__.py")
    code = (
        "import sys, types\n"
        "text = open(%r).read()\n"
        "assert 'LIBRARY_NEEDED = (0, 3, 0)' in text\n"
        "text = text.replace('LIBRARY_NEEDED = (0, 3, 0)', 'LIBRARY_NEEDED = (99, 0, 0)')\n"
        "m = types.ModuleType('safe_extract')\n"
        "try:\n"
        "    exec(compile(text, 'safe_extract', 'exec'), m.__dict__)\n"
        "except ImportError as e:\n"
        "    print('ImportError:', e)\n" % src)
    r = _import_in_child(code, {})
    assert "ImportError: safe_extract 0.3.0 needs libsafe-extract 99.0.0 or newer" in r.stdout, r.stderr
    assert safe_extract.library_version in r.stdout


def test_missing_library_is_a_clear_import_error():
    r = _import_in_child("import safe_extract",
                         {"SAFE_EXTRACT_LIBRARY": "/nonexistent/libsafe-extract.so.0"})
    assert r.returncode != 0
    assert "ImportError: safe_extract cannot load libsafe-extract" in r.stderr
    assert "/nonexistent/libsafe-extract.so.0" in r.stderr


def test_extract_all(tmp_path, dest):
    arc = write_tar(tmp_path / "a.tar", SIMPLE)
    r = safe_extract.extract(arc, dest)
    assert r.status == 0
    assert [(e.path, e.type, e.action) for e in r.entries] == [
        ("a", "directory", "created"), ("a/one.txt", "file", "created"),
        ("a/link", "symlink", "created"), ("a/hard", "hardlink", "created"),
        ("two.txt", "file", "created")]
    assert all(e.reason is None and e.errno == 0 for e in r.entries)
    assert open(os.path.join(dest, "a/one.txt")).read() == "one\n"
    assert os.readlink(os.path.join(dest, "a/link")) == "one.txt"
    assert os.path.samefile(os.path.join(dest, "a/hard"), os.path.join(dest, "a/one.txt"))
    assert r.entries[1].bytes == 4
    assert isinstance(r.entries[0], safe_extract.Entry)
    assert "status=0" in repr(r)


def test_refused_entries_make_status_1(tmp_path, dest):
    arc = write_tar(tmp_path / "a.tar", [("f", "../evil", "x"), ("f", "good", "g")])
    r = safe_extract.extract(arc, dest)
    assert r.status == 1
    bad = r.entries[0]
    assert bad.name == "../evil" and bad.action == "refused" and bad.reason
    assert r.entries[1].action == "created"
    assert not os.path.exists(os.path.join(os.path.dirname(dest), "evil"))


def test_fatal_missing_destination(tmp_path):
    arc = write_tar(tmp_path / "a.tar", SIMPLE)
    with pytest.raises(safe_extract.FatalError) as ei:
        safe_extract.extract(arc, str(tmp_path / "nowhere"))
    e = ei.value
    assert isinstance(e, safe_extract.Error)
    assert e.status == 2 and e.errno == errno.ENOENT and e.entries == []
    assert "cannot open the destination" in str(e) and "nowhere" in str(e)


def test_fatal_missing_archive(tmp_path, dest):
    with pytest.raises(safe_extract.FatalError) as ei:
        safe_extract.extract(str(tmp_path / "none.tar"), dest)
    assert ei.value.errno == errno.ENOENT
    assert "cannot open the archive" in ei.value.message and "none.tar" in ei.value.message


def test_fatal_empty_archive(tmp_path, dest):
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(safe_extract.FatalError) as ei:
        safe_extract.extract(str(tmp_path / "empty"), dest)
    assert ei.value.status == 2
    assert "empty" in ei.value.message


def test_fatal_not_an_archive(tmp_path, dest):
    (tmp_path / "text").write_bytes(b"hello, this is not an archive\n" * 100)
    with pytest.raises(safe_extract.FatalError) as ei:
        safe_extract.extract(str(tmp_path / "text"), dest)
    assert ei.value.status == 2 and ei.value.message


def test_fatal_truncated_archive_keeps_entries_so_far(tmp_path, dest):
    data = tar_bytes([("f", "first", "1" * 600), ("f", "second", "2" * 100000)])
    (tmp_path / "t.tar").write_bytes(data[:3000])
    with pytest.raises(safe_extract.FatalError) as ei:
        safe_extract.extract(str(tmp_path / "t.tar"), dest)
    e = ei.value
    assert e.status == 2
    assert [x.path for x in e.entries if x.action == "created"] == ["first"]
    assert temporaries(dest) == []


def test_strip_components(tmp_path, dest):
    arc = write_tar(tmp_path / "a.tar", SIMPLE)
    r = safe_extract.extract(arc, dest, strip_components=1)
    assert os.path.exists(os.path.join(dest, "one.txt"))
    assert not os.path.exists(os.path.join(dest, "a"))
    assert r.status == 0


def test_include_exclude_and_unmatched(tmp_path, dest):
    arc = write_tar(tmp_path / "a.tar", SIMPLE)
    r = safe_extract.extract(arc, dest, include=["a", "missing"], exclude=["*.txt"])
    assert sorted(os.listdir(os.path.join(dest, "a"))) == ["hard", "link"] or \
        sorted(os.listdir(os.path.join(dest, "a"))) == ["link"]
    assert not os.path.exists(os.path.join(dest, "two.txt"))
    assert r.unmatched == ["missing"]


def test_keep_old(tmp_path, dest):
    with open(os.path.join(dest, "two.txt"), "w") as f:
        f.write("mine\n")
    arc = write_tar(tmp_path / "a.tar", SIMPLE)
    r = safe_extract.extract(arc, dest, keep_old=True)
    assert open(os.path.join(dest, "two.txt")).read() == "mine\n"
    two = [e for e in r.entries if e.path == "two.txt"][0]
    assert two.action in ("refused", "skipped", "failed")
    r = safe_extract.extract(arc, dest)
    assert open(os.path.join(dest, "two.txt")).read() == "two\n"
    assert [e for e in r.entries if e.path == "two.txt"][0].action == "replaced"


@pytest.mark.parametrize("jobs", [None, 1, 4])
@pytest.mark.parametrize("durable", [False, True])
def test_jobs_and_durable_give_the_same_tree(tmp_path, jobs, durable):
    from conftest import tree
    members = SIMPLE + [("f", "big/%d" % i, os.urandom(50000)) for i in range(20)]
    arc = write_tar(tmp_path / "a.tar", members)
    d1, d2 = tmp_path / "d1", tmp_path / "d2"
    d1.mkdir()
    d2.mkdir()
    safe_extract.extract(arc, str(d1))
    r = safe_extract.extract(arc, str(d2), jobs=jobs, durable=durable)
    assert r.status == 0
    assert tree(str(d1)) == tree(str(d2))


@pytest.mark.skipif(os.geteuid() != 0, reason="restoring owners needs root")
def test_owner_policy_as_root(tmp_path):
    arc = write_tar(tmp_path / "a.tar", [("f", "f", "x")])
    for kw, uid in [({}, 1234), ({"same_owner": True}, 1234),
                    ({"same_owner": False}, 0), ({"numeric_owner": True}, 1234)]:
        d = tmp_path / ("d%d" % len(os.listdir(tmp_path)))
        d.mkdir()
        safe_extract.extract(arc, str(d), **kw)
        assert os.lstat(str(d / "f")).st_uid == uid, kw


def test_in_root_follows_a_planted_link_inside(tmp_path, dest):
    os.makedirs(os.path.join(dest, "usr/lib"))
    os.symlink("usr/lib", os.path.join(dest, "lib"))
    arc = write_tar(tmp_path / "a.tar", [("f", "lib/x.so", "elf")])
    r = safe_extract.extract(arc, dest)
    assert r.status == 1 and r.entries[0].action == "refused"
    assert r.entries[0].errno == errno.ELOOP
    r = safe_extract.extract(arc, dest, in_root=True)
    assert r.status == 0
    assert open(os.path.join(dest, "usr/lib/x.so")).read() == "elf"
    assert os.path.islink(os.path.join(dest, "lib"))


# ---- bad arguments: the exception, before anything is touched ----------------

BAD_ARGUMENTS = [
    ({"in_root": 1}, TypeError, "in_root must be True or False"),
    ({"durable": "yes"}, TypeError, "durable must be True or False"),
    ({"keep_old": None}, TypeError, "keep_old must be True or False"),
    ({"numeric_owner": 0}, TypeError, "numeric_owner"),
    ({"same_owner": "root"}, TypeError, "same_owner must be True, False or None"),
    ({"strip_components": "1"}, TypeError, "strip_components must be an int"),
    ({"strip_components": True}, TypeError, "strip_components must be an int"),
    ({"strip_components": -1}, ValueError, "strip_components must be 0 or more"),
    ({"jobs": 0}, ValueError, "jobs must be from 1 to 64"),
    ({"jobs": 65}, ValueError, "jobs must be from 1 to 64"),
    ({"jobs": 2.0}, TypeError, "jobs must be an int"),
    ({"include": "a"}, TypeError, "include must be a list of patterns, not one str"),
    ({"include": 3}, TypeError, "include must be a list of patterns, not int"),
    ({"exclude": [3]}, TypeError, "a pattern of exclude must be str"),
    ({"exclude": ["a\0b"]}, ValueError, "NUL"),
    ({"on_entry": "skip"}, TypeError, "on_entry must be callable"),
    ({"in_root": True, "keep_directory_symlinks": True}, ValueError, "exclude each other"),
]


@pytest.mark.parametrize("kwargs,exc,text", BAD_ARGUMENTS,
                         ids=[",".join(k) + "=" + repr(list(k.values())[-1])
                              for k, _, _ in BAD_ARGUMENTS])
def test_bad_argument(tmp_path, dest, kwargs, exc, text):
    arc = write_tar(tmp_path / "a.tar", SIMPLE)
    with pytest.raises(exc, match=re.escape(text)):
        safe_extract.extract(arc, dest, **kwargs)
    assert os.listdir(dest) == []


@pytest.mark.parametrize("dest_arg,exc", [(3, TypeError), (None, TypeError),
                                          ("d\0x", ValueError)])
def test_bad_dest(tmp_path, dest_arg, exc):
    arc = write_tar(tmp_path / "a.tar", SIMPLE)
    with pytest.raises(exc, match="dest"):
        safe_extract.extract(arc, dest_arg)


def test_unknown_keyword_and_positional(tmp_path, dest):
    arc = write_tar(tmp_path / "a.tar", SIMPLE)
    with pytest.raises(TypeError):
        safe_extract.extract(arc, dest, overwrite=True)
    with pytest.raises(TypeError):
        safe_extract.extract(arc, dest, True)
