# tools/: standalone programs on common/ only.

# --- tools/gpucheck: CUDA + NCCL node health check, built where configure found them ----------
# Its configuration and man page only where it is built; its verdict is unit tested everywhere.
gpucheckconfdir = $(acmeconfdir)
EXTRA_DIST += etc/gpucheck.toml man/gpucheck.1
if HAVE_CUDA
dist_gpucheckconf_DATA = etc/gpucheck.toml
dist_man_MANS += man/gpucheck.1
bin_PROGRAMS += gpucheck
gpucheck_SOURCES = tools/gpucheck/main.cpp \
	tools/gpucheck/verdict.cpp tools/gpucheck/verdict.hpp \
	tools/gpucheck/devices.cpp tools/gpucheck/devices.hpp \
	tools/gpucheck/measure.cpp tools/gpucheck/measure.hpp \
	tools/gpucheck/multinode.cpp tools/gpucheck/multinode.hpp
gpucheck_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
gpucheck_LDADD = libacme.la $(CUDA_LDFLAGS) $(CUDA_LIBS) $(SLURM_LIBS) $(TOMLPP_LIBS)
else
EXTRA_DIST += tools/gpucheck
endif
tests_unit_acme_unit_SOURCES += tests/unit/gpucheck_verdict_test.cpp \
	tools/gpucheck/verdict.cpp tools/gpucheck/verdict.hpp

# --- tools/fallback-train: the learned fallback's model, trained at build time from the corpus
# (no download), its threshold calibrated on the first-sight records, and installed beside the
# rules (rulesdir: common/local.mk); retrained when the trainer, the corpus's directories or the
# records change ---
noinst_PROGRAMS += tools/fallback-train/acme-fallback-train
tools_fallback_train_acme_fallback_train_SOURCES = tools/fallback-train/main.cpp \
	common/diagnose/corpus.cpp common/diagnose/corpus.hpp \
	common/diagnose/time_split.cpp common/diagnose/time_split.hpp
tools_fallback_train_acme_fallback_train_LDADD = libacme.la
nodist_rules_DATA = fallback/fallback.model
# The temporary file is the shell's own ($$$$): two makes in one tree (a check and a bench) that
# both retrain must not move each other's file away.
fallback/fallback.model: tools/fallback-train/acme-fallback-train$(EXEEXT) $(srcdir)/tests/data/diagnosis $(srcdir)/tests/data/diagnosis/* \
		$(srcdir)/tests/data/first-sight $(srcdir)/tests/data/first-sight/*.tsv
	$(AM_V_GEN)$(MKDIR_P) $(@D) && ./tools/fallback-train/acme-fallback-train $(srcdir)/tests/data/diagnosis \
		$(srcdir)/tests/data/first-sight > $@.tmp.$$$$ && mv $@.tmp.$$$$ $@
CLEANFILES += fallback/fallback.model
EXTRA_DIST += tests/data/first-sight
