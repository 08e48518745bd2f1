"""The binding and the command give the same tree and the same verdict:
for every corpus archive whose case needs no setup, and for a rich
archive of every entry type."""
import json
import os
import subprocess

import pytest

import safe_extract
from conftest import CLI, CORPUS, tree, write_tar

with open(os.path.join(CORPUS, "manifest.json")) as _f:
    _CASES = [c for c in json.load(_f)["cases"]
              if not c["setup"] and not c["options"] and not c["needs_root"]
              and c["archive"].get("path")]

pytestmark = pytest.mark.skipif(not CLI or not os.access(CLI, os.X_OK),
                                reason="no command to compare with ($SAFE_EXTRACT)")


def _both(tmp_path, archive, cli_args=(), **kw):
    a, b = tmp_path / "cli", tmp_path / "py"
    a.mkdir()
    b.mkdir()
    p = subprocess.run([CLI, *cli_args, archive, "-C", str(a)],
                       capture_output=True, text=True)
    try:
        status = safe_extract.extract(archive, str(b), **kw).status
    except safe_extract.FatalError as e:
        status = e.status
    return p.returncode, status, tree(str(a)), tree(str(b))


@pytest.mark.parametrize("case", _CASES, ids=[c["id"] for c in _CASES])
@pytest.mark.parametrize("mode", ["strict", "in-root"])
def test_same_as_command(tmp_path, case, mode):
    archive = os.path.join(CORPUS, case["archive"]["path"])
    args, kw = ((), {}) if mode == "strict" else (("--in-root",), {"in_root": True})
    cli_rc, status, t_cli, t_py = _both(tmp_path, archive, args, **kw)
    assert status == cli_rc
    assert t_py == t_cli


def test_same_as_command_every_entry_type(tmp_path):
    arc = write_tar(tmp_path / "rich.tar", [
        ("d", "d", 0o750), ("f", "d/exec", "#!/bin/sh\n", 0o755),
        ("f", "d/ro", "ro", 0o444), ("f", "d/setuid", "x", 0o4755),
        ("l", "d/rel", "exec"), ("l", "d/dangling", "../nowhere"),
        ("h", "d/hard", "d/exec"), ("p", "d/fifo"),
        ("f", "empty", ""), ("d", "d/sub", 0o700), ("f", "d/sub/deep", "deep")])
    cli_rc, status, t_cli, t_py = _both(tmp_path, arc)
    assert (status, cli_rc) == (0, 0)
    assert t_py == t_cli
