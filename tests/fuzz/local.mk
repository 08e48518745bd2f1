# tests/fuzz: the libFuzzer harness (tests/fuzz/README.md); included from
# Makefile.am.
#
#   make fuzz                     build, then fuzz for FUZZ_SECONDS (60)
#   make fuzz FUZZ_SECONDS=1800 FUZZ_ARGS='-use_value_profile=1'
#   make fuzz-build               build tests/fuzz/fuzz-extract only
#
# The harness is built with clang directly (CLANG), not the automake CC,
# which may be gcc.  Everything it writes stays under the build directory:
# tests/fuzz/corpus (the working corpus, seeded from tests/archives/corpus
# and tests/fuzz/regressions, kept between runs), tests/fuzz/crashes (new
# crashers); its scratch directories go to FUZZ_WORK (default /dev/shm).

CLANG = clang
FUZZ_SECONDS = 60
FUZZ_SMOKE_SECONDS = 45
FUZZ_ARGS =
FUZZ_ENV =
FUZZ_BIN = tests/fuzz/fuzz-extract
FUZZ_RUN_FLAGS = -timeout=25 -max_len=131072 -rss_limit_mb=2048 -malloc_limit_mb=8192 \
	-close_fd_mask=2 \
	-print_final_stats=1 -dict=$(top_srcdir)/tests/fuzz/fuzz.dict

fuzz-build:
	CLANG='$(CLANG)' \
	LIBARCHIVE_CFLAGS='$(LIBARCHIVE_CFLAGS)' LIBARCHIVE_LIBS='$(LIBARCHIVE_LIBS)' \
	ZLIB_CFLAGS='$(ZLIB_CFLAGS)' ZLIB_LIBS='$(ZLIB_LIBS)' \
	LIBXML_CFLAGS='$(LIBXML_CFLAGS)' LIBXML_LIBS='$(LIBXML_LIBS)' \
	GUNZIP_CFLAGS='$(GUNZIP_CFLAGS)' GUNZIP_LIBS='$(GUNZIP_LIBS)' \
	$(SHELL) $(top_srcdir)/tests/fuzz/build.sh $(top_srcdir) $(top_builddir) $(FUZZ_BIN)

# Seeds: each corpus archive behind a flag byte of 0 (strict and --in-root,
# nothing else; the fuzzer mutates the byte), and every regression case as
# it is.  Existing working-corpus files are kept.
fuzz: fuzz-build
	@set -e; d=tests/fuzz; mkdir -p $$d/corpus $$d/crashes; \
	for f in $(top_srcdir)/tests/archives/corpus/*; do \
		[ -f "$$f" ] || continue; \
		s=$$d/corpus/seed-$$(basename "$$f"); \
		[ -e "$$s" ] || { printf '\000' | cat - "$$f" > "$$s"; }; \
	done; \
	for f in $(top_srcdir)/tests/fuzz/regressions/*; do \
		case $$f in */README.md) continue ;; esac; \
		[ -f "$$f" ] && cp "$$f" "$$d/corpus/regression-$$(basename "$$f")"; \
	done; \
	status=0; \
	$(FUZZ_ENV) $(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) $(FUZZ_RUN_FLAGS) \
		-artifact_prefix=$$d/crashes/ $(FUZZ_ARGS) $$d/corpus || status=$$?; \
	echo "fuzz: working corpus in $(abs_top_builddir)/$$d/corpus"; \
	echo "fuzz: crashers in $(abs_top_builddir)/$$d/crashes:"; \
	ls -l $$d/crashes; \
	exit $$status

# The threaded lane: every run also with four writer threads, which must
# report exactly what one thread reports (FUZZ_JOBS), under the sanitizers
# of the harness's build.
fuzz-jobs:
	$(MAKE) $(AM_MAKEFLAGS) fuzz FUZZ_ENV='FUZZ_JOBS=4'

.PHONY: fuzz fuzz-build fuzz-jobs

# Once per suite, in the normal build: the harness is built by clang with
# its own AddressSanitizer and UBSan whatever the build's flags, so the
# sanitizer build (--enable-sanitizers) would run the very same binary a
# second time (issue 24).
if !SANITIZERS
TESTS += tests/fuzz/fuzz-smoke.test
endif
CLEANFILES += $(FUZZ_BIN)
EXTRA_DIST += \
	tests/fuzz/README.md \
	tests/fuzz/build.sh \
	tests/fuzz/fuzz-extract.c \
	tests/fuzz/fuzz-smoke.test \
	tests/fuzz/fuzz.dict \
	tests/fuzz/local.mk \
	tests/fuzz/regressions
