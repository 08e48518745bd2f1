#!/bin/sh
# debian-packages.sh - the Debian packages (debian/) as a user gets them.
#
# Usage: tests/debian-packages.sh [REV]        (default HEAD; as root)
#
# Exports the committed tree (git archive REV, never the working tree) to
# a temporary directory, builds it with dpkg-buildpackage -us -uc -b
# (DEB_BUILD_OPTIONS=nocheck: make check runs elsewhere; noddebs;
# DPKG_GENSYMBOLS_CHECK_LEVEL=4: debian/libsafe-extract0.symbols must match
# the library exactly), runs lintian (no errors allowed), installs the five
# packages into a scratch root with dpkg --root (no network, nothing of the
# host's dpkg database touched), checks the SONAME, and runs the
# autopkgtests of debian/tests/ against that root: the hostile corpus
# through the installed safe-extract-corpus and safe-extract, and a program
# built with the installed header and pkg-config file, and the Python
# binding imported from the root's dist-packages.
#
# The last line says ok or FAIL; the exit status is 0 or 1 (2: could not
# start).  KEEP=1 keeps the temporary directory.
#
# This is not make check-debs / tests/debs.test, which extract .deb
# archives as input.
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
REV=${1:-HEAD}
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null) || MA=x86_64-linux-gnu

for tool in git dpkg-buildpackage lintian dpkg objdump cc pkg-config; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "debian-packages: FAIL: $tool is not installed"
		exit 2
	}
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/se-debs.XXXXXX") || exit 2
cleanup() {
	if [ -n "${KEEP:-}" ]; then
		echo "debian-packages: kept $WORK"
	else
		rm -rf "${WORK:?}"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

start=$(date +%s)
step() { echo "== $* ($(($(date +%s) - start)) s)"; }
fail() {
	echo "debian-packages: FAIL: $* after $(($(date +%s) - start)) s"
	exit 1
}

step "export $REV"
mkdir "$WORK/src" "$WORK/root"
git -C "$REPO" archive "$REV" | tar -x -C "$WORK/src" ||
	fail "git archive $REV"
[ -f "$WORK/src/debian/control" ] || fail "$REV has no debian/"

step "dpkg-buildpackage -us -uc -b"
if ! (cd "$WORK/src" &&
	DEB_BUILD_OPTIONS="nocheck noddebs parallel=$(nproc)" \
	DPKG_GENSYMBOLS_CHECK_LEVEL=4 \
	dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1; then
	awk '/dpkg-gensymbols/ { p = 1 } /^dh_makeshlibs/ { p = 0 } p' \
		"$WORK/build.log" | head -60
	tail -n 30 "$WORK/build.log"
	fail "the package build (log above; debian/libsafe-extract0.symbols out of date? see debian/README.source)"
fi
set -- "$WORK"/*.deb
[ $# = 5 ] || fail "expected 5 packages, got $#: $*"
for deb in "$@"; do
	echo "   ${deb##*/} $(stat -c %s "$deb") bytes"
done

step "lintian"
lintian --fail-on error --tag-display-limit 0 "$WORK"/*.changes \
	>"$WORK/lintian.log" 2>&1
lint_rc=$?
sed 's/^/   /' "$WORK/lintian.log"
echo "   lintian: $(grep -c '^E:' "$WORK/lintian.log") errors, $(grep -c '^W:' "$WORK/lintian.log") warnings"
[ "$lint_rc" = 0 ] || fail "lintian reports errors"

step "dpkg --root $WORK/root --unpack"
ROOT=$WORK/root
mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates" \
	"$ROOT/var/lib/dpkg/triggers" "$ROOT/tmp"
: >"$ROOT/var/lib/dpkg/status"
: >"$ROOT/var/lib/dpkg/available"
# The root holds only these packages: their dependencies (libc6,
# libarchive13, mount) are the host's, which the programs run with.
# Unpacked, not configured: dpkg runs maintainer scripts chrooted into
# the root, which has no shell, and python3-safe-extract's postinst
# (dh_python3's py3compile, byte-compiling only) cannot run there.
dpkg --root="$ROOT" --force-depends --log=/dev/null --unpack "$@" \
	>"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log"; fail "dpkg --unpack"; }
dpkg --root="$ROOT" -l | sed -n 's/^[ie][iU]  /   /p'

soname=$(objdump -p "$ROOT/usr/lib/$MA/libsafe-extract.so.0" 2>/dev/null |
	awk '$1 == "SONAME" { print $2 }')
[ "$soname" = libsafe-extract.so.0 ] || fail "SONAME is '$soname'"
echo "   SONAME $soname"

# The packaged archives must be the committed bytes (dh_strip_nondeterminism
# once rewrote the zip files).
bad=$(cd "$ROOT/usr/share/safe-extract/corpus" && python3 -c '
import hashlib, json
for c in json.load(open("manifest.json"))["cases"]:
    for it in [c["archive"]] + [s for s in c["setup"] if s["step"] == "pre-extract"]:
        rel = it.get("path") or it.get("archive")
        if rel and hashlib.sha256(open(rel, "rb").read()).hexdigest() != it["sha256"]:
            print(rel)' 2>&1)
[ -z "$bad" ] || fail "installed corpus archives differ from manifest.json: $bad"
echo "   corpus archives: the SHA-256 manifest.json names"

step "autopkgtest corpus (debian/tests/corpus) from the scratch root"
if ! env -u SAFE_EXTRACT TMPDIR="$WORK" \
	SAFE_EXTRACT_CORPUS="$ROOT/usr/bin/safe-extract-corpus" \
	sh "$WORK/src/debian/tests/corpus" >"$WORK/corpus.log" 2>&1; then
	grep -v '^ok ' "$WORK/corpus.log" | tail -n 40
	fail "the corpus against the installed safe-extract"
fi
grep '^# [0-9]* passed\|^===.*exit' "$WORK/corpus.log" | sed 's/^/   /'

step "autopkgtest library (debian/tests/library) from the scratch root"
if ! PKG_CONFIG_SYSROOT_DIR=$ROOT \
	PKG_CONFIG_LIBDIR="$ROOT/usr/lib/$MA/pkgconfig:/usr/lib/$MA/pkgconfig:/usr/share/pkgconfig" \
	LD_LIBRARY_PATH="$ROOT/usr/lib/$MA" TMPDIR="$WORK" \
	sh "$WORK/src/debian/tests/library" >"$WORK/library.log" 2>&1; then
	cat "$WORK/library.log"
	fail "a program built against the installed library"
fi
sed 's/^/   /' "$WORK/library.log"

step "autopkgtest python (debian/tests/python) from the scratch root"
if ! PYTHONPATH="$ROOT/usr/lib/python3/dist-packages" \
	SE_EXPECT_PACKAGE_DIR="$ROOT/usr/lib/python3/dist-packages" \
	SAFE_EXTRACT_LIBRARY="$ROOT/usr/lib/$MA/libsafe-extract.so.0" TMPDIR="$WORK" \
	sh "$WORK/src/debian/tests/python" >"$WORK/python.log" 2>&1; then
	cat "$WORK/python.log"
	fail "import safe_extract from the installed python3-safe-extract"
fi
sed 's/^/   /' "$WORK/python.log"

echo "debian-packages: ok: 5 packages built from $REV, lintian clean of errors, corpus, library and python tests passed from a scratch root in $(($(date +%s) - start)) s"
