"""The package as make install leaves it: `make install DESTDIR=...`,
then `import safe_extract` from there, in a fresh interpreter that has
neither the source tree nor the build tree on its path."""
import os
import re
import subprocess
import sys

import pytest

from conftest import TOP_BUILDDIR, write_tar

pytestmark = pytest.mark.skipif(
    not TOP_BUILDDIR or not os.path.exists(os.path.join(TOP_BUILDDIR or "", "Makefile")),
    reason="no build tree ($top_builddir) to install from")


def _make_var(name):
    with open(os.path.join(TOP_BUILDDIR, "Makefile")) as f:
        m = re.search(r"^%s = (.*)$" % re.escape(name), f.read(), re.M)
    return m.group(1).strip() if m else None


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    destdir = tmp_path_factory.mktemp("inst")
    p = subprocess.run(["make", "-s", "-C", TOP_BUILDDIR, "install",
                        "DESTDIR=%s" % destdir], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    pkgs = []
    for dirpath, dirnames, filenames in os.walk(destdir):
        if os.path.basename(dirpath) == "safe_extract" and "__init__.py" in filenames:
            pkgs.append(dirpath)
    assert len(pkgs) == 1, pkgs
    libs = []
    for dirpath, dirnames, filenames in os.walk(destdir):
        if "libsafe-extract.so.0" in filenames:
            libs.append(os.path.join(dirpath, "libsafe-extract.so.0"))
    assert len(libs) == 1, libs
    return str(destdir), os.path.dirname(pkgs[0]), libs[0]


def _child(code, sitedir, env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "SAFE_EXTRACT_LIBRARY")}
    env.update(env_extra, PYTHONPATH=sitedir, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, env=env, cwd="/")


def test_installed_where_configure_said(installed):
    destdir, sitedir, lib = installed
    prefix = _make_var("prefix")
    want = _make_var("SE_PYTHON_DIR").replace("${prefix}", prefix)
    assert sitedir == destdir + want
    # Source only: no byte code in the package directory.
    assert sorted(os.listdir(os.path.join(sitedir, "safe_extract"))) == [
        "__init__.py", "_libdir.py"]


def test_import_and_extract_from_the_installed_tree(installed, tmp_path):
    destdir, sitedir, lib = installed
    arc = write_tar(tmp_path / "a.tar", [("f", "hello.txt", "hello\n"),
                                         ("f", "../evil", "x")])
    d = tmp_path / "d"
    d.mkdir()
    code = ("import safe_extract, sys\n"
            "assert safe_extract.__file__.startswith(%r), safe_extract.__file__\n"
            "r = safe_extract.extract(%r, %r)\n"
            "print(safe_extract.__version__, safe_extract.library_path, r.status,"
            " [e.action for e in r.entries])\n" % (sitedir, arc, str(d)))
    # By SONAME, as a system would find it (here through LD_LIBRARY_PATH),
    # unless a library installed in the configured libdir on this host
    # would come first.
    env = {"LD_LIBRARY_PATH": os.path.dirname(lib)}
    if os.path.exists(os.path.join(_libdir(), "libsafe-extract.so.0")):
        env["SAFE_EXTRACT_LIBRARY"] = lib
    p = _child(code, sitedir, env)
    assert p.returncode == 0, p.stderr
    version, path, status, actions = p.stdout.split(" ", 3)
    assert os.path.realpath(path) == os.path.realpath(lib)
    assert status == "1" and actions.strip() == "['created', 'refused']"
    assert (d / "hello.txt").read_text() == "hello\n"


def _libdir():
    return _make_var("libdir").replace(
        "${exec_prefix}", _make_var("exec_prefix").replace("${prefix}", _make_var("prefix")))


def test_installed_package_knows_its_libdir(installed):
    destdir, sitedir, lib = installed
    p = _child("import sys; sys.path.insert(0, %r)\n"
               "import importlib.util as u\n"
               "s = u.spec_from_file_location('l', %r)\n"
               "m = u.module_from_spec(s); s.loader.exec_module(m); print(m.LIBDIR)"
               % (sitedir, os.path.join(sitedir, "safe_extract", "_libdir.py")),
               sitedir, {})
    assert p.stdout.strip() == _libdir()
    assert destdir + p.stdout.strip() == os.path.dirname(lib)
