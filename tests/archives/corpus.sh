# corpus.sh - sourced by the corpus-*.test wrappers that make check runs.
#
# run_corpus MODE [WRAPPER...]: the whole hostile corpus against this
# build's safe-extract in MODE, optionally under a wrapper command (the
# seccomp filter that hides openat2).  The runner's TAP goes to make check.
set -u
here=${top_srcdir:-.}/tests/archives
: "${SAFE_EXTRACT:?SAFE_EXTRACT must name the binary under test}"

run_corpus() {
	mode=$1
	shift
	if [ $# -gt 0 ]; then
		exec sh "$here/run" --mode "$mode" \
			--extractor "$* \"$SAFE_EXTRACT\" {seopts} {opts} {archive} -C {dest}"
	fi
	exec sh "$here/run" --mode "$mode"
}
