# pytest.sh - sourced by python/tests/*.test: the binding's pytest suite
# as TAP for make check.
#
# run_pytest ARGS...: pytest ARGS with this build's library
# ($top_builddir/src/lib/.libs/libsafe-extract.so.0, through
# SAFE_EXTRACT_LIBRARY) and the package from $top_srcdir/python.  Each
# test is one TAP line (se_tap.py); pytest's own report goes to the log.
# Skips the whole file, saying why, without a Python, cffi or pytest.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${SAFE_EXTRACT:=$top_builddir/src/safe-extract}"
PY=${SE_PYTHON:-python3}
export top_srcdir top_builddir SAFE_EXTRACT

run_pytest() {
	if [ "$PY" = : ] || ! command -v "$PY" >/dev/null 2>&1; then
		echo "1..0 # SKIP configure found no Python 3 (configure PYTHON=/usr/bin/python3)"
		exit 0
	fi
	"$PY" -c 'import cffi' 2>/dev/null ||
		{ echo "1..0 # SKIP $PY has no cffi (Debian: python3-cffi)"; exit 0; }
	"$PY" -c 'import pytest' 2>/dev/null ||
		{ echo "1..0 # SKIP $PY has no pytest (Debian: python3-pytest)"; exit 0; }
	lib=$top_builddir/src/lib/.libs/libsafe-extract.so.0
	if [ ! -f "$lib" ]; then
		echo "Bail out! no $lib: build the library first"
		exit 1
	fi
	tap=$(mktemp "${TMPDIR:-/tmp}/se-pytest.XXXXXX") || exit 1
	# pytest's own clean-up recurses and fails on the corpus's trees
	# deeper than its recursion limit: rm -rf removes the base instead.
	base=$(mktemp -d "${TMPDIR:-/tmp}/se-pytest-tmp.XXXXXX") || exit 1
	# A sanitizer build's library cannot be dlopen()ed by a Python that
	# was not started with the ASan runtime first.  CPython's own
	# allocations alive at exit are not this library's: no leak check here
	# (the C tests run it on the library).
	if [ -n "${SE_PYTHON_PRELOAD:-}" ]; then
		LD_PRELOAD=$SE_PYTHON_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}
		ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
		export LD_PRELOAD ASAN_OPTIONS
	fi
	# No .pyc or .pytest_cache in the source tree (it may be read-only).
	SAFE_EXTRACT_LIBRARY=$lib SE_TAP_FD=9 PYTHONDONTWRITEBYTECODE=1 \
	PYTHONPATH=$top_srcdir/python:$top_srcdir/python/tests${PYTHONPATH:+:$PYTHONPATH} \
		"$PY" -m pytest -p no:cacheprovider -p se_tap -rs \
		--rootdir="$top_srcdir/python/tests" --basetemp="$base/t" "$@" 9>"$tap" >&2
	rc=$?
	rm -rf "$base"
	cat "$tap"
	n=$(grep -c '^\(not \)\{0,1\}ok' "$tap")
	failed=$(grep -c '^not ok' "$tap")
	rm -f "$tap"
	case $rc in
	0) [ "$n" -gt 0 ] || { n=$((n + 1)); echo "not ok - pytest passed with no test reported"; } ;;
	# Failures that reached no test (an import or a collection error)
	# must not read as a skipped file.
	1) [ "$failed" -gt 0 ] || { n=$((n + 1)); echo "not ok - pytest failed before any test reported (see the log)"; } ;;
	5) n=$((n + 1)); echo "not ok - pytest collected no test" ;;
	*) n=$((n + 1)); echo "not ok - pytest exited $rc (interrupted, internal or usage error; see the log)" ;;
	esac
	echo "1..$n"
	exit 0
}
