# evalsched/: the evaluation scheduler. One library per room of ARCHITECTURE.md: store, core,
# sim, the daemon, the CLI, the harness adapters; the programs are their main()s.

# --- evalsched/store: evalschedd's SQLite file (on common/store only) ---
# Its schema, the priors the planner learns from (the core's PriorBook fills itself from their
# rows), the timeline gpuacct reads, and every statement on the daemon's tables: plain rows in
# and out, no SQL anywhere else in evalsched/.
noinst_LTLIBRARIES += libevalsched_store.la
libevalsched_store_la_SOURCES = \
	evalsched/store/schema.cpp evalsched/store/schema.hpp \
	evalsched/store/priors.cpp evalsched/store/priors.hpp \
	evalsched/store/timeline.cpp evalsched/store/timeline.hpp \
	evalsched/store/attempts.cpp evalsched/store/attempts.hpp \
	evalsched/store/columns.hpp \
	evalsched/store/counters.cpp evalsched/store/counters.hpp \
	evalsched/store/evaluations.cpp evalsched/store/evaluations.hpp \
	evalsched/store/follows.cpp evalsched/store/follows.hpp \
	evalsched/store/metric_jobs.cpp evalsched/store/metric_jobs.hpp \
	evalsched/store/pilots.cpp evalsched/store/pilots.hpp \
	evalsched/store/rows.cpp evalsched/store/rows.hpp \
	evalsched/store/stage_jobs.cpp evalsched/store/stage_jobs.hpp \
	evalsched/store/stamps.cpp evalsched/store/stamps.hpp \
	evalsched/store/trial_pieces.cpp evalsched/store/trial_pieces.hpp \
	evalsched/store/view_rows.cpp evalsched/store/view_rows.hpp

# --- evalsched/core (issue 6) ---
# Pure (no Slurm, no libevent): a library of its own that the daemon, the CLI, the simulator,
# the unit tests and the fuzz targets link, so all of them run the same planner. The follow's
# pure decisions (issue 21) are here too.
noinst_LTLIBRARIES += libevalsched_core.la
libevalsched_core_la_SOURCES = \
	evalsched/core/command_template.cpp evalsched/core/command_template.hpp \
	evalsched/core/cost_model.cpp evalsched/core/cost_model.hpp \
	evalsched/core/decisions.cpp evalsched/core/decisions.hpp \
	evalsched/core/duration.cpp evalsched/core/duration.hpp \
	evalsched/core/forecast.cpp evalsched/core/forecast.hpp \
	evalsched/core/planner.cpp evalsched/core/planner.hpp \
	evalsched/core/priors.cpp evalsched/core/priors.hpp \
	evalsched/core/suite.cpp evalsched/core/suite.hpp \
	evalsched/core/trials.cpp evalsched/core/trials.hpp \
	evalsched/core/user_environment.cpp evalsched/core/user_environment.hpp \
	evalsched/core/checkpoint_files.cpp evalsched/core/checkpoint_files.hpp \
	evalsched/core/follow_plan.cpp evalsched/core/follow_plan.hpp \
	evalsched/core/window_fit.cpp evalsched/core/window_fit.hpp
libevalsched_core_la_LIBADD = $(TOMLPP_LIBS)
dist_man_MANS += man/evalsched-suite.5
EXTRA_DIST += suites tests/data/suites tests/data/upstream

# --- evalsched/sim: the simulator ---
# A noinst library so the unit tests check its conservation on the same code the evalsched-sim
# program runs.
noinst_LTLIBRARIES += libevalsched_sim.la
libevalsched_sim_la_SOURCES = \
	evalsched/sim/acme_trace.cpp evalsched/sim/acme_trace.hpp \
	evalsched/sim/durations.cpp evalsched/sim/durations.hpp \
	evalsched/sim/experiment.cpp evalsched/sim/experiment.hpp \
	evalsched/sim/policy.cpp evalsched/sim/policy.hpp \
	evalsched/sim/policy_evalsched.cpp \
	evalsched/sim/policy_opencompass.cpp \
	evalsched/sim/policy_sequential.cpp \
	evalsched/sim/slurm_model.cpp evalsched/sim/slurm_model.hpp \
	evalsched/sim/storage.cpp evalsched/sim/storage.hpp \
	evalsched/sim/world.cpp evalsched/sim/world.hpp
# Installed into bindir through a directory variable of its own, so this block does not depend
# on which part declares bin_PROGRAMS first.
evalsimbindir = $(bindir)
evalsimbin_PROGRAMS = evalsched-sim
evalsched_sim_SOURCES = evalsched/sim/main.cpp
evalsched_sim_LDADD = libevalsched_sim.la libevalsched_core.la libevalsched_store.la libacme.la
dist_man_MANS += man/evalsched-sim.1
BENCH_TARGETS += evalsched-sim

# --- evalsched/daemon: evalschedd (issue 7) ---
# libslurm calls stay in common/slurm; the daemon's logic is a noinst library so the unit
# tests and the fuzz targets run the code the daemon runs. Its sources are this one list: the
# daemon, the unit tests and `make fuzz` (tests/local.mk) all take them from here.
noinst_LTLIBRARIES += libevalschedd.la
libevalschedd_la_SOURCES = \
	evalsched/daemon/accounts.cpp evalsched/daemon/accounts.hpp \
	evalsched/daemon/api/api_request.cpp evalsched/daemon/api/api_request.hpp \
	evalsched/daemon/config.cpp evalsched/daemon/config.hpp \
	evalsched/daemon/sched/job_script.cpp evalsched/daemon/sched/job_script.hpp \
	evalsched/daemon/sched/scheduler.cpp evalsched/daemon/sched/scheduler.hpp \
	evalsched/daemon/sched_status.cpp evalsched/daemon/sched_status.hpp \
	evalsched/daemon/sched/progress.cpp evalsched/daemon/sched/progress.hpp \
	evalsched/daemon/sched/lifecycle.cpp evalsched/daemon/sched/lifecycle.hpp \
	evalsched/daemon/sched/trial_kind.cpp evalsched/daemon/sched/trial_kind.hpp \
	evalsched/daemon/sched/pilot_kind.cpp evalsched/daemon/sched/pilot_kind.hpp \
	evalsched/daemon/sched/pilot_steps.cpp evalsched/daemon/sched/pilot_steps.hpp \
	evalsched/daemon/sched/pilot_tail.cpp evalsched/daemon/sched/pilot_tail.hpp \
	evalsched/daemon/sched/pilot_serve.cpp evalsched/daemon/sched/pilot_serve.hpp \
	evalsched/daemon/sched/metric_kind.cpp evalsched/daemon/sched/metric_kind.hpp \
	evalsched/daemon/sched/stage_kind.cpp evalsched/daemon/sched/stage_kind.hpp \
	evalsched/daemon/sched/job_files.cpp evalsched/daemon/sched/job_files.hpp \
	evalsched/daemon/sched/job_outputs.cpp evalsched/daemon/sched/job_outputs.hpp \
	evalsched/daemon/caches.cpp evalsched/daemon/caches.hpp \
	evalsched/daemon/evaluations.cpp evalsched/daemon/evaluations.hpp \
	evalsched/daemon/metric_jobs.cpp evalsched/daemon/metric_jobs.hpp \
	evalsched/daemon/views.cpp evalsched/daemon/views.hpp \
	evalsched/daemon/api/routes/route.hpp evalsched/daemon/api/routes/table.cpp \
	evalsched/daemon/api/routes/health.cpp evalsched/daemon/api/routes/list.cpp \
	evalsched/daemon/api/routes/show.cpp evalsched/daemon/api/routes/cancel.cpp \
	evalsched/daemon/api/routes/report.cpp evalsched/daemon/api/routes/priors.cpp \
	evalsched/daemon/api/routes/submit.cpp evalsched/daemon/api/routes/metrics.cpp \
	evalsched/daemon/api/submit_worker.cpp evalsched/daemon/api/submit_worker.hpp \
	evalsched/daemon/state.hpp \
	evalsched/daemon/user_files.cpp evalsched/daemon/user_files.hpp \
	evalsched/daemon/log.hpp
# Hardening (issue 16): the HTTP layer lives in the library so the unit tests and the HTTP fuzz
# target drive the HttpApi the daemon runs; connection limits have a file of their own.
libevalschedd_la_SOURCES += evalsched/daemon/api/http_api.cpp evalsched/daemon/api/http_api.hpp \
	evalsched/daemon/api/conn_guard.cpp evalsched/daemon/api/conn_guard.hpp
# The follow (issue 21): the daemon watches a training run's checkpoint directory (the pure
# decisions in core, the rows in store, the request and the watcher's thread here).
libevalschedd_la_SOURCES += \
	evalsched/daemon/follow_request.cpp evalsched/daemon/follow_request.hpp \
	evalsched/daemon/follows.cpp evalsched/daemon/follows.hpp \
	evalsched/daemon/follow_watcher.cpp evalsched/daemon/follow_watcher.hpp \
	evalsched/daemon/api/routes/follow.cpp
# The submission worker watches its pipe with a libevent event.
libevalschedd_la_LIBADD = $(LIBEVENT_LIBS)

evalschedsbindir = $(sbindir)
evalschedsbin_PROGRAMS = evalsched/daemon/evalschedd
evalsched_daemon_evalschedd_SOURCES = evalsched/daemon/main.cpp
evalsched_daemon_evalschedd_LDADD = libevalschedd.la libevalsched_core.la libevalsched_store.la libacme.la $(LIBEVENT_LIBS) -lpthread
# A helper that lists complete checkpoints by recovery's rules (faultguard's core), run by the
# daemon as the follow's user.
pkglibexec_PROGRAMS += evalsched/daemon/evalsched-ckpt-scan
evalsched_daemon_evalsched_ckpt_scan_SOURCES = evalsched/daemon/ckpt_scan_main.cpp
evalsched_daemon_evalsched_ckpt_scan_LDADD = libfaultguard_core.la libevalsched_core.la libacme.la $(TOMLPP_LIBS)
# Sourced by every trial script on the compute nodes.
evalschedexecdir = $(pkglibexecdir)
dist_evalschedexec_DATA = evalsched/daemon/evalsched-stage.sh
dist_man_MANS += man/evalsched.1 man/evalschedd.8 man/evalsched.conf.5

# --- evalsched/cli: the CLI's own code (the API client and what it prints) ---
# The CLI never links the daemon.
noinst_LTLIBRARIES += libevalsched_cli.la
libevalsched_cli_la_SOURCES = \
	evalsched/cli/client.cpp evalsched/cli/client.hpp \
	evalsched/cli/render.cpp evalsched/cli/render.hpp \
	evalsched/cli/watch.cpp evalsched/cli/watch.hpp \
	evalsched/cli/report.cpp evalsched/cli/report.hpp \
	evalsched/cli/report_html.cpp evalsched/cli/report_html.hpp \
	evalsched/cli/follow_cmd.cpp evalsched/cli/follow_cmd.hpp
libevalsched_cli_la_CPPFLAGS = $(AM_CPPFLAGS) $(CURL_CFLAGS)
libevalsched_cli_la_LIBADD = $(CURL_LIBS)

evalschedbindir = $(bindir)
evalschedbin_PROGRAMS = evalsched/cli/evalsched
evalsched_cli_evalsched_SOURCES = evalsched/cli/main.cpp
evalsched_cli_evalsched_LDADD = libevalsched_cli.la libevalsched_core.la libevalsched_store.la libacme.la $(CURL_LIBS)

# --- evalsched/adapters: the harness adapters (issue 21) ---
# lm-evaluation-harness and OpenCompass behind the suite contract. Their parsers live in a
# library so the unit tests and the fuzz target read the harnesses' files with the code the
# commands run.
noinst_LTLIBRARIES += libevalsched_adapters.la
libevalsched_adapters_la_SOURCES = \
	evalsched/adapters/harness_files.cpp evalsched/adapters/harness_files.hpp \
	evalsched/adapters/lmeval_output.cpp evalsched/adapters/lmeval_output.hpp \
	evalsched/adapters/opencompass_output.cpp evalsched/adapters/opencompass_output.hpp
evalschedbin_PROGRAMS += evalsched/adapters/acme-eval-lmeval evalsched/adapters/acme-eval-opencompass
evalsched_adapters_acme_eval_opencompass_SOURCES = evalsched/adapters/opencompass_main.cpp
evalsched_adapters_acme_eval_opencompass_LDADD = libevalsched_adapters.la libacme.la
evalsched_adapters_acme_eval_lmeval_SOURCES = evalsched/adapters/lmeval_main.cpp
evalsched_adapters_acme_eval_lmeval_LDADD = libevalsched_adapters.la libacme.la
dist_man_MANS += man/acme-eval-adapters.1
# Stand-ins for the harnesses (test doubles, never installed): put on PATH by cluster tests.
EXTRA_DIST += tests/fakes/harness

# --- unit tests ---
tests_unit_acme_unit_SOURCES += \
	tests/unit/evalsched_suite_test.cpp \
	tests/unit/evalsched_groups_test.cpp \
	tests/unit/evalsched_trials_test.cpp \
	tests/unit/evalsched_priors_test.cpp \
	tests/unit/evalsched_planner_test.cpp \
	tests/unit/evalsched_decisions_test.cpp \
	tests/unit/evalsched_store_test.cpp \
	tests/unit/evalsched_sim_test.cpp \
	tests/unit/evalsched_adapters_test.cpp tests/unit/evalsched_lmeval_test.cpp tests/unit/evalsched_environment_test.cpp \
	tests/unit/evalsched_opencompass_test.cpp \
	tests/unit/evalsched_daemon_config_test.cpp \
	tests/unit/evalsched_daemon_api_test.cpp \
	tests/unit/evalsched_daemon_state_test.cpp \
	tests/unit/evalsched_stage_jobs_test.cpp \
	tests/unit/evalsched_refill_test.cpp \
	tests/unit/evalsched_pilot_store_test.cpp \
	tests/unit/evalsched_pilot_tail_test.cpp \
	tests/unit/evalsched_pilot_steps_test.cpp \
	tests/unit/evalsched_suite_serving_test.cpp \
	tests/unit/evalsched_cli_render_test.cpp tests/unit/evalsched_cli_client_test.cpp \
	tests/unit/evalsched_failure_evidence_test.cpp \
	tests/unit/evalsched_forecast_test.cpp tests/unit/evalsched_cli_quiet_test.cpp tests/unit/evalsched_report_columns_test.cpp \
	tests/unit/evalsched_http_limits_test.cpp tests/unit/evalsched_hardening_test.cpp \
	tests/unit/evalsched_user_files_test.cpp \
	tests/unit/evalsched_follow_test.cpp tests/unit/evalsched_window_fit_test.cpp \
	tests/unit/evalsched_stage_patterns_test.cpp

# --- benchmarks (issue 7) ---
# tests/bench/evalsched-cluster (a script) runs the suite three ways on the minicluster, then
# evalsched-api-bench fills a daemon's store with 10,000 trials and measures its API latency.
BENCH_TARGETS += tests/bench/evalsched-api-bench evalsched/daemon/evalschedd evalsched/cli/evalsched
EXTRA_PROGRAMS += tests/bench/evalsched-api-bench
tests_bench_evalsched_api_bench_SOURCES = tests/bench/evalsched_api_bench.cpp
tests_bench_evalsched_api_bench_LDADD = libevalschedd.la libevalsched_core.la libevalsched_store.la libacme.la -lpthread
# evalsched-best: the optimal makespan of a measured evaluation (evalsched-cluster's evalsched/best).
BENCH_TARGETS += tests/bench/evalsched-best
EXTRA_PROGRAMS += tests/bench/evalsched-best
tests_bench_evalsched_best_SOURCES = tests/bench/evalsched_best.cpp

# --- fuzz targets: drivers in tests/fuzz, built by `make fuzz` from the libraries (tests/local.mk) ---
# The suite parser and evalsched-sim --durations (issue 18: the measured per-dataset seconds
# the cluster bench hands over), with toml++'s parser instrumented too.
FUZZ_TARGETS += tests/fuzz/suite-fuzz
tests_fuzz_suite_fuzz_SOURCES = tests/fuzz/suite_fuzz.cpp tests/fuzz/tomlpp_instrumented.cpp
tests_fuzz_suite_fuzz_LDADD = $(FUZZ_LDADD)
FUZZ_TARGETS += tests/fuzz/sim-durations-fuzz
tests_fuzz_sim_durations_fuzz_SOURCES = tests/fuzz/sim_durations_fuzz.cpp tests/fuzz/tomlpp_instrumented.cpp
tests_fuzz_sim_durations_fuzz_LDADD = $(FUZZ_LDADD)
# The daemon's API: request bodies (api-fuzz, follow-request-fuzz) and raw HTTP bytes through
# the HttpApi the daemon runs (issue 16: evhttp, connection limits, routes, store; libevent
# and SQLite are Debian's).
FUZZ_TARGETS += tests/fuzz/evalsched-api-fuzz
tests_fuzz_evalsched_api_fuzz_SOURCES = tests/fuzz/evalsched_api_fuzz.cpp
tests_fuzz_evalsched_api_fuzz_LDADD = $(FUZZ_LDADD)
FUZZ_TARGETS += tests/fuzz/follow-request-fuzz
tests_fuzz_follow_request_fuzz_SOURCES = tests/fuzz/follow_request_fuzz.cpp
tests_fuzz_follow_request_fuzz_LDADD = $(FUZZ_LDADD)
FUZZ_TARGETS += tests/fuzz/evalsched-http-fuzz
tests_fuzz_evalsched_http_fuzz_SOURCES = tests/fuzz/evalsched_http_fuzz.cpp
tests_fuzz_evalsched_http_fuzz_LDADD = $(FUZZ_LDADD)
# What a job's user writes in its attempt directory, read by the root daemon (issue 33).
FUZZ_TARGETS += tests/fuzz/job-outputs-fuzz
tests_fuzz_job_outputs_fuzz_SOURCES = tests/fuzz/job_outputs_fuzz.cpp
tests_fuzz_job_outputs_fuzz_LDADD = $(FUZZ_LDADD)
# What the CLI makes of an answer (libcurl carries it): parsed and printed by the command's own code.
FUZZ_TARGETS += tests/fuzz/evalsched-answer-fuzz
tests_fuzz_evalsched_answer_fuzz_SOURCES = tests/fuzz/evalsched_answer_fuzz.cpp
tests_fuzz_evalsched_answer_fuzz_LDADD = $(FUZZ_LDADD)
# The harnesses' result files, read by the adapters.
FUZZ_TARGETS += tests/fuzz/harness-output-fuzz
tests_fuzz_harness_output_fuzz_SOURCES = tests/fuzz/harness_output_fuzz.cpp
tests_fuzz_harness_output_fuzz_LDADD = $(FUZZ_LDADD)
