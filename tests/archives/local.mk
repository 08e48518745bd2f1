# tests/archives/local.mk: the hostile corpus as something other projects
# run.  Included from tests/local.mk.
#
# make check: the runner's verdict (exit status, --fail-on, --json), the
# mount cases without root, manifest.json against its schema.
TESTS += \
	tests/archives/verdict.test \
	tests/archives/mounts-without-root.test \
	tests/archives/manifest-schema.test \
	tests/archives/adapters.test

# make install: the corpus, its manifests, the runner and the adapters in
# $(datadir)/safe-extract/corpus, and the runner on the PATH as
# safe-extract-corpus (a wrapper that runs that copy).  The archives are
# installed by a hook because automake wants every file named and gen
# owns the list.
corpusdir = $(datadir)/safe-extract/corpus
dist_corpus_DATA = \
	tests/archives/MANIFEST \
	tests/archives/manifest.json \
	tests/archives/manifest.schema.json \
	tests/archives/README.md
dist_corpus_SCRIPTS = tests/archives/run
corpusbindir = $(bindir)
corpusbin_SCRIPTS = tests/archives/safe-extract-corpus
CLEANFILES += tests/archives/safe-extract-corpus
dist_man_MANS += tests/archives/safe-extract-corpus.1

tests/archives/safe-extract-corpus: $(srcdir)/tests/archives/safe-extract-corpus.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tests/archives && \
	sed -e 's|@corpusdir[@]|$(corpusdir)|g' -e 's|@bindir[@]|$(bindir)|g' \
		$(srcdir)/tests/archives/safe-extract-corpus.in >$@.tmp && \
	chmod 755 $@.tmp && mv $@.tmp $@

install-data-local: install-corpus-archives
uninstall-local: uninstall-corpus-archives

install-corpus-archives:
	$(MKDIR_P) '$(DESTDIR)$(corpusdir)/corpus'
	for f in $(srcdir)/tests/archives/corpus/*; do \
		$(INSTALL_DATA) "$$f" '$(DESTDIR)$(corpusdir)/corpus/' || exit 1; \
	done
	if [ -d $(srcdir)/tests/archives/adapters ]; then \
		$(MKDIR_P) '$(DESTDIR)$(corpusdir)/adapters' && \
		for f in $(srcdir)/tests/archives/adapters/*; do \
			case $$f in \
			*.c|*.md|*.json|*.js) $(INSTALL_DATA) "$$f" '$(DESTDIR)$(corpusdir)/adapters/' ;; \
			*) $(INSTALL_SCRIPT) "$$f" '$(DESTDIR)$(corpusdir)/adapters/' ;; \
			esac || exit 1; \
		done; \
	fi

uninstall-corpus-archives:
	for f in $(srcdir)/tests/archives/corpus/*; do \
		rm -f '$(DESTDIR)$(corpusdir)/corpus/'"$${f##*/}"; \
	done
	for f in $(srcdir)/tests/archives/adapters/*; do \
		[ -e "$$f" ] || continue; \
		rm -f '$(DESTDIR)$(corpusdir)/adapters/'"$${f##*/}"; \
	done
	-rmdir '$(DESTDIR)$(corpusdir)/corpus' '$(DESTDIR)$(corpusdir)/adapters' 2>/dev/null

.PHONY: install-corpus-archives uninstall-corpus-archives
