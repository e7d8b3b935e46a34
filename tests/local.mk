# tests/: the unit test program, the fake NVML, and the fuzz and bench machinery. Each part's
# local.mk adds its own unit tests and benchmarks to the lists started here.

# --- tests/unit: doctest, one program linked against every part's library ----------------------
check_PROGRAMS += tests/unit/acme-unit
tests_unit_acme_unit_SOURCES = \
	tests/unit/main.cpp tests/unit/temp_dir.hpp tests/unit/text_lines.hpp tests/unit/evalsched_submit_fixture.hpp \
	tests/unit/layout_test.cpp
# Every library, each before the ones it builds on (libacme last).
tests_unit_acme_unit_LDADD = libevalschedd.la libevalsched_cli.la libevalsched_adapters.la libevalsched_sim.la \
	libevalsched_core.la libgpuacct_core.la libevalsched_store.la libfaultguard_core.la libgputrace_core.la \
	libacme.la $(LIBEVENT_LIBS) $(CURL_LIBS)
tests_unit_acme_unit_CPPFLAGS = $(AM_CPPFLAGS) -DACME_FAKE_NVML=\"$(abs_builddir)/tests/fakes/libnvidia-ml.so.1\" \
	-DACME_SRCDIR=\"$(abs_srcdir)\"
TESTS += tests/unit/acme-unit

# --- tests/fakes: the fake libnvidia-ml, loaded through the same dlopen path as the real one ----
# Built by plain `make` (the minicluster and the demo load it), never installed: a test double
# does not ship.
noinst_DATA += tests/fakes/libnvidia-ml.so.1
EXTRA_DIST += tests/fakes
CLEANFILES += tests/fakes/libnvidia-ml.so.1
tests/fakes/libnvidia-ml.so.1: $(srcdir)/tests/fakes/libnvidia-ml/fake_nvml.cpp $(srcdir)/common/nvml/nvml_api.hpp
	$(AM_V_CXXLD)$(MKDIR_P) $(@D) && $(CXX) -std=c++20 -O1 -g -fPIC -shared -fvisibility=hidden $(WARN_CXXFLAGS) \
		$(SAN_FLAGS) -I$(top_srcdir) $(TOMLPP_CFLAGS) -Wl,-soname,libnvidia-ml.so.1 -o $@ \
		$(srcdir)/tests/fakes/libnvidia-ml/fake_nvml.cpp $(TOMLPP_LIBS) -ldl -lpthread


# --- tests/fuzz: libFuzzer targets, built with clang by `make fuzz` ---------------------------
# Every library is compiled once more, by $(FUZZ_CXX) (clang, configure) with libFuzzer's
# coverage and ASan+UBSan, into an archive of its own here: the same source list the gcc build
# uses, so a source added to a library (the daemon's included) is in `make fuzz` with no edit
# here. A fuzz target is an automake program: its driver, tests/fuzz/NAME_fuzz.cpp, linked
# against those archives, taking from them only what it calls. A part adds one in its local.mk:
#   FUZZ_TARGETS += tests/fuzz/NAME-fuzz
#   tests_fuzz_NAME_fuzz_SOURCES = tests/fuzz/NAME_fuzz.cpp
#   tests_fuzz_NAME_fuzz_LDADD = $(FUZZ_LDADD)
# and its seed corpus, tests/fuzz/corpus/NAME-fuzz/, which scripts/check runs it briefly over.
# toml++ stays Debian's shared library, uninstrumented (TOMLPP_CFLAGS), as in the gcc build:
# compiled instrumented into every target it once made checkpoint-rules-fuzz stop on
# undefined behaviour inside toml++ itself. A target that fuzzes a TOML reader of ours links
# tests/fuzz/tomlpp_instrumented.cpp, toml++'s parser compiled in with the sanitizers.
FUZZ_CPPFLAGS = $(ACME_CPPFLAGS) $(CURL_CFLAGS)
FUZZ_CXXFLAGS = -std=c++20 -g -O1 -fsanitize=fuzzer-no-link,address,undefined
FUZZ_LINKFLAGS = -fsanitize=fuzzer,address,undefined -Wl,--as-needed
# Each archive before the ones it builds on; what a target does not call stays out of it.
FUZZ_ARCHIVES = tests/fuzz/libevalschedd.a tests/fuzz/libevalsched_cli.a tests/fuzz/libevalsched_adapters.a \
	tests/fuzz/libevalsched_sim.a tests/fuzz/libevalsched_core.a tests/fuzz/libgpuacct_core.a \
	tests/fuzz/libevalsched_store.a tests/fuzz/libfaultguard_core.a tests/fuzz/libgputrace_core.a \
	tests/fuzz/libacme.a
FUZZ_LDADD = $(FUZZ_ARCHIVES) $(FMT_LIBS) $(SQLITE_LIBS) $(TOMLPP_LIBS) $(RE2_LIBS) $(LIBEVENT_LIBS) \
	$(CURL_LIBS) $(ZLIB_LIBS) $(SLURM_LIBS) -ldl -lpthread
EXTRA_LIBRARIES = $(FUZZ_ARCHIVES)
tests_fuzz_libacme_a_SOURCES = $(libacme_la_SOURCES)
tests_fuzz_libacme_a_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_libacme_a_CXXFLAGS = $(FUZZ_CXXFLAGS)
tests_fuzz_libgputrace_core_a_SOURCES = $(libgputrace_core_la_SOURCES)
tests_fuzz_libgputrace_core_a_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_libgputrace_core_a_CXXFLAGS = $(FUZZ_CXXFLAGS)
tests_fuzz_libfaultguard_core_a_SOURCES = $(libfaultguard_core_la_SOURCES)
tests_fuzz_libfaultguard_core_a_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_libfaultguard_core_a_CXXFLAGS = $(FUZZ_CXXFLAGS)
tests_fuzz_libevalsched_store_a_SOURCES = $(libevalsched_store_la_SOURCES)
tests_fuzz_libevalsched_store_a_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_libevalsched_store_a_CXXFLAGS = $(FUZZ_CXXFLAGS)
tests_fuzz_libevalsched_core_a_SOURCES = $(libevalsched_core_la_SOURCES)
tests_fuzz_libevalsched_core_a_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_libevalsched_core_a_CXXFLAGS = $(FUZZ_CXXFLAGS)
tests_fuzz_libevalsched_sim_a_SOURCES = $(libevalsched_sim_la_SOURCES)
tests_fuzz_libevalsched_sim_a_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_libevalsched_sim_a_CXXFLAGS = $(FUZZ_CXXFLAGS)
tests_fuzz_libevalschedd_a_SOURCES = $(libevalschedd_la_SOURCES)
tests_fuzz_libevalschedd_a_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_libevalschedd_a_CXXFLAGS = $(FUZZ_CXXFLAGS)
tests_fuzz_libevalsched_cli_a_SOURCES = $(libevalsched_cli_la_SOURCES)
tests_fuzz_libevalsched_cli_a_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_libevalsched_cli_a_CXXFLAGS = $(FUZZ_CXXFLAGS)
tests_fuzz_libevalsched_adapters_a_SOURCES = $(libevalsched_adapters_la_SOURCES)
tests_fuzz_libevalsched_adapters_a_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_libevalsched_adapters_a_CXXFLAGS = $(FUZZ_CXXFLAGS)
tests_fuzz_libgpuacct_core_a_SOURCES = $(libgpuacct_core_la_SOURCES)
tests_fuzz_libgpuacct_core_a_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_libgpuacct_core_a_CXXFLAGS = $(FUZZ_CXXFLAGS)
# The targets are automake programs; the archives' objects have names of their own (per-target
# flags), so nothing of the gcc build is shared with them. What makes them clang's: these
# variables, set for the targets and the archives and, by make, for everything built for them.
# The drivers see the rules shipped in the tree (diagnose-fuzz loads them).
EXTRA_PROGRAMS += $(FUZZ_TARGETS)
$(FUZZ_TARGETS) $(FUZZ_ARCHIVES): CXX = $(FUZZ_CXX)
$(FUZZ_TARGETS) $(FUZZ_ARCHIVES): CXXFLAGS =
$(FUZZ_TARGETS): AM_CPPFLAGS = $(FUZZ_CPPFLAGS) -DACME_RULES_DIR=\"$(abs_top_srcdir)/rules\"
$(FUZZ_TARGETS): AM_CXXFLAGS = $(FUZZ_CXXFLAGS)
$(FUZZ_TARGETS): AM_LDFLAGS = $(FUZZ_LINKFLAGS)
CLEANFILES += $(FUZZ_ARCHIVES)
# The drivers travel as the programs' sources; the corpora beside them.
EXTRA_DIST += tests/fuzz/corpus

fuzz: $(FUZZ_TARGETS)
print-fuzz-targets:
	@echo $(FUZZ_TARGETS)
.PHONY: fuzz print-fuzz-targets

# --- tests/bench: benchmarks that print ratios; built by `make bench`, never timed in tests ----
# A part adds its programs to EXTRA_PROGRAMS and what `make bench` builds to BENCH_TARGETS.
CLEANFILES += $(EXTRA_PROGRAMS)
EXTRA_DIST += tests/bench
bench: $(BENCH_TARGETS)
.PHONY: bench
