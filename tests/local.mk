# make check: owned by the tests; included from Makefile.am.
#
# Integration tests are sh scripts that print TAP (tests/lib/common.sh);
# the C helpers below are the parts a shell cannot do: a seccomp filter
# that hides openat2, and a concurrent attacker.

check_PROGRAMS += \
	tests/helpers/no-openat2 \
	tests/helpers/swap-attacker

tests_helpers_no_openat2_SOURCES = tests/helpers/no-openat2.c
tests_helpers_swap_attacker_SOURCES = tests/helpers/swap-attacker.c

SE_INTEGRATION_TESTS = \
	tests/cli.test \
	tests/resolvers.test \
	tests/entry-types.test \
	tests/strict-mode.test \
	tests/in-root.test \
	tests/oci-layer.test \
	tests/oci-umoci.test \
	tests/oci-layer-attack.test \
	tests/oci-image.test \
	tests/oci-archive.test \
	tests/oci-durable.test \
	tests/oci-overlay.test \
	tests/replace.test \
	tests/metadata.test \
	tests/map-ids.test \
	tests/nonroot.test \
	tests/xattrs-acls.test \
	tests/sparse.test \
	tests/names.test \
	tests/names-nfd-kept.test \
	tests/report.test \
	tests/formats.test \
	tests/fatal.test \
	tests/signals.test \
	tests/durable.test \
	tests/journal-kill.test \
	tests/journal-forged.test \
	tests/concurrent-attack.test \
	tests/equivalence.test \
	tests/jobs.test \
	tests/layering.test \
	tests/jobs-differential.test \
	tests/valgrind.test

TESTS += $(SE_INTEGRATION_TESTS)

EXTRA_DIST += \
	$(SE_INTEGRATION_TESTS) \
	tests/lib/jobs-differential.py \
	tests/lib/common.sh \
	tests/lib/mkar.py \
	tests/lib/oci-edit.py \
	tests/lib/oci-sample.sh \
	tests/lib/tree.py \
	bench/run
include tests/hardening/local.mk
include tests/fuzz/local.mk
include tests/archives/local.mk

# libsafe-extract through its public header and the shared library
# (tests/api/): every function, the callbacks, several archives in one
# durable run, cancel from a signal handler, process state left alone.
check_PROGRAMS += tests/api/test-api
TESTS += tests/api/test-api tests/api/api-valgrind.test tests/api/installed.test
tests_api_test_api_SOURCES = tests/api/test-api.c tests/unit/tap.h
tests_api_test_api_CPPFLAGS = -I$(top_srcdir)/include
tests_api_test_api_CFLAGS = $(AM_CFLAGS) -Wno-missing-field-initializers $(LIBARCHIVE_CFLAGS)
tests_api_test_api_LDADD = src/lib/libsafe-extract.la $(LIBARCHIVE_LIBS)
EXTRA_DIST += tests/api/api-valgrind.test tests/api/installed.test

# Real packages against dpkg-deb -x, and the merged-/usr root: a sample in
# make check, every package of the apt cache with `make check-debs`.
# Not in the sanitizer build: a time-bounded sample of benign packages
# compared with another tool, where a sanitizer adds nothing the corpus
# and the fuzzer under it do not (issue 24).
if !SANITIZERS
TESTS += tests/debs.test
endif
EXTRA_DIST += tests/debs.test
check-debs: src/safe-extract
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	SAFE_EXTRACT='$(abs_top_builddir)/src/safe-extract' DEBS_ALL=1 \
	$(SHELL) $(top_srcdir)/tests/debs.test
.PHONY: check-debs

# The sandbox (se_sandbox_apply, --no-sandbox, --print-sandbox): the
# command built with fault injection does, after its sandbox, what a bug
# would do; the test shows the kernel stopping it, and --no-sandbox not.
check_PROGRAMS += tests/helpers/safe-extract-fault
tests_helpers_safe_extract_fault_SOURCES = $(src_safe_extract_SOURCES)
tests_helpers_safe_extract_fault_CPPFLAGS = -I$(top_srcdir)/include -DSE_FAULT_INJECTION=1
tests_helpers_safe_extract_fault_CFLAGS = $(src_safe_extract_CFLAGS)
tests_helpers_safe_extract_fault_LDFLAGS = -static
tests_helpers_safe_extract_fault_LDADD = $(src_safe_extract_LDADD)
TESTS += tests/sandbox.test tests/tar-compat.test tests/keep-directory-symlink.test
EXTRA_DIST += tests/sandbox.test tests/tar-compat.test tests/keep-directory-symlink.test \
	examples/install-packages.c
# Messages named after argv[0]: "tar: ..." when installed as tar.
TESTS += tests/invoked-as-tar.test tests/hole-detection-accepted.test \
	tests/strip-components-verbose.test tests/incremental-renames-verbose.test \
	tests/one-top-level-show-transformed.test
EXTRA_DIST += tests/invoked-as-tar.test tests/hole-detection-accepted.test \
	tests/strip-components-verbose.test tests/incremental-renames-verbose.test \
	tests/one-top-level-show-transformed.test

# The differential test of --jobs at length: 100,000 seeded archives, each
# in a mode and with a thread count drawn from its seed, in two workers.
JOBS_LONG_COUNT = 100000
check-jobs-long: src/safe-extract
	python3 $(top_srcdir)/tests/lib/jobs-differential.py \
		$(abs_top_builddir)/src/safe-extract $(abs_top_builddir)/jobs-long \
		--count $(JOBS_LONG_COUNT) --seed $${JOBS_DIFF_SEED:-1000} --workers 2 \
		--keep-failures $(abs_top_builddir)/jobs-long/failures
.PHONY: check-jobs-long

# GNU tar's command line as tar users type it (issue 23): one test per
# behaviour, named after GNU tar's own test where it has one.
TAR_FIDELITY_TESTS = \
	tests/warning.test \
	tests/member-operands.test \
	tests/old-style-keys.test \
	tests/keep-old-files.test \
	tests/keep-old-files-as-tar.test \
	tests/skip-old-files-existing-directory.test \
	tests/show-transformed-names.test \
	tests/one-top-level.test \
	tests/tar-options-env.test \
	tests/label.test \
	tests/label-mismatch-as-tar.test \
	tests/backup01.test \
	tests/incremental.test \
	tests/incremental-concatenated.test \
	tests/incremental-cyclic-renames.test \
	tests/incremental-renamed-directory.test \
	tests/incremental-rename-into-new-directory.test \
	tests/xattrs-percent.test \
	tests/lzop-sandbox.test
TESTS += $(TAR_FIDELITY_TESTS)
EXTRA_DIST += $(TAR_FIDELITY_TESTS)

# A full queue of records, made exactly: tests/helpers/hold-write.so holds
# one file's write in a writer thread (LD_PRELOAD), so nothing behind it
# can be collected while the run's thread reads on.
check_LTLIBRARIES = tests/helpers/hold-write.la
tests_helpers_hold_write_la_SOURCES = tests/helpers/hold-write.c
tests_helpers_hold_write_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_helpers_hold_write_la_LIBADD = -ldl
TESTS += tests/writer-queue.test
EXTRA_DIST += tests/writer-queue.test
# A destination that fills up while a held file waits for its writer.
TESTS += tests/full-destination-jobs.test
EXTRA_DIST += tests/full-destination-jobs.test
