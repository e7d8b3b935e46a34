# acct/: the read-only reports, gpuacct and faultdiag (on common/ and evalsched/store only).

# --- gpuacct (issue 8) ---
# Aggregating what the node spools (common/store/spool_set) and slurmdbd hold is pure logic in
# acct/gpuacct/core; acct/gpuacct is the command: options, one file per view, output, the HTML
# report.
noinst_LTLIBRARIES += libgpuacct_core.la
libgpuacct_core_la_SOURCES = \
	acct/gpuacct/core/sacct_time.cpp acct/gpuacct/core/sacct_time.hpp \
	acct/gpuacct/core/format_spec.cpp acct/gpuacct/core/format_spec.hpp \
	acct/gpuacct/core/job_states.cpp acct/gpuacct/core/job_states.hpp \
	acct/gpuacct/core/spool_rows.hpp \
	acct/gpuacct/core/aggregate.cpp acct/gpuacct/core/aggregate.hpp \
	acct/gpuacct/core/eval_timeline.cpp acct/gpuacct/core/eval_timeline.hpp \
	acct/gpuacct/core/report_aggregates.cpp acct/gpuacct/core/report_aggregates.hpp \
	acct/gpuacct/core/query_options.hpp acct/gpuacct/core/context.hpp \
	acct/gpuacct/core/sacct_selection.cpp acct/gpuacct/core/sacct_selection.hpp \
	acct/gpuacct/core/slurm_view.cpp acct/gpuacct/core/slurm_view.hpp \
	acct/gpuacct/core/load.cpp acct/gpuacct/core/load.hpp \
	acct/gpuacct/core/slurmdbd_set.cpp acct/gpuacct/core/slurmdbd_set.hpp
# Goodput of a job (issue 39): the pure computation and the runs it reads from slurmdbd.
libgpuacct_core_la_SOURCES += acct/gpuacct/core/goodput.cpp acct/gpuacct/core/goodput.hpp \
	acct/gpuacct/core/goodput_runs.cpp acct/gpuacct/core/goodput_runs.hpp \
	acct/gpuacct/core/goodput_spool.cpp acct/gpuacct/core/goodput_spool.hpp
# --prometheus (issue 15): running jobs' GPU numbers from the site's Prometheus, the GET being
# common/util/http_get's (libevent); sacct's options and jobstats' job view (issue 17): the
# filters, the job view and its [detail] thresholds (gpuacct.toml, toml++), --yaml.
libgpuacct_core_la_SOURCES += acct/gpuacct/core/prometheus_source.cpp acct/gpuacct/core/prometheus_source.hpp \
	acct/gpuacct/core/job_detail.cpp acct/gpuacct/core/job_detail.hpp \
	acct/gpuacct/core/sacct_filters.cpp acct/gpuacct/core/sacct_filters.hpp \
	acct/gpuacct/core/yaml.cpp acct/gpuacct/core/yaml.hpp

GPUACCT_CLI = \
	acct/gpuacct/cli.cpp acct/gpuacct/cli.hpp \
	acct/gpuacct/table.cpp acct/gpuacct/table.hpp \
	acct/gpuacct/views.cpp acct/gpuacct/views.hpp \
	acct/gpuacct/view_jobs.cpp acct/gpuacct/view_failures.cpp acct/gpuacct/view_detail.cpp \
	acct/gpuacct/json_sacct.cpp acct/gpuacct/json_sacct.hpp \
	acct/gpuacct/view_nodes.cpp acct/gpuacct/view_summary.cpp \
	acct/gpuacct/report.cpp acct/gpuacct/report.hpp acct/gpuacct/report_page.hpp \
	acct/gpuacct/goodput_cli.cpp acct/gpuacct/goodput_cli.hpp
bin_PROGRAMS += acct/gpuacct/gpuacct
acct_gpuacct_gpuacct_SOURCES = acct/gpuacct/main.cpp $(GPUACCT_CLI)
acct_gpuacct_gpuacct_LDADD = libgpuacct_core.la libevalsched_store.la libacme.la $(LIBEVENT_LIBS)
dist_man_MANS += man/gpuacct.1
EXTRA_DIST += acct/gpuacct/gpuacct.schema.json

# --- faultdiag: the diagnosis of a job or a log, from the spools or slurmdbd (issues 4, 14) ---
FAULTDIAG_CLI = \
	acct/faultdiag/cli.cpp acct/faultdiag/cli.hpp \
	acct/faultdiag/render.cpp acct/faultdiag/render.hpp \
	acct/faultdiag/spool_job.cpp acct/faultdiag/spool_job.hpp \
	acct/faultdiag/slurmdbd_job.cpp acct/faultdiag/slurmdbd_job.hpp \
	acct/faultdiag/log_input.cpp acct/faultdiag/log_input.hpp \
	acct/faultdiag/rule_suggestion.cpp acct/faultdiag/rule_suggestion.hpp
bin_PROGRAMS += acct/faultdiag/faultdiag
acct_faultdiag_faultdiag_SOURCES = acct/faultdiag/main.cpp $(FAULTDIAG_CLI)
acct_faultdiag_faultdiag_LDADD = libacme.la
dist_man_MANS += man/faultdiag.1

# --- unit tests: the commands' own files are compiled into them ---
tests_unit_acme_unit_SOURCES += $(GPUACCT_CLI) $(FAULTDIAG_CLI) tests/unit/acct_spool_fixture.hpp \
	tests/unit/acct_sacct_time_test.cpp \
	tests/unit/acct_format_spec_test.cpp \
	tests/unit/acct_aggregate_test.cpp tests/unit/acct_report_aggregates_test.cpp \
	tests/unit/acct_sacct_selection_test.cpp \
	tests/unit/acct_slurmdbd_set_test.cpp tests/unit/acct_goodput_test.cpp tests/unit/acct_goodput_spool_test.cpp \
	tests/unit/acct_prometheus_source_test.cpp \
	tests/unit/gpuacct_cli_test.cpp tests/unit/gpuacct_sacct_options_test.cpp tests/unit/gpuacct_table_stream_test.cpp \
	tests/unit/faultdiag_cli_test.cpp

# `make bench`: a synthetic six-month spool of 1,000,000 jobs; gpuacct beside one SQL statement.
# tests/bench/gpuacct (a script) runs it; the generator writes the spool.
BENCH_TARGETS += tests/bench/gpuacct-spool-gen acct/gpuacct/gpuacct
EXTRA_PROGRAMS += tests/bench/gpuacct-spool-gen
tests_bench_gpuacct_spool_gen_SOURCES = tests/bench/gpuacct_spool_gen.cpp
tests_bench_gpuacct_spool_gen_LDADD = libacme.la

# tests/bench/slurmdbd-fill: the rows of a synthetic slurmdbd job table, records made by the
# product's own encoder; tests/bench/gpuacct-slurmdbd times gpuacct on them beside sacct.
BENCH_TARGETS += tests/bench/slurmdbd-fill-gen
EXTRA_PROGRAMS += tests/bench/slurmdbd-fill-gen
tests_bench_slurmdbd_fill_gen_SOURCES = tests/bench/slurmdbd_fill_gen.cpp
tests_bench_slurmdbd_fill_gen_LDADD = libacme.la

# --- fuzz targets: drivers in tests/fuzz, built by `make fuzz` from the libraries (tests/local.mk) ---
# gpuacct's options (sacct's time, format, state and filter syntax, the job view's thresholds)
# and the answers of the site's Prometheus.
FUZZ_TARGETS += tests/fuzz/gpuacct-args-fuzz
tests_fuzz_gpuacct_args_fuzz_SOURCES = tests/fuzz/gpuacct_args_fuzz.cpp
tests_fuzz_gpuacct_args_fuzz_LDADD = $(FUZZ_LDADD)
FUZZ_TARGETS += tests/fuzz/prometheus-answer-fuzz
tests_fuzz_prometheus_answer_fuzz_SOURCES = tests/fuzz/prometheus_answer_fuzz.cpp
tests_fuzz_prometheus_answer_fuzz_LDADD = $(FUZZ_LDADD)
