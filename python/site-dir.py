"""site-dir.py PREFIX - where `make install` puts the safe_extract package.

Prints the directory for pure-Python modules under PREFIX, with PREFIX
itself written as ${prefix} so that `make install prefix=...` still moves
it.  Run by configure with the Python it found.

Debian's Python reads /usr/lib/python3/dist-packages (packages) and
/usr/local/lib/python3.X/dist-packages (make install), never the
site-packages that AM_PATH_PYTHON's pythondir names there, so on a Python
with Debian's schemes: PREFIX/lib/python3/dist-packages for /usr,
PREFIX/lib/python3.X/dist-packages elsewhere.  Any other Python: its
posix_prefix purelib under PREFIX.
"""
import sys
import sysconfig


def main(prefix):
    ver = "%d.%d" % sys.version_info[:2]
    schemes = sysconfig.get_scheme_names()
    if "deb_system" in schemes:
        sub = "lib/python3/dist-packages" if prefix == "/usr" else \
            "lib/python%s/dist-packages" % ver
        return "${prefix}/" + sub
    path = sysconfig.get_path("purelib", "posix_prefix",
                              vars={"base": prefix, "platbase": prefix})
    if path.startswith(prefix.rstrip("/") + "/"):
        return "${prefix}" + path[len(prefix.rstrip("/")):]
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: site-dir.py PREFIX")
    print(main(sys.argv[1]))
