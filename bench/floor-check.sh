#!/bin/sh
# bench/floor-check.sh - does bench/floor make the tree safe-extract makes?
# A floor that makes less than the extractors (no symlink times, a mode
# left to the umask) would be a floor too low, and every ratio to it a
# lie.  Not part of make check: it needs a built safe-extract.
#
# usage: bench/floor-check.sh [SAFE_EXTRACT]
#
#   FLOOR=PATH   a floor binary already built (to check a changed one);
#                by default bench/floor.c is built as bench/run builds it
#
# Two archives, each extracted by safe-extract and by floor -j 1 and -j 2,
# the trees compared with tests/lib/tree.py (types, sizes, content
# hashes, modes, owners, symlink targets, hard-link groups, mtimes): a tar
# of bench/gen-small.py, and one of tests/lib/mkar.py with every entry
# type, odd modes, owners, set-id bits, a long name and missing parents
# (whose mtimes are the time of the run, so left out of the comparison).
# Prints one line per comparison, then PASS or FAIL (exit 1).
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
SE=${1:-${SAFE_EXTRACT:-}}
if [ -z "$SE" ]; then
	for c in "$here/src/safe-extract" "$here/build-default/src/safe-extract"; do
		[ -x "$c" ] && SE=$c && break
	done
fi
[ -n "$SE" ] && [ -x "$SE" ] ||
	{ echo "floor-check: no safe-extract (give its path)" >&2; exit 2; }

W=$(mktemp -d "${TMPDIR:-/tmp}/floor-check.XXXXXX") || exit 2
: "${W:?}"
trap 'chmod -R u+rwX "$W" 2>/dev/null; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

FLOOR=${FLOOR:-}
if [ -z "$FLOOR" ]; then
	FLOOR=$W/floor
	# shellcheck disable=SC2046
	cc -O2 -o "$FLOOR" "$here/bench/floor.c" $(pkg-config --cflags --libs libarchive) -pthread ||
		{ echo "floor-check: cannot build bench/floor.c" >&2; exit 2; }
fi

python3 "$here/bench/gen-small.py" 2500 100 "$W/small.tar" || exit 2
python3 "$here/tests/lib/mkar.py" "$W/types.tar" pax <<'EOF' || exit 2
d ./top mode=0755 mtime=1600000000
d top/private mode=0700 mtime=1600000001
d top/ro mode=0555 mtime=1600000002
d top/sticky mode=1777 mtime=1600000003
f top/ro/inside "in a read-only directory" mode=0644 mtime=1600000010
f top/a.txt hello mode=0644 mtime=1600000011
f top/readonly "no write bit" mode=0444 mtime=1600000012
f top/empty "" mode=0600 mtime=1600000013
z top/private/big 3000000 mode=0600 mtime=1600000014
f top/setuid "#!/bin/sh" mode=4755 mtime=1600000015 uid=1000 gid=1000
f top/setgid "#!/bin/sh" mode=2755 mtime=1600000016
f top/owned x mode=0640 mtime=1600000017 uid=1234 gid=5678
l top/link a.txt mtime=1600000018
l top/dirlink private mtime=1600000019
l top/ownedlink a.txt mtime=1600000020 uid=1000 gid=1000
l top/dangling nowhere/at/all mtime=1600000021
h top/private/hard top/a.txt
p top/fifo mode=0640 mtime=1600000022
d top/pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp mode=0750 mtime=1600000023
f top/pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/long-name-beyond-ustar-qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq x mtime=1600000024
f implicit/parents/file x mode=0640 mtime=1600000025
d gid mode=2755 mtime=1600000026
d gid/sub mode=0755 mtime=1600000027
f gid/sub/f y mode=0644 mtime=1600000028
EOF

# The listing of DIR; a missing parent's mtime is the time it was made.
listing() {
	python3 "$here/tests/lib/tree.py" "$1" --mtime --dir-mtime --owner |
		sed "/^'implicit[^ ]*' dir /s/ mtime=[0-9]*//"
}

failed=0
for a in small types; do
	mkdir "$W/se-$a"
	if ! "$SE" "$W/$a.tar" -C "$W/se-$a" >"$W/se-$a.out" 2>&1; then
		echo "FAIL $a.tar: safe-extract exited $? ($(head -c 300 "$W/se-$a.out"))"
		failed=1
		continue
	fi
	listing "$W/se-$a" >"$W/se-$a.list"
	for j in 1 2; do
		out=$W/floor-$a-$j
		mkdir "$out"
		if ! "$FLOOR" -j "$j" "$W/$a.tar" "$out" 2>"$out.err"; then
			echo "FAIL $a.tar: floor -j $j: $(cat "$out.err")"
			failed=1
			continue
		fi
		listing "$out" >"$out.list"
		if diff -u "$W/se-$a.list" "$out.list" >"$out.diff"; then
			echo "ok   $a.tar: floor -j $j makes safe-extract's tree ($(wc -l <"$out.list") objects)"
		else
			echo "FAIL $a.tar: floor -j $j differs from safe-extract (- safe-extract, + floor):"
			sed -n '3,23p' "$out.diff"
			failed=1
		fi
	done
done
if [ "$failed" -eq 0 ]; then echo PASS; else echo FAIL; exit 1; fi
