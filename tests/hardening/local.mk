# tests/hardening: regression tests for the defects of issue 7, one file per
# attack or behaviour, each failing against the extractor before the fixes
# (tests/hardening/OLD-BINARY-RESULTS.md).  Included from tests/local.mk.

check_PROGRAMS += \
	tests/helpers/exchange-attacker \
	tests/helpers/no-rename-noreplace

tests_helpers_exchange_attacker_SOURCES = tests/helpers/exchange-attacker.c
tests_helpers_no_rename_noreplace_SOURCES = tests/helpers/no-rename-noreplace.c

SE_HARDENING_TESTS = \
	tests/hardening/metadata-exchange-race.test \
	tests/hardening/hardlink-data-into-fifo.test \
	tests/hardening/corrupt-member-data.test \
	tests/hardening/iso-out-of-order.test \
	tests/hardening/libarchive-message-escaping.test \
	tests/hardening/durable-same-tree.test \
	tests/hardening/durable-many-directories.test \
	tests/hardening/durable-directory-xattrs-after-a-cut.test \
	tests/hardening/unverified-after-failed-check.test \
	tests/hardening/file-header-named-like-a-directory.test \
	tests/hardening/durable-in-root-relinked-dir.test \
	tests/hardening/metadata-failure-keeps-file.test \
	tests/hardening/utf8-member-names.test \
	tests/hardening/signals-leave-no-temporary.test \
	tests/hardening/output-write-errors.test \
	tests/hardening/empty-dir-in-the-way.test \
	tests/hardening/repeated-dir-memory.test \
	tests/hardening/xattr-namespace-policy.test \
	tests/hardening/empty-input.test \
	tests/hardening/durable-cpio-hardlinks.test \
	tests/hardening/unmatched-patterns.test \
	tests/hardening/no-same-owner-setid.test \
	tests/hardening/keep-old-without-noreplace.test \
	tests/hardening/out-of-range-ids.test \
	tests/hardening/gzip-trailer-unverified.test \
	tests/hardening/jobs-failed-data-gives-room-back.test \
	tests/hardening/jobs-order-by-object.test \
	tests/hardening/jobs-layer-clears-by-object.test \
	tests/hardening/jobs-few-descriptors.test \
	tests/hardening/durable-symlink-file-directory.test \
	tests/hardening/gzip-magic-in-a-short-read.test

TESTS += $(SE_HARDENING_TESTS)

EXTRA_DIST += \
	$(SE_HARDENING_TESTS) \
	tests/hardening/mkhard.py \
	tests/hardening/mkunverified.py \
	tests/hardening/mkdirbody.py \
	tests/hardening/OLD-BINARY-RESULTS.md
