# spank/: the SPANK plugins, each with its core library, and their node-side helpers.

# --- each plugin's own logic: a core library beside the plugin's programs ----------------------
# common/ holds only what two or more parts share (store, slurm, nvml, diagnose, util); what one
# part alone uses lives in that part's core/ and is linked by its programs and the unit tests.
noinst_LTLIBRARIES += libgputrace_core.la libfaultguard_core.la
libgputrace_core_la_SOURCES = \
	spank/gputrace/core/gputrace_config.cpp spank/gputrace/core/gputrace_config.hpp \
	spank/gputrace/core/job_watch.cpp spank/gputrace/core/job_watch.hpp \
	spank/gputrace/core/job_activity.cpp spank/gputrace/core/job_activity.hpp \
	spank/gputrace/core/nic_traffic.cpp spank/gputrace/core/nic_traffic.hpp \
	spank/gputrace/core/sampler.cpp spank/gputrace/core/sampler.hpp \
	spank/gputrace/core/sampler_control.cpp spank/gputrace/core/sampler_control.hpp \
	spank/gputrace/core/sampler_paths.hpp \
	spank/gputrace/core/progress_probe.cpp spank/gputrace/core/progress_probe.hpp \
	spank/gputrace/core/heartbeat_dir.cpp spank/gputrace/core/heartbeat_dir.hpp \
	spank/gputrace/core/heartbeat_dir_c.c spank/gputrace/core/heartbeat_dir_c.h \
	spank/gputrace/core/sampler_wait_c.c spank/gputrace/core/sampler_wait_c.h \
	spank/gputrace/core/sampler_spawn_c.c spank/gputrace/core/sampler_spawn_c.h \
	spank/gputrace/core/sampler_start.cpp spank/gputrace/core/sampler_start.hpp \
	spank/gputrace/core/stall.cpp spank/gputrace/core/stall.hpp \
	spank/gputrace/core/cadence.cpp spank/gputrace/core/cadence.hpp \
	spank/gputrace/core/idle.cpp spank/gputrace/core/idle.hpp \
	spank/gputrace/core/job_process.cpp spank/gputrace/core/job_process.hpp \
	spank/gputrace/core/stall_share.cpp spank/gputrace/core/stall_share.hpp \
	spank/gputrace/core/live_slowness.cpp spank/gputrace/core/live_slowness.hpp \
	spank/gputrace/core/spool_writer.cpp spank/gputrace/core/spool_writer.hpp \
	spank/gputrace/core/textfile.cpp spank/gputrace/core/textfile.hpp \
	spank/gputrace/core/textfile_writer.cpp spank/gputrace/core/textfile_writer.hpp
libfaultguard_core_la_SOURCES = \
	spank/faultguard/core/faultguard_config.cpp spank/faultguard/core/faultguard_config.hpp \
	spank/faultguard/core/epilog_args.cpp spank/faultguard/core/epilog_args.hpp \
	spank/faultguard_options.hpp spank/faultguard/core/faultguard_paths.hpp \
	spank/faultguard/core/log_tail.cpp spank/faultguard/core/log_tail.hpp \
	spank/faultguard/core/output_path.cpp spank/faultguard/core/output_path.hpp \
	spank/faultguard/core/spool_records.cpp spank/faultguard/core/spool_records.hpp \
	spank/faultguard/core/task_exit_log.cpp spank/faultguard/core/task_exit_log.hpp \
	spank/faultguard/core/recovery_options.cpp spank/faultguard/core/recovery_options.hpp \
	spank/faultguard/core/recovery_release.cpp spank/faultguard/core/recovery_release.hpp \
	spank/faultguard/core/record_part.cpp spank/faultguard/core/record_part.hpp \
	spank/faultguard/core/publish_pacing.cpp spank/faultguard/core/publish_pacing.hpp \
	spank/faultguard/core/record_retry.cpp spank/faultguard/core/record_retry.hpp \
	spank/faultguard/core/prepared_exec.cpp spank/faultguard/core/prepared_exec.hpp \
	spank/faultguard/core/promised_gpus.cpp spank/faultguard/core/promised_gpus.hpp \
	spank/faultguard/core/outbox_files.cpp spank/faultguard/core/outbox_files.hpp \
	spank/faultguard/core/gate_request.cpp spank/faultguard/core/gate_request.hpp \
	spank/faultguard/core/gate_ask_c.c spank/faultguard/core/gate_ask_c.h \
	spank/faultguard/core/gate_client.cpp spank/faultguard/core/gate_client.hpp \
	spank/faultguard/core/health_check.cpp spank/faultguard/core/health_check.hpp \
	spank/faultguard/core/resident_gate.cpp spank/faultguard/core/resident_gate.hpp \
	spank/faultguard/core/hard_stop.cpp spank/faultguard/core/hard_stop.hpp

# --- the plugins -------------------------------------------------------------------------------
# What plugstack.conf names, gputrace.so and faultguard.so, are C shims that link libc alone
# (spank/shim.h): Slurm loads them into srun, sbatch, salloc and every slurmstepd, and a C++
# plugin's libstdc++ and libfmt cost each of those processes milliseconds (#41). Each loads its
# C++ implementation, gputrace_impl.so or faultguard_impl.so from its own directory, only in the
# processes of a job that needs it. Nothing else is exported (spank.lds, impl.lds).
SHIM_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
spankplugin_LTLIBRARIES = spank/gputrace.la spank/faultguard.la spank/gputrace_impl.la spank/faultguard_impl.la
SHIM_SOURCES = spank/shim.c spank/shim.h spank/shim_text.c spank/shim_text.h spank/impl_abi.h
spank_gputrace_la_SOURCES = spank/gputrace/shim.c $(SHIM_SOURCES) \
	spank/gputrace/core/heartbeat_dir_c.c spank/gputrace/core/heartbeat_dir_c.h \
	spank/gputrace/core/sampler_spawn_c.c spank/gputrace/core/sampler_spawn_c.h \
	spank/gputrace/core/sampler_wait_c.c spank/gputrace/core/sampler_wait_c.h
spank_gputrace_la_CFLAGS = $(SHIM_CFLAGS)
spank_gputrace_la_LDFLAGS = $(SPANK_LDFLAGS)
EXTRA_spank_gputrace_la_DEPENDENCIES = $(srcdir)/spank/spank.lds
spank_faultguard_la_SOURCES = spank/faultguard/shim.c $(SHIM_SOURCES) \
	spank/faultguard/core/gate_ask_c.c spank/faultguard/core/gate_ask_c.h
spank_faultguard_la_CFLAGS = $(SHIM_CFLAGS)
spank_faultguard_la_LDFLAGS = $(SPANK_LDFLAGS)
EXTRA_spank_faultguard_la_DEPENDENCIES = $(srcdir)/spank/spank.lds

# The implementations compile the few common/ files they need into themselves (hidden
# visibility) instead of linking all of libacme: nothing of SQLite, NVML or libslurm's client
# side enters slurmstepd, slurmd, sbatch or srun.
SPANK_LDFLAGS = -module -avoid-version -shared -Wl,--version-script=$(srcdir)/spank/spank.lds
IMPL_LDFLAGS = -module -avoid-version -shared -Wl,--version-script=$(srcdir)/spank/impl.lds
SPANK_CXXFLAGS = $(AM_CXXFLAGS) -fvisibility=hidden -fvisibility-inlines-hidden
EXTRA_DIST += spank/spank.lds spank/impl.lds
spank_gputrace_impl_la_SOURCES = spank/gputrace/plugin.cpp spank/gputrace/plugin.hpp \
	spank/gputrace/args.cpp spank/gputrace/job_script.cpp \
	spank/spank_abi.hpp spank/option_env.hpp spank/faultguard_options.hpp spank/impl_abi.h \
	common/util/parse.cpp \
	spank/gputrace/core/gputrace_config.cpp spank/gputrace/core/stall.cpp spank/gputrace/core/cadence.cpp \
	spank/gputrace/core/idle.cpp spank/gputrace/core/sampler_control.cpp \
	spank/gputrace/core/textfile_writer.cpp spank/gputrace/core/textfile.cpp spank/gputrace/core/heartbeat_dir.cpp \
	spank/gputrace/core/heartbeat_dir_c.c spank/gputrace/core/heartbeat_dir_c.h \
	spank/gputrace/core/sampler_wait_c.c spank/gputrace/core/sampler_wait_c.h
spank_gputrace_impl_la_CFLAGS = $(SHIM_CFLAGS)
spank_gputrace_impl_la_CXXFLAGS = $(SPANK_CXXFLAGS)
spank_gputrace_impl_la_LDFLAGS = $(IMPL_LDFLAGS)
spank_gputrace_impl_la_LIBADD = $(FMT_LIBS)
EXTRA_spank_gputrace_impl_la_DEPENDENCIES = $(srcdir)/spank/impl.lds
# Slurm loads the .so; libtool's .la files have no business in its plugin directory.
install-data-hook:
	rm -f $(DESTDIR)$(spankplugindir)/gputrace.la $(DESTDIR)$(spankplugindir)/faultguard.la \
		$(DESTDIR)$(spankplugindir)/gputrace_impl.la $(DESTDIR)$(spankplugindir)/faultguard_impl.la

spank_faultguard_impl_la_SOURCES = spank/faultguard/plugin.cpp spank/faultguard/plugin.hpp \
	spank/faultguard/args.cpp spank/faultguard/slurmstepd.cpp spank/faultguard/job_script.cpp \
	spank/spank_abi.hpp spank/option_env.hpp spank/impl_abi.h \
	common/util/parse.cpp common/util/spawn.cpp \
	spank/faultguard/core/faultguard_config.cpp spank/faultguard/core/task_exit_log.cpp common/slurm/job_type.cpp \
	spank/faultguard/core/recovery_options.cpp spank/faultguard/core/epilog_args.cpp \
	spank/faultguard/core/gate_request.cpp spank/faultguard/core/gate_client.cpp common/util/line_read.cpp
spank_faultguard_impl_la_CXXFLAGS = $(SPANK_CXXFLAGS)
spank_faultguard_impl_la_LDFLAGS = $(IMPL_LDFLAGS)
spank_faultguard_impl_la_LIBADD = $(FMT_LIBS)
EXTRA_spank_faultguard_impl_la_DEPENDENCIES = $(srcdir)/spank/impl.lds
dist_man_MANS += man/gputrace.8 man/faultguard.8

# --- the helpers -------------------------------------------------------------------------------
# faultguard's epilog work, in its own process, bounded by the plugin.
pkglibexec_PROGRAMS += acme-faultguard-epilog
acme_faultguard_epilog_SOURCES = spank/faultguard/epilog_main.cpp \
	spank/faultguard/record_publish.cpp spank/faultguard/record_publish.hpp \
	spank/faultguard/record_outbox.cpp spank/faultguard/record_outbox.hpp \
	spank/faultguard/record_retrier.cpp spank/faultguard/record_retrier.hpp
acme_faultguard_epilog_LDADD = libfaultguard_core.la libacme.la $(SLURM_LIBS) $(RE2_LIBS)
pkglibexec_PROGRAMS += acme-ckpt-find
acme_ckpt_find_SOURCES = spank/faultguard/ckpt_find_main.cpp
acme_ckpt_find_LDADD = libfaultguard_core.la libacme.la $(TOMLPP_LIBS)
pkglibexec_PROGRAMS += acme-health-gate
acme_health_gate_SOURCES = spank/faultguard/health_gate_main.cpp
acme_health_gate_LDADD = libfaultguard_core.la libgputrace_core.la libacme.la $(SLURM_LIBS) $(RE2_LIBS)
ckptrulesdir = $(acmeconfdir)
dist_ckptrules_DATA = etc/checkpoints.toml

# The sampler: its own process, one per job per node (never a thread in slurmstepd).
pkglibexec_PROGRAMS += acme-gpu-sampler
acme_gpu_sampler_SOURCES = spank/gputrace/sampler_main.cpp spank/gputrace/stall_watch.cpp spank/gputrace/stall_watch.hpp \
	spank/gputrace/idle_watch.cpp spank/gputrace/idle_watch.hpp spank/gputrace/job_mail.cpp spank/gputrace/job_mail.hpp
acme_gpu_sampler_LDADD = libgputrace_core.la libfaultguard_core.la libacme.la $(SLURM_LIBS) -lpthread
# What the job prolog's detached child executes before the sampler (sampler_spawn_c.h): the
# plugstack arguments read and the sampler's command line built outside slurmstepd, after the
# job's start. Found beside the sampler (plugstack sampler=).
pkglibexec_PROGRAMS += acme-gpu-sampler-start
acme_gpu_sampler_start_SOURCES = spank/gputrace/sampler_start_main.cpp
acme_gpu_sampler_start_LDADD = libgputrace_core.la libacme.la
# The Grafana dashboard for the sampler's Prometheus series (gputrace(8), GRAFANA).
grafanadir = $(datadir)/acme-slurm/grafana
dist_grafana_DATA = etc/grafana/acme-slurm-job-gpus.json etc/grafana/acme-slurm-cluster-gpus.json
# Recording and alerting rules for the same series: cluster goodput (held GPUs in use) and idle GPUs.
prometheusrulesdir = $(datadir)/acme-slurm/prometheus
dist_prometheusrules_DATA = etc/prometheus/acme-slurm-rules.yml
EXTRA_DIST += tests/prometheus

# --- unit tests and benchmarks -----------------------------------------------------------------
tests_unit_acme_unit_SOURCES += \
	tests/unit/faultguard_test.cpp tests/unit/faultguard_pacing_test.cpp tests/unit/faultguard_outbox_test.cpp tests/unit/faultguard_hard_stop_test.cpp \
	tests/unit/faultguard_retry_test.cpp \
	tests/unit/faultguard_epilog_args_test.cpp tests/unit/faultguard_gate_test.cpp \
	tests/unit/spank_option_env_test.cpp tests/unit/spank_shim_test.cpp spank/shim_text.c \
	tests/unit/telemetry_config_test.cpp \
	tests/unit/telemetry_sampler_test.cpp \
	tests/unit/telemetry_textfile_test.cpp tests/unit/telemetry_textfile_kill_test.cpp \
	tests/unit/telemetry_job_watch_test.cpp tests/unit/telemetry_sampler_wait_test.cpp tests/unit/telemetry_stall_test.cpp \
	tests/unit/telemetry_sampler_start_test.cpp \
	tests/unit/telemetry_cadence_test.cpp tests/unit/stall_sim.hpp \
	tests/unit/telemetry_idle_test.cpp \
	tests/unit/telemetry_job_activity_test.cpp tests/unit/telemetry_nic_traffic_test.cpp \
	tests/unit/telemetry_live_slowness_test.cpp \
	tests/unit/telemetry_heartbeat_dir_test.cpp

EXTRA_PROGRAMS += tests/bench/telemetry-spool-bench
BENCH_TARGETS += tests/bench/telemetry-spool-bench acme-gpu-sampler acme-gpu-sampler-start tests/fakes/libnvidia-ml.so.1
tests_bench_telemetry_spool_bench_SOURCES = tests/bench/telemetry_spool_bench.cpp
tests_bench_telemetry_spool_bench_LDADD = libgputrace_core.la libacme.la
EXTRA_PROGRAMS += tests/bench/stall-cadence-bench
BENCH_TARGETS += tests/bench/stall-cadence-bench
tests_bench_stall_cadence_bench_SOURCES = tests/bench/stall_cadence_bench.cpp tests/unit/stall_sim.hpp
tests_bench_stall_cadence_bench_LDADD = libgputrace_core.la libacme.la
EXTRA_PROGRAMS += tests/bench/textfile-churn
BENCH_TARGETS += tests/bench/textfile-churn
tests_bench_textfile_churn_SOURCES = tests/bench/textfile_churn.cpp
tests_bench_textfile_churn_LDADD = libgputrace_core.la libacme.la

# --- fuzz targets: drivers in tests/fuzz, built by `make fuzz` from the libraries (tests/local.mk) ---
# The plugstack arguments and options of both plugins.
FUZZ_TARGETS += tests/fuzz/gputrace-args-fuzz
tests_fuzz_gputrace_args_fuzz_SOURCES = tests/fuzz/gputrace_args_fuzz.cpp
tests_fuzz_gputrace_args_fuzz_LDADD = $(FUZZ_LDADD)
FUZZ_TARGETS += tests/fuzz/faultguard-inputs-fuzz
tests_fuzz_faultguard_inputs_fuzz_SOURCES = tests/fuzz/faultguard_inputs_fuzz.cpp
tests_fuzz_faultguard_inputs_fuzz_LDADD = $(FUZZ_LDADD)
# The resident health gate's request and answer lines.
FUZZ_TARGETS += tests/fuzz/gate-request-fuzz
tests_fuzz_gate_request_fuzz_SOURCES = tests/fuzz/gate_request_fuzz.cpp
tests_fuzz_gate_request_fuzz_LDADD = $(FUZZ_LDADD)
