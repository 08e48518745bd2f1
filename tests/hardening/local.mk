# tests/hardening: regression tests for the defects of issue 7, one file per
# attack or behaviour, each failing against the extractor before the fixes
# (tests/hardening/OLD-BINARY-RESULTS.md).  Included from tests/local.mk.

check_PROGRAMS += \
	tests/helpers/exchange-attacker \
	tests/helpers/no-rename-noreplace

tests_helpers_exchange_attacker_SOURCES = tests/helpers/exchange-attacker.c
tests_helpers_no_rename_noreplace_SOURCES = tests/helpers/no-rename-noreplace.c

SE_HARDENING_TESTS = \
	tests/hardening/hardlink-data-into-fifo.test \
	tests/hardening/corrupt-member-data.test \
	tests/hardening/iso-out-of-order.test \
	tests/hardening/libarchive-message-escaping.test

TESTS += $(SE_HARDENING_TESTS)

EXTRA_DIST += \
	$(SE_HARDENING_TESTS) \
	tests/hardening/mkhard.py \
	tests/hardening/OLD-BINARY-RESULTS.md
