"""se_tap - a pytest plugin: one TAP line per test on the fd $SE_TAP_FD.

Loaded by python/tests/pytest.sh with -p se_tap.  Lines are unnumbered
(TAP allows it); the wrapper adds the plan.  A failure's report follows
its line as '#' comments; a skip carries its reason.
"""
import os

_out = None


def pytest_configure(config):
    global _out
    fd = os.environ.get("SE_TAP_FD")
    if fd and _out is None:
        _out = os.fdopen(os.dup(int(fd)), "w", buffering=1)


def _line(text):
    if _out is not None:
        _out.write(text + "\n")


def _name(nodeid):
    # TAP descriptions end at '#': keep that character out.
    return nodeid.replace("#", "%23")


def _comment(text, limit=60):
    lines = str(text).splitlines()
    for line in lines[-limit:]:
        _line("#   " + line)


def pytest_collectreport(report):
    if report.failed:
        _line("not ok - cannot collect %s" % _name(report.nodeid or "tests"))
        _comment(report.longreprtext)


def pytest_runtest_logreport(report):
    # One line per test: its call, or the setup that failed or skipped
    # it, plus a line for a failed teardown.
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) \
                else str(report.longrepr)
            reason = reason.replace("Skipped: ", "", 1)
            _line("ok - %s # SKIP %s" % (_name(report.nodeid), reason.replace("\n", " ")))
        elif report.passed:
            _line("ok - %s" % _name(report.nodeid))
        else:
            _line("not ok - %s" % _name(report.nodeid))
            _comment(report.longreprtext)
    elif report.when == "teardown" and report.failed:
        _line("not ok - %s (teardown)" % _name(report.nodeid))
        _comment(report.longreprtext)


def pytest_unconfigure(config):
    global _out
    if _out is not None:
        _out.close()
        _out = None
