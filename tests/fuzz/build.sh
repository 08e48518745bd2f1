#!/bin/sh
# tests/fuzz/build.sh SRCDIR BUILDDIR OUT - build the libFuzzer harness.
#
# Used by `make fuzz` (tests/fuzz/local.mk) and by fuzz-smoke.test, so the
# two always build the same thing.  Compiles tests/fuzz/fuzz-extract.c and
# every src/lib/*.c and src/cli/*.c but src/cli/main.c with clang directly (the automake CC may be
# gcc), against BUILDDIR/config.h.  Reuses OUT when it is newer than every
# source, header and config.h.
#
# Environment: CLANG (default clang, then clang-14), FUZZ_CFLAGS (extra
# flags), LIBARCHIVE_CFLAGS/LIBARCHIVE_LIBS, ZLIB_CFLAGS/ZLIB_LIBS,
# LIBXML_CFLAGS/LIBXML_LIBS and GUNZIP_CFLAGS/GUNZIP_LIBS (from
# configure; pkg-config when unset).
# Exit 77 when clang cannot build a libFuzzer binary here, 1 on a build
# error.
set -u
srcdir=$1 builddir=$2 out=$3

if [ -z "${CLANG:-}" ]; then
	CLANG=clang
	command -v clang >/dev/null 2>&1 || CLANG=clang-14
fi
command -v "$CLANG" >/dev/null 2>&1 || { echo "build.sh: no $CLANG" >&2; exit 77; }
[ -f "$builddir/config.h" ] || { echo "build.sh: no $builddir/config.h (run configure)" >&2; exit 1; }

# The library and the command but its main(): modules added later are
# picked up by the globs.
set --
for f in "$srcdir"/src/lib/*.c "$srcdir"/src/cli/*.c; do
	case $f in */src/cli/main.c) ;; *) set -- "$@" "$f" ;; esac
done
harness=$srcdir/tests/fuzz/fuzz-extract.c

stale=no
if [ ! -x "$out" ]; then
	stale=yes
else
	for f in "$harness" "$builddir/config.h" "$@" "$srcdir"/src/*/*.h \
		"$srcdir/include/safe-extract.h"; do
		[ "$f" -nt "$out" ] && stale=yes
	done
fi
[ "$stale" = no ] && exit 0

: "${LIBARCHIVE_CFLAGS=$(pkg-config --cflags libarchive 2>/dev/null)}"
: "${LIBARCHIVE_LIBS=$(pkg-config --libs libarchive 2>/dev/null || echo -larchive)}"
: "${ZLIB_CFLAGS=$(pkg-config --cflags zlib 2>/dev/null)}"
: "${ZLIB_LIBS=$(pkg-config --libs zlib 2>/dev/null || echo -lz)}"
# a xar's table of contents read again (src/lib/xarraw.c)
: "${LIBXML_CFLAGS=$(pkg-config --cflags libxml-2.0 2>/dev/null)}"
: "${LIBXML_LIBS=$(pkg-config --libs libxml-2.0 2>/dev/null || echo -lxml2)}"
# xz and zstd decoding (src/lib/decode.c), threads.
: "${DECODE_LIBS=$(pkg-config --libs liblzma libzstd 2>/dev/null || echo -llzma -lzstd) -pthread}"
# gzip's inflater (src/lib/gunzip.c): Intel ISA-L when configure chose it
# for this build directory, zlib (linked anyway) when not.
if grep -q '^#define HAVE_ISAL 1' "$builddir/config.h"; then
	: "${GUNZIP_CFLAGS=$(pkg-config --cflags libisal 2>/dev/null)}"
	: "${GUNZIP_LIBS=$(pkg-config --libs libisal 2>/dev/null || echo -lisal)}"
fi

mkdir -p "$(dirname "$out")" || exit 1
tmp=$out.tmp.$$
# shellcheck disable=SC2086
"$CLANG" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer -g -O1 -Wall -Wextra -Wno-unused-parameter \
	-I"$builddir" -I"$srcdir/include" -I"$srcdir/src/cli" $LIBARCHIVE_CFLAGS $ZLIB_CFLAGS $LIBXML_CFLAGS ${GUNZIP_CFLAGS:-} \
	${FUZZ_CFLAGS:-} -o "$tmp" "$harness" "$@" $LIBARCHIVE_LIBS $ZLIB_LIBS $LIBXML_LIBS ${GUNZIP_LIBS:-} $DECODE_LIBS -lz
rc=$?
if [ $rc -ne 0 ]; then
	rm -f "$tmp"
	exit 1
fi
mv -f "$tmp" "$out"
