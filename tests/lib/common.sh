# tests/lib/common.sh - shared functions for the integration tests (TAP).
#
# Sourced by every tests/*.test.  Each test prints TAP on stdout: one
# "ok"/"not ok" line per check and the plan at the end (done_testing), so a
# table of cases needs no counting by hand.  Diagnostics go to stdout as
# "# ..." lines, which the automake TAP driver keeps in the .log file.

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${SAFE_EXTRACT:=$top_builddir/src/safe-extract}"
export top_srcdir top_builddir SAFE_EXTRACT

TLIB=$top_srcdir/tests/lib
HELPERS=$top_builddir/tests/helpers
PY=${PYTHON:-python3}

T_N=0
T_FAILED=0

diag() { printf '# %s\n' "$*"; }

# ok COND_STATUS DESCRIPTION: report a check whose status is already known.
ok() {
	T_N=$((T_N + 1))
	if [ "$1" -eq 0 ]; then
		printf 'ok %d - %s\n' "$T_N" "$2"
	else
		printf 'not ok %d - %s\n' "$T_N" "$2"
		T_FAILED=$((T_FAILED + 1))
	fi
}

# check DESCRIPTION CMD...: ok when CMD succeeds.
check() {
	_desc=$1; shift
	if "$@"; then ok 0 "$_desc"; else ok 1 "$_desc"; fi
}

# is DESCRIPTION GOT EXPECTED
is() {
	if [ "$2" = "$3" ]; then
		ok 0 "$1"
	else
		ok 1 "$1"
		diag "  got:      '$2'"
		diag "  expected: '$3'"
	fi
}

skip() {
	T_N=$((T_N + 1))
	printf 'ok %d - %s # SKIP %s\n' "$T_N" "$1" "$2"
}

# skip_all REASON: the whole file cannot run here.
skip_all() {
	printf '1..0 # SKIP %s\n' "$1"
	exit 0
}

bail() {
	printf 'Bail out! %s\n' "$*"
	exit 99
}

done_testing() {
	printf '1..%d\n' "$T_N"
	[ "$T_FAILED" -eq 0 ]
	exit $?
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# --- the scratch directory ----------------------------------------------

T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/se-test.XXXXXX") || bail "mktemp"
chmod 755 "$T_TMP"

cleanup_tmp() {
	# Unmount anything a test mounted below the scratch directory,
	# deepest first, before removing it.
	if [ -r /proc/self/mounts ]; then
		awk -v t="$T_TMP" 'index($2, t) == 1 { print $2 }' /proc/self/mounts |
			sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
	fi
	chmod -R u+rwX "$T_TMP" 2>/dev/null
	rm -rf "$T_TMP"
}
trap cleanup_tmp EXIT
trap 'exit 130' INT TERM

[ -x "$SAFE_EXTRACT" ] || bail "no extractor at $SAFE_EXTRACT (run make first)"

# --- running the extractor ------------------------------------------------

# SE_PREFIX: a command that wraps the extractor (env, the seccomp wrapper,
# setpriv).  run_se ARGS...: runs it, output in $T_TMP/out and $T_TMP/err,
# status in $rc.  Never fails itself, so a test can look at all three.
SE_PREFIX=
run_se() {
	# shellcheck disable=SC2086
	$SE_PREFIX "$SAFE_EXTRACT" "$@" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	return 0
}

# Same, reading the archive from standard input: run_se_stdin FILE ARGS...
run_se_stdin() {
	_in=$1; shift
	# shellcheck disable=SC2086
	$SE_PREFIX "$SAFE_EXTRACT" "$@" <"$_in" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	return 0
}

show_err() {
	sed 's/^/#   stderr: /' "$T_TMP/err" | head -n "${1:-10}"
}

# The ways the suite resolves paths.  auto is openat2 on this host; walk-env
# forces the fallback by environment; the seccomp ones make openat2 fail as
# an old kernel (ENOSYS) or a container runtime's filter (EPERM) would, so
# auto must fall back by itself.
# A backend forced by name joins the list when this kernel can provide it.
BACKENDS="auto"
for _b in at openat2; do
	if SAFE_EXTRACT_RESOLVER=$_b "$SAFE_EXTRACT" --print-resolver >/dev/null 2>&1; then
		BACKENDS="$BACKENDS $_b-env"
	fi
done
BACKENDS="$BACKENDS walk-env seccomp-enosys seccomp-eperm"

# backend_prefix NAME: the SE_PREFIX for one of $BACKENDS.
backend_prefix() {
	case $1 in
	auto) echo "" ;;
	at-env) echo "env SAFE_EXTRACT_RESOLVER=at" ;;
	openat2-env) echo "env SAFE_EXTRACT_RESOLVER=openat2" ;;
	walk-env) echo "env SAFE_EXTRACT_RESOLVER=walk" ;;
	seccomp-enosys) echo "$HELPERS/no-openat2 --errno=ENOSYS" ;;
	seccomp-eperm) echo "$HELPERS/no-openat2 --errno=EPERM" ;;
	*) bail "unknown backend $1" ;;
	esac
}

# --- archives and trees ---------------------------------------------------

# mkar OUT [FORMAT] < SPEC: build a tar archive from a spec (tests/lib/mkar.py).
mkar() { "$PY" "$TLIB/mkar.py" "$@"; }

# tree_list DIR [OPTIONS]: one line per object below DIR (tests/lib/tree.py).
tree_list() { "$PY" "$TLIB/tree.py" "$@"; }

# Temporary names the extractor must never leave behind.
count_temps() {
	find "$1" -name '.safe-extract-*' 2>/dev/null | wc -l | tr -d ' '
}

# fresh DIR: an empty directory (removed first).
fresh() {
	chmod -R u+rwX "$1" 2>/dev/null
	rm -rf "$1"
	mkdir -p "$1"
}

# file_of PATH: what is at PATH without following it.
kind_of() {
	if [ -L "$1" ]; then echo symlink
	elif [ -d "$1" ]; then echo dir
	elif [ -p "$1" ]; then echo fifo
	elif [ -c "$1" ]; then echo chr
	elif [ -b "$1" ]; then echo blk
	elif [ -f "$1" ]; then echo file
	else echo none
	fi
}

# as_nobody CMD...: run as an ordinary user (uid/gid 65534, no groups).
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}

have() { command -v "$1" >/dev/null 2>&1; }

# traced CMD...: run CMD under strace (options in $STRACE_OPTS).  A sanitizer
# build's leak checker stops the world with ptrace, which fails under
# strace: leaks are checked by the untraced runs, so it is off here.
traced() {
	# shellcheck disable=SC2086
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace $STRACE_OPTS "$@"
}

# outcome_of DIR ARGS...: the whole outcome of one run into DIR.outcome:
# exit status, report, messages (DIR written as DEST), tree with content,
# mode, owner and mtime, and the count of temporaries.  For comparing
# --jobs=N with --jobs=1, or --durable with a run without it.  DIR is
# made afresh, then handed to the command in $outcome_prepare, if any.
outcome_of() {
	_dir=$1; shift
	fresh "$_dir"
	[ -n "${outcome_prepare:-}" ] && $outcome_prepare "$_dir"
	run_se --report="$_dir.report" "$@" -C "$_dir"
	{
		echo "exit $rc"
		cat "$_dir.report"
		sed "s|$_dir|DEST|g" "$T_TMP/err"
		tree_list "$_dir" --mtime --owner
		echo "temporaries $(count_temps "$_dir")"
	} >"$_dir.outcome"
}

# same_outcome WHAT A B: one TAP line, and the difference when they differ.
same_outcome() {
	if cmp -s "$2.outcome" "$3.outcome"; then
		ok 0 "$1"
	else
		ok 1 "$1"
		diff "$2.outcome" "$3.outcome" | head -n 20 | sed 's/^/#   /'
	fi
}
