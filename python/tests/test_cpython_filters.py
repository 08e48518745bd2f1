"""The attacks of CPython's test_tarfile.py extraction-filter tests
(TestExtractionFilters, PEP 706 and the 2024-2025 CVE fixes), rebuilt
with tarfile's writer and extracted by safe_extract in both modes.

Each archive is extracted into DEST four levels down a sandbox (see
conftest.Sandbox): TOP/l1/l2/s/{dest, outside/victim, flag}.  The
invariant for every case and mode: nothing outside DEST changes
(contents, modes, times, links; new names included).  Beyond that each
case states what must be in DEST, and the verdict.  Python 3.11's
filter="data" escapes in some of these (CVE-2025-4138, -4330, -4517);
tarfile itself is never run on them here.
"""
import os
import stat

import pytest

import safe_extract
from conftest import write_tar


def realpath_limit_members(dest):
    # CVE-2025-4517: names whose expansion outgrows PATH_MAX, so that
    # os.path.realpath() stops resolving and the filter checks the wrong
    # path; then a hardlink through the unchecked link to a file outside,
    # written through.
    steps = "abcdefghijklmnop"
    path_max = os.pathconf(dest, "PC_PATH_MAX")
    comp = "d" * ((path_max - len(dest) - 1) // (len(steps) + 1))
    members, path = [], ""
    for s in steps:
        members.append(("d", os.path.join(path, comp), 0o777))
        members.append(("l", os.path.join(path, s), comp))
        path = os.path.join(path, comp)
    linkpath = os.path.join(*steps, "l" * 254)
    members.append(("l", linkpath, os.path.join(*[".."] * len(steps))))
    members.append(("l", "escape", os.path.join(linkpath, "..")))
    members.append(("h", "flaglink", os.path.join("escape", "flag")))
    members.append(("f", "flaglink", "overwrite"))
    members.append(("f", "escape/newfile", "new"))
    return members


# name: (members, or a function of DEST giving them;
#        {mode: expected status}; checks inside DEST: path -> what)
#   what: "file:TEXT", "symlink:TARGET", "dir", "absent", "not-file:TEXT"
#   (absent, or anything but a regular file holding TEXT)
CASES = {
    "absolute": (
        lambda dest: [("f", os.path.join(os.path.dirname(dest), "escaped.evil"), "evil")],
        {"strict": 0, "in-root": 0},
        # As GNU tar: the leading '/' dropped, the name kept inside.
        lambda dest: {os.path.join(os.path.dirname(dest), "escaped.evil").lstrip("/"):
                      "file:evil"}),
    "parent_symlink": (
        [("l", "current", "."), ("l", "parent", "current/.."),
         ("f", "parent/evil", "evil")],
        {"strict": 1, "in-root": 0},
        {"current": "symlink:.", "parent": "symlink:current/.."}),
    "parent_symlink2": (
        [("l", "current", "."), ("l", "current/parent", ".."),
         ("f", "parent/evil", "evil")],
        {"strict": 1, "in-root": None},
        {"current": "symlink:."}),
    "absolute_symlink": (
        lambda dest: [("l", "parent", os.path.dirname(dest)),
                      ("f", "parent/evil", "evil")],
        {"strict": 1, "in-root": None},
        {"parent": "symlink:" + "@OUTER@"}),
    "absolute_hardlink": (
        lambda dest: [("h", "parent", os.path.join(os.path.dirname(dest), "flag"))],
        {"strict": 1, "in-root": 1},
        {"parent": "absent"}),
    "sly_relative0": (
        [("l", "../moo", "..//tmp/moo")],
        {"strict": 1, "in-root": 1},
        {"moo": "absent"}),
    "sly_relative2": (
        [("d", "tmp/"), ("l", "tmp/../../moo", "tmp/../..//tmp/moo")],
        {"strict": 1, "in-root": 1},
        {"tmp": "dir"}),
    "deep_symlink": (
        [("f", "targetdir/target", "abc"),
         ("h", "linkdir/hardlink", "targetdir/target"),
         ("l", "linkdir/symlink", "../targetdir/target")],
        {"strict": 0, "in-root": 0},
        {"targetdir/target": "file:abc", "linkdir/hardlink": "file:abc",
         "linkdir/symlink": "symlink:../targetdir/target"}),
    "chains": (
        [("l", "linkdir/symlink", "hardlink"),
         ("l", "symlink2", "linkdir/hardlink2"),
         ("f", "targetdir/target", "abc"),
         ("h", "linkdir/hardlink", "targetdir/target"),
         ("h", "linkdir/hardlink2", "linkdir/symlink")],
        {"strict": 0, "in-root": 0},
        {"targetdir/target": "file:abc", "linkdir/hardlink": "file:abc",
         "linkdir/symlink": "symlink:hardlink",
         "symlink2": "symlink:linkdir/hardlink2"}),
    "sneaky_hardlink_fallback": (   # CVE-2025-4330
        [("f", "a/t/dummy", ""), ("d", "b/"), ("l", "c", "a/t"),
         ("l", "c/escape", "../../link_here"), ("l", "c", "b"),
         ("h", "boom", "c/escape")],
        {"strict": 1, "in-root": None},
        {"a/t/dummy": "file:", "c": "symlink:b", "boom": "not-file:flag\n"}),
    "exfiltration_via_symlink": (   # CVE-2025-4138
        [("l", "escape", "link/link/../../link-here"), ("l", "link", "./"),
         ("f", "escape", "overwrite")],
        {"strict": 0, "in-root": 0},
        {"escape": "file:overwrite", "link": "symlink:./"}),
    "exfiltration_via_hardlink": (  # CVE-2025-4138, through a hardlink
        [("l", "escape", "link/link/../../flag"), ("l", "link", "./"),
         ("h", "boom", "escape")],
        {"strict": None, "in-root": None},
        {"boom": "not-file:flag\n"}),
    "chmod_outside_dir": (          # CVE-2024-12718
        [("l", "escape", "../outside"), ("d", "escape", 0o777),
         ("l", "victim", "../outside/victim"), ("f", "victim", "x", 0o777)],
        # As GNU tar without -U: the directory over the symlink is refused
        # (the symlink stays, nothing outside is chmod'ed); the file
        # replaces the symlink rather than writing through it.
        {"strict": 1, "in-root": 1},
        {"escape": "symlink:../outside", "victim": "file:x"}),
    "realpath_limit_attack": (      # CVE-2025-4517
        realpath_limit_members,
        {"strict": 1, "in-root": None},
        {"flaglink": "not-file:flag\n"}),
}


def _check_inside(dest, outer, checks):
    for path, what in checks.items():
        p = os.path.join(dest, path)
        kind, _, arg = what.partition(":")
        arg = arg.replace("@OUTER@", outer)
        if kind == "file":
            assert os.path.isfile(p) and not os.path.islink(p), path
            assert open(p).read() == arg, path
        elif kind == "symlink":
            assert os.path.islink(p) and os.readlink(p) == arg, path
        elif kind == "dir":
            assert stat.S_ISDIR(os.lstat(p).st_mode), path
        elif kind == "absent":
            assert not os.path.lexists(p), path
        elif kind == "not-file":
            if os.path.lexists(p) and stat.S_ISREG(os.lstat(p).st_mode):
                assert open(p).read() != arg, "%s holds the file outside" % path
        else:
            raise AssertionError("bad check %r" % what)


@pytest.mark.parametrize("mode", ["strict", "in-root"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_cpython_filter_attack(sandbox, name, mode):
    members, statuses, checks = CASES[name]
    if callable(members):
        members = members(sandbox.dest)
    if callable(checks):
        checks = checks(sandbox.dest)
    arc = write_tar(sandbox.archive(name + ".tar"), members)
    try:
        status = safe_extract.extract(arc, sandbox.dest, in_root=(mode == "in-root")).status
    except safe_extract.FatalError as e:
        status = e.status
    assert sandbox.changed_outside() == [], "wrote outside the destination"
    want = statuses[mode]
    if want is not None:
        assert status == want
    else:
        assert status in (0, 1)
    _check_inside(sandbox.dest, os.path.dirname(sandbox.dest), checks)


def test_escape_check_sees_a_write_outside(sandbox):
    # The invariant above can fail: what a naive extractor following
    # parent_symlink would do.
    os.symlink("current/..", os.path.join(sandbox.dest, "parent"))
    os.symlink(".", os.path.join(sandbox.dest, "current"))
    with open(os.path.join(sandbox.dest, "parent", "evil"), "w") as f:
        f.write("evil")
    assert sandbox.changed_outside() != []
