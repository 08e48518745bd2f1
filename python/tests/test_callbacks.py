"""on_entry: what it sees, skipping, renaming (checked like archive
names), and an exception, which stops the run and leaves no temporary."""
import os

import pytest

import safe_extract
from conftest import temporaries, write_tar

MEMBERS = [("d", "d"), ("f", "d/a", "alpha\n"), ("l", "d/s", "a"),
           ("h", "d/h", "d/a"), ("p", "fifo"), ("f", "b", "beta\n")]


def test_on_entry_sees_each_entry_before_it_is_made(tmp_path, dest):
    arc = write_tar(tmp_path / "a.tar", MEMBERS)
    seen = []

    def cb(entry):
        assert isinstance(entry, safe_extract.Entry)
        assert not os.path.lexists(os.path.join(dest, entry.path))
        seen.append((entry.path, entry.type, entry.action))
    r = safe_extract.extract(arc, dest, on_entry=cb)
    # The name as the archive has it, before the library cleans it:
    # tarfile writes a directory's with a '/'.
    assert seen == [("d/", "directory", None), ("d/a", "file", None),
                    ("d/s", "symlink", None), ("d/h", "hardlink", None),
                    ("fifo", "fifo", None), ("b", "file", None)]
    assert r.status == 0


def test_skip(tmp_path, dest):
    arc = write_tar(tmp_path / "a.tar", MEMBERS)
    r = safe_extract.extract(
        arc, dest, on_entry=lambda e: safe_extract.SKIP if e.path == "b" else None)
    assert not os.path.exists(os.path.join(dest, "b"))
    assert os.path.exists(os.path.join(dest, "d/a"))
    assert [e.action for e in r.entries if e.name == "b"] == ["skipped"]
    assert r.status == 0
    assert repr(safe_extract.SKIP) == "safe_extract.SKIP"


@pytest.mark.parametrize("new", ["renamed/b.txt", b"renamed/b.txt"])
def test_rename(tmp_path, dest, new):
    arc = write_tar(tmp_path / "a.tar", MEMBERS)
    r = safe_extract.extract(
        arc, dest, on_entry=lambda e: new if e.path == "b" else None)
    assert open(os.path.join(dest, "renamed/b.txt")).read() == "beta\n"
    assert not os.path.exists(os.path.join(dest, "b"))
    assert r.status == 0
    assert "renamed/b.txt" in [e.path for e in r.entries]


def test_rename_to_an_absolute_name_lands_inside(sandbox):
    # As an archive's absolute name (GNU tar): the leading '/' dropped.
    arc = write_tar(sandbox.archive("a.tar"), MEMBERS)
    r = safe_extract.extract(arc, sandbox.dest,
                             on_entry=lambda e: "/abs/x" if e.path == "b" else None)
    assert r.status == 0
    assert open(os.path.join(sandbox.dest, "abs/x")).read() == "beta\n"
    assert sandbox.changed_outside() == []


@pytest.mark.parametrize("new", ["../x", "../../x", "ok/../../x"])
def test_rename_out_of_the_destination_is_refused(sandbox, new):
    arc = write_tar(sandbox.archive("a.tar"), MEMBERS)
    r = safe_extract.extract(arc, sandbox.dest,
                             on_entry=lambda e: new if e.path == "b" else None)
    assert r.status == 1
    refused = [e for e in r.entries if e.action == "refused"]
    assert len(refused) == 1 and refused[0].reason
    assert sandbox.changed_outside() == []
    # The other entries went on.
    assert os.path.exists(os.path.join(sandbox.dest, "d/a"))


def test_rename_with_nul_aborts_with_value_error(tmp_path, dest):
    arc = write_tar(tmp_path / "a.tar", MEMBERS)
    with pytest.raises(ValueError, match="NUL"):
        safe_extract.extract(arc, dest, on_entry=lambda e: "a\0b")


def test_wrong_return_type_aborts_with_type_error(tmp_path, dest):
    arc = write_tar(tmp_path / "a.tar", MEMBERS)
    with pytest.raises(TypeError, match="on_entry returned int"):
        safe_extract.extract(arc, dest, on_entry=lambda e: 0)


class Stop(Exception):
    pass


@pytest.mark.parametrize("durable", [False, True])
@pytest.mark.parametrize("jobs", [1, 4])
def test_exception_aborts_and_leaves_no_temporary(tmp_path, dest, durable, jobs):
    # With durable, every file waits under a temporary name until the
    # end of the run: an abort at the last entry has temporaries to clean.
    members = [("f", "f%02d" % i, os.urandom(200000)) for i in range(12)]
    arc = write_tar(tmp_path / "a.tar", members + [("f", "stop-here", "x")])
    calls = []

    def cb(e):
        calls.append(e.path)
        if e.path == "stop-here":
            raise Stop("stopped at %s" % e.path)
    with pytest.raises(Stop, match="stopped at stop-here"):
        safe_extract.extract(arc, dest, on_entry=cb, durable=durable, jobs=jobs)
    assert calls[-1] == "stop-here"
    assert temporaries(dest) == []
    assert not os.path.exists(os.path.join(dest, "stop-here"))
    if durable:
        # Nothing was renamed into place: the run did not finish.
        assert os.listdir(dest) == []


def test_base_exception_propagates_too(tmp_path, dest):
    arc = write_tar(tmp_path / "a.tar", MEMBERS)

    def cb(e):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        safe_extract.extract(arc, dest, on_entry=cb)
    assert temporaries(dest) == []


def test_callback_may_extract_elsewhere(tmp_path, dest):
    # The library is re-entrant across runs: a callback may run another.
    inner = write_tar(tmp_path / "inner.tar", [("f", "inner", "i")])
    outer = write_tar(tmp_path / "outer.tar", [("f", "x", "x")])
    other = tmp_path / "other"
    other.mkdir()

    def cb(e):
        assert safe_extract.extract(inner, str(other)).status == 0
    assert safe_extract.extract(outer, dest, on_entry=cb).status == 0
    assert (other / "inner").read_text() == "i"


def test_on_entry_sees_a_pax_name_as_stored(tmp_path, dest):
    # Issue 23: libarchive composes (NFC) a pax name; the library hands
    # on the archive's bytes, so the decomposed name stays a name of its
    # own in the callback, the result and the tree.
    import io
    import tarfile
    nfd, nfc = "cafe\u0301", "caf\u00e9"
    arc = tmp_path / "pax.tar"
    with tarfile.open(arc, "w", format=tarfile.PAX_FORMAT) as t:
        for name, data in ((nfd, b"nfd\n"), (nfc, b"nfc\n")):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
    seen = []
    r = safe_extract.extract(str(arc), dest, on_entry=lambda e: seen.append(e.path))
    assert seen == [nfd, nfc]
    assert [e.path for e in r.entries] == [nfd, nfc]
    assert open(os.path.join(dest, nfd), "rb").read() == b"nfd\n"
    assert open(os.path.join(dest, nfc), "rb").read() == b"nfc\n"
    assert r.status == 0
