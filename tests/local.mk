# tests/: the unit test program, the fake NVML, and the fuzz and bench machinery. Each part's
# local.mk adds its own unit tests and benchmarks to the lists started here.

# --- tests/unit: doctest, one program linked against every part's library ----------------------
check_PROGRAMS += tests/unit/acme-unit
tests_unit_acme_unit_SOURCES = \
	tests/unit/main.cpp tests/unit/temp_dir.hpp tests/unit/evalsched_submit_fixture.hpp \
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
# Each target adds itself to FUZZ_TARGETS with an explicit rule that compiles its sources with
# $(FUZZ_CXX) $(FUZZ_FLAGS); scripts/check runs each one briefly over its seed corpus
# tests/fuzz/corpus/<target name>/.
FUZZ_CXX = $(CLANGXX)
FUZZ_FLAGS = -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I$(top_srcdir) $(ACME_PATH_DEFS) \
	$(FMT_CFLAGS) $(SQLITE_CFLAGS) $(NLOHMANN_JSON_CFLAGS) $(TOMLPP_CFLAGS)
FUZZ_LIBS = $(FMT_LIBS) $(SQLITE_LIBS)
CLEANFILES += $(FUZZ_TARGETS)
EXTRA_DIST += tests/fuzz
FUZZ_TARGETS += tests/fuzz/gputrace-args-fuzz
tests/fuzz/gputrace-args-fuzz: $(srcdir)/tests/fuzz/gputrace_args_fuzz.cpp $(srcdir)/common/util/parse.cpp \
		$(srcdir)/spank/gputrace/core/gputrace_config.cpp $(srcdir)/spank/gputrace/core/stall.cpp
	$(AM_V_CXXLD)$(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $^ $(FUZZ_LIBS)
FUZZ_TARGETS += tests/fuzz/faultguard-inputs-fuzz
tests/fuzz/faultguard-inputs-fuzz: $(srcdir)/tests/fuzz/faultguard_inputs_fuzz.cpp $(srcdir)/common/util/parse.cpp \
		$(srcdir)/spank/faultguard/core/faultguard_config.cpp $(srcdir)/spank/faultguard/core/output_path.cpp \
		$(srcdir)/spank/faultguard/core/task_exit_log.cpp $(srcdir)/spank/faultguard/core/epilog_args.cpp
	$(AM_V_CXXLD)$(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $^ $(FUZZ_LIBS)
FUZZ_TARGETS += tests/fuzz/checkpoint-rules-fuzz
tests/fuzz/checkpoint-rules-fuzz: $(srcdir)/tests/fuzz/checkpoint_rules_fuzz.cpp $(srcdir)/common/recovery/checkpoints.cpp \
		$(srcdir)/common/util/parse.cpp
	$(AM_V_CXXLD)$(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $^ $(FUZZ_LIBS) $(TOMLPP_LIBS)
FUZZ_TARGETS += tests/fuzz/record-fuzz
tests/fuzz/record-fuzz: $(srcdir)/tests/fuzz/record_fuzz.cpp $(srcdir)/common/record/codec.cpp \
		$(srcdir)/common/record/record.cpp
	$(AM_V_CXXLD)$(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $^ $(FUZZ_LIBS) $(ZLIB_LIBS)

# Fuzz targets link the engine's sources directly (libacme is built with gcc, not clang).
FUZZ_DIAGNOSE_SRCS = \
	$(srcdir)/common/diagnose/taxonomy.cpp $(srcdir)/common/diagnose/job_end.cpp \
	$(srcdir)/common/diagnose/pattern.cpp $(srcdir)/common/diagnose/rules.cpp \
	$(srcdir)/common/diagnose/log_scan.cpp $(srcdir)/common/diagnose/signature.cpp \
	$(srcdir)/common/diagnose/history.cpp $(srcdir)/common/diagnose/engine.cpp \
	$(srcdir)/common/diagnose/fallback.cpp \
	$(srcdir)/common/diagnose/diagnosis_json.cpp
FUZZ_TARGETS += tests/fuzz/rules-fuzz tests/fuzz/diagnose-fuzz
tests/fuzz/rules-fuzz: $(srcdir)/tests/fuzz/rules_fuzz.cpp $(FUZZ_DIAGNOSE_SRCS)
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) $(RE2_CFLAGS) -o $@ $^ $(FUZZ_LIBS) $(RE2_LIBS) $(TOMLPP_LIBS)
tests/fuzz/diagnose-fuzz: $(srcdir)/tests/fuzz/diagnose_fuzz.cpp $(FUZZ_DIAGNOSE_SRCS) $(dist_rules_DATA)
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) $(RE2_CFLAGS) -DACME_RULES_DIR=\"$(abs_top_srcdir)/rules\" \
		-o $@ $(filter %.cpp,$^) $(FUZZ_LIBS) $(RE2_LIBS) $(TOMLPP_LIBS)
FUZZ_TARGETS += tests/fuzz/fallback-model-fuzz
tests/fuzz/fallback-model-fuzz: $(srcdir)/tests/fuzz/fallback_model_fuzz.cpp $(FUZZ_DIAGNOSE_SRCS)
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) $(RE2_CFLAGS) -o $@ $^ $(FUZZ_LIBS) $(RE2_LIBS) $(TOMLPP_LIBS)
# The first-sight record reader of the diagnosis bench is a parser too.
FUZZ_TARGETS += tests/fuzz/first-sight-fuzz
tests/fuzz/first-sight-fuzz: $(srcdir)/tests/fuzz/first_sight_fuzz.cpp $(srcdir)/common/diagnose/corpus.cpp \
		$(FUZZ_DIAGNOSE_SRCS)
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) $(RE2_CFLAGS) -o $@ $^ $(FUZZ_LIBS) $(RE2_LIBS) $(TOMLPP_LIBS)
# The suite parser's fuzz target compiles the core's sources with clang, toml++ header-only so
# the parser itself is instrumented too.
FUZZ_SUITE_SRCS = \
	$(srcdir)/evalsched/core/suite.cpp $(srcdir)/evalsched/core/command_template.cpp \
	$(srcdir)/evalsched/core/duration.cpp $(srcdir)/evalsched/core/cost_model.cpp \
	$(srcdir)/evalsched/core/priors.cpp $(srcdir)/evalsched/core/trials.cpp \
	$(srcdir)/evalsched/core/user_environment.cpp
FUZZ_TARGETS += tests/fuzz/suite-fuzz
tests/fuzz/suite-fuzz: $(srcdir)/tests/fuzz/suite_fuzz.cpp $(FUZZ_SUITE_SRCS)
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) -UTOML_HEADER_ONLY -UTOML_SHARED_LIB -DTOML_HEADER_ONLY=1 \
		-o $@ $^ $(FUZZ_LIBS)

# evalsched-sim --durations (issue 18): the measured per-dataset seconds the cluster bench hands over.
FUZZ_TARGETS += tests/fuzz/sim-durations-fuzz
tests/fuzz/sim-durations-fuzz: $(srcdir)/tests/fuzz/sim_durations_fuzz.cpp $(srcdir)/evalsched/sim/durations.cpp $(FUZZ_SUITE_SRCS)
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) -UTOML_HEADER_ONLY -UTOML_SHARED_LIB -DTOML_HEADER_ONLY=1 \
		-o $@ $^ $(FUZZ_LIBS)
# What the CLI makes of an answer (libcurl carries it): parsed and printed by the command's own code.
FUZZ_TARGETS += tests/fuzz/evalsched-answer-fuzz
tests/fuzz/evalsched-answer-fuzz: $(srcdir)/tests/fuzz/evalsched_answer_fuzz.cpp $(srcdir)/evalsched/cli/client.cpp \
		$(srcdir)/evalsched/cli/render.cpp $(srcdir)/evalsched/cli/watch.cpp $(srcdir)/common/util/table.cpp \
		$(srcdir)/evalsched/core/duration.cpp
	$(AM_V_CXXLD)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) $(CURL_CFLAGS) -o $@ $^ $(FUZZ_LIBS) $(CURL_LIBS)
FUZZ_TARGETS += tests/fuzz/harness-output-fuzz
tests/fuzz/harness-output-fuzz: $(srcdir)/tests/fuzz/harness_output_fuzz.cpp $(srcdir)/evalsched/adapters/lmeval_output.cpp \
		$(srcdir)/evalsched/adapters/opencompass_output.cpp $(srcdir)/evalsched/adapters/harness_files.cpp
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $^ $(FUZZ_LIBS)
FUZZ_TARGETS += tests/fuzz/evalsched-api-fuzz
tests/fuzz/evalsched-api-fuzz: $(srcdir)/tests/fuzz/evalsched_api_fuzz.cpp $(srcdir)/evalsched/daemon/api/api_request.cpp \
		$(FUZZ_SUITE_SRCS)
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) -UTOML_HEADER_ONLY -UTOML_SHARED_LIB -DTOML_HEADER_ONLY=1 \
		-o $@ $^ $(FUZZ_LIBS)
# What a job's user writes in its attempt directory, read by the root daemon (issue 33).
FUZZ_TARGETS += tests/fuzz/job-outputs-fuzz
tests/fuzz/job-outputs-fuzz: $(srcdir)/tests/fuzz/job_outputs_fuzz.cpp $(srcdir)/evalsched/daemon/sched/job_outputs.cpp \
		$(srcdir)/evalsched/daemon/user_files.cpp $(srcdir)/evalsched/daemon/accounts.cpp
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $^ $(FUZZ_LIBS)

FUZZ_TARGETS += tests/fuzz/follow-request-fuzz
tests/fuzz/follow-request-fuzz: $(srcdir)/tests/fuzz/follow_request_fuzz.cpp $(srcdir)/evalsched/daemon/follow_request.cpp \
		$(srcdir)/evalsched/daemon/api/api_request.cpp $(srcdir)/evalsched/core/follow_plan.cpp $(FUZZ_SUITE_SRCS)
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) -UTOML_HEADER_ONLY -UTOML_SHARED_LIB -DTOML_HEADER_ONLY=1 \
		-o $@ $^ $(FUZZ_LIBS)
FUZZ_TARGETS += tests/fuzz/gpuacct-args-fuzz
tests/fuzz/gpuacct-args-fuzz: $(srcdir)/tests/fuzz/gpuacct_args_fuzz.cpp $(srcdir)/acct/gpuacct/core/sacct_time.cpp \
		$(srcdir)/acct/gpuacct/core/format_spec.cpp $(srcdir)/acct/gpuacct/core/job_states.cpp \
		$(srcdir)/acct/gpuacct/core/sacct_filters.cpp $(srcdir)/acct/gpuacct/core/job_detail.cpp \
		$(srcdir)/common/record/straggler.cpp
	$(AM_V_CXXLD)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) -UTOML_HEADER_ONLY -UTOML_SHARED_LIB -DTOML_HEADER_ONLY=1 \
		-o $@ $^ $(FUZZ_LIBS)
FUZZ_TARGETS += tests/fuzz/prometheus-answer-fuzz
tests/fuzz/prometheus-answer-fuzz: $(srcdir)/tests/fuzz/prometheus_answer_fuzz.cpp \
		$(srcdir)/acct/gpuacct/core/prometheus_source.cpp $(srcdir)/common/util/http_get.cpp
	$(AM_V_CXXLD)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) $(LIBEVENT_CFLAGS) -o $@ $^ $(FUZZ_LIBS) $(LIBEVENT_LIBS)
FUZZ_TARGETS += tests/fuzz/llm-answer-fuzz
tests/fuzz/llm-answer-fuzz: $(srcdir)/tests/fuzz/llm_answer_fuzz.cpp $(srcdir)/common/diagnose/llm_answer.cpp \
		$(srcdir)/common/diagnose/taxonomy.cpp
	$(AM_V_CXXLD)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $^ $(FUZZ_LIBS)
# faultdiag --suggest-rule's drafter (it once looped forever on a hex run): redaction, escaping,
# and the draft compiled and run through the engine.
FUZZ_TARGETS += tests/fuzz/rule-draft-fuzz
tests/fuzz/rule-draft-fuzz: $(srcdir)/tests/fuzz/rule_draft_fuzz.cpp $(srcdir)/common/diagnose/rule_draft.cpp \
		$(srcdir)/common/diagnose/redact.cpp $(FUZZ_DIAGNOSE_SRCS)
	$(AM_V_CXXLD)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) $(RE2_CFLAGS) -o $@ $^ $(FUZZ_LIBS) $(RE2_LIBS) $(TOMLPP_LIBS)
# --- issue 16: the HTTP layer's fuzz target ---
# Raw request bytes through the daemon's HttpApi (evhttp, connection limits, routes, store), all
# compiled with clang so the daemon's own code is instrumented; libevent and SQLite are Debian's.
FUZZ_HTTP_SRCS = $(FUZZ_SUITE_SRCS) \
	$(srcdir)/evalsched/daemon/api/http_api.cpp $(srcdir)/evalsched/daemon/api/conn_guard.cpp \
	$(srcdir)/evalsched/daemon/accounts.cpp \
	$(srcdir)/evalsched/daemon/api/api_request.cpp $(srcdir)/evalsched/daemon/config.cpp \
	$(srcdir)/evalsched/daemon/sched/job_script.cpp $(srcdir)/evalsched/daemon/caches.cpp \
	$(srcdir)/evalsched/store/counters.cpp $(srcdir)/evalsched/daemon/evaluations.cpp \
	$(srcdir)/evalsched/store/evaluations.cpp $(srcdir)/evalsched/store/follows.cpp \
	$(srcdir)/evalsched/store/rows.cpp $(srcdir)/evalsched/daemon/views.cpp \
	$(srcdir)/evalsched/store/view_rows.cpp $(srcdir)/evalsched/store/stamps.cpp \
	$(srcdir)/evalsched/daemon/api/submit_worker.cpp $(srcdir)/evalsched/daemon/api/routes/table.cpp \
	$(srcdir)/evalsched/daemon/api/routes/health.cpp $(srcdir)/evalsched/daemon/api/routes/list.cpp \
	$(srcdir)/evalsched/daemon/api/routes/show.cpp $(srcdir)/evalsched/daemon/api/routes/cancel.cpp \
	$(srcdir)/evalsched/daemon/api/routes/report.cpp $(srcdir)/evalsched/daemon/api/routes/priors.cpp \
	$(srcdir)/evalsched/daemon/api/routes/submit.cpp $(srcdir)/evalsched/daemon/api/routes/metrics.cpp \
	$(srcdir)/common/store/database.cpp $(srcdir)/common/store/migrations.cpp \
	$(srcdir)/evalsched/store/schema.cpp $(srcdir)/evalsched/store/priors.cpp \
	$(srcdir)/evalsched/daemon/sched_status.cpp $(srcdir)/evalsched/daemon/sched/progress.cpp \
	$(srcdir)/evalsched/core/window_fit.cpp $(srcdir)/evalsched/daemon/follows.cpp \
	$(srcdir)/evalsched/daemon/follow_request.cpp $(srcdir)/evalsched/daemon/api/routes/follow.cpp \
	$(srcdir)/common/util/parse.cpp
FUZZ_TARGETS += tests/fuzz/evalsched-http-fuzz
tests/fuzz/evalsched-http-fuzz: $(srcdir)/tests/fuzz/evalsched_http_fuzz.cpp $(FUZZ_HTTP_SRCS)
	$(AM_V_CXX)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) $(LIBEVENT_CFLAGS) -UTOML_HEADER_ONLY -UTOML_SHARED_LIB \
		-DTOML_HEADER_ONLY=1 -o $@ $^ $(FUZZ_LIBS) $(LIBEVENT_LIBS) -lpthread


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
