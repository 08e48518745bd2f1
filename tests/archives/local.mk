# tests/archives/local.mk: the hostile corpus as something other projects
# run.  Included from tests/local.mk.
#
# make check: the runner's verdict (exit status, --fail-on, --json), the
# mount cases without root, manifest.json against its schema.
TESTS += \
	tests/archives/verdict.test \
	tests/archives/mounts-without-root.test \
	tests/archives/manifest-schema.test
