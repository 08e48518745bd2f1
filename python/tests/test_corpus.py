"""The hostile corpus (tests/archives) through safe_extract.extract():
tests/archives/run builds each case's sandbox and setup, runs
corpus-adapter.py as its extractor, and checks every expectation of the
manifest (exit status, entries present and absent, modes, nothing
outside DEST changed, no temporary left).  One test per case and mode;
the exit status is checked again here against manifest.json.

Modes: $SE_CORPUS_MODES (default "strict in-root").
"""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import CORPUS

MODES = os.environ.get("SE_CORPUS_MODES", "strict in-root").split()
with open(os.path.join(CORPUS, "manifest.json")) as _f:
    MANIFEST = {c["id"]: c for c in json.load(_f)["cases"]}
ADAPTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus-adapter.py")

_results = {}


def _run(mode, tmp_path_factory):
    if mode in _results:
        return _results[mode]
    work = tmp_path_factory.mktemp("corpus-" + mode)
    jsonl = work / "results.jsonl"
    extractor = "'%s' '%s' {seopts} {opts} {archive} -C {dest}" % (sys.executable, ADAPTER)
    env = dict(os.environ, TMPDIR=str(work))
    p = subprocess.run(["sh", os.path.join(CORPUS, "run"), "--mode", mode,
                        "--extractor", extractor, "--json", str(jsonl)],
                       capture_output=True, text=True, env=env)
    if p.returncode == 2 or not jsonl.exists():
        pytest.fail("the corpus runner failed (exit %d):\n%s\n%s"
                    % (p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    tap = {}
    current = None
    for line in p.stdout.splitlines():
        m = re.match(r"(?:not )?ok \d+ - ([^:# ]+)", line)
        if m:
            current = m.group(1)
            tap[current] = [line]
        elif current and line.startswith("#"):
            tap[current].append(line)
    results = {}
    with open(jsonl) as f:
        for line in f:
            r = json.loads(line)
            r["tap"] = "\n".join(tap.get(r["case"], []))
            results[r["case"]] = r
    _results[mode] = results
    return results


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(MANIFEST))
def test_corpus(case, mode, tmp_path_factory):
    results = _run(mode, tmp_path_factory)
    assert case in results, "the runner did not report %s" % case
    r = results[case]
    if r["verdict"] == "skip":
        pytest.skip(r["reason"] or "skipped by the runner")
    assert not r["escaped"], "ESCAPED: %s\n%s" % (r["outside_changed"], r["tap"])
    want = [e["status"] for e in MANIFEST[case]["expect"][mode] if e["check"] == "exit"]
    assert [r["exit_status"]] == want, r["tap"]
    assert r["verdict"] == "pass", r["tap"]
