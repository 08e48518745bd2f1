# python/local.mk: the Python binding, `import safe_extract` (python/README.md).
# Included from Makefile.am.
#
# A pure-Python package over libsafe-extract.so.0 through cffi's ABI mode:
# nothing is compiled.  make install puts it where configure found that
# this Python reads (python/site-dir.py); make check runs its pytest suite
# against the library of this build ($SAFE_EXTRACT_LIBRARY), and skips
# with the reason when there is no Python, cffi or pytest.

SE_PYTHON_PACKAGE = python/safe_extract/__init__.py
SE_PYTHON_TESTS = python/tests/pytest.test
# The corpus through the binding: the library's paths are those of
# tests/archives/corpus-*.test, which the sanitizer build runs; there the
# binding's own memory is checked by pytest.test (callbacks, sources,
# threads), so the two corpus runs are made once, in the normal build
# (issue 24).
SE_PYTHON_CORPUS_TESTS = \
	python/tests/corpus-strict.test \
	python/tests/corpus-in-root.test

TESTS += $(SE_PYTHON_TESTS)
if !SANITIZERS
TESTS += $(SE_PYTHON_CORPUS_TESTS)
endif
EXTRA_DIST += $(SE_PYTHON_PACKAGE) $(SE_PYTHON_TESTS) $(SE_PYTHON_CORPUS_TESTS) \
	python/README.md python/site-dir.py \
	python/tests/pytest.sh python/tests/se_tap.py python/tests/conftest.py \
	python/tests/corpus-adapter.py \
	python/tests/test_api.py python/tests/test_sources.py \
	python/tests/test_callbacks.py python/tests/test_root.py \
	python/tests/test_threads.py python/tests/test_cli_equivalence.py \
	python/tests/test_cpython_filters.py python/tests/test_corpus.py \
	python/tests/test_installed.py

# The tests run the configured Python, not the first python3 on the PATH.
# In a sanitizer build, the ASan runtime the library needs ahead of Python.
AM_TESTS_ENVIRONMENT += SE_PYTHON='$(PYTHON)'; SE_PYTHON_PRELOAD='$(SAN_PRELOAD)'; \
	export SE_PYTHON SE_PYTHON_PRELOAD;

if HAVE_PYTHON
# Installed as data rather than with automake's _PYTHON primary: no .pyc
# in DESTDIR (dh_python3 compiles them when the Debian package is
# installed; elsewhere Python caches them on first import).
sepythondir = $(SE_PYTHON_DIR)/safe_extract
sepython_DATA = $(SE_PYTHON_PACKAGE) python/safe_extract/_libdir.py
CLEANFILES += python/safe_extract/_libdir.py

# Where make install puts the library, for a prefix the dynamic linker
# does not search (the binding tries it before the bare SONAME).
python/safe_extract/_libdir.py: Makefile
	$(AM_V_GEN)$(MKDIR_P) python/safe_extract && \
	{ echo '"""Written by make: the libdir libsafe-extract is installed in."""'; \
	  echo 'LIBDIR = "$(libdir)"'; } >$@.tmp && mv $@.tmp $@
endif
