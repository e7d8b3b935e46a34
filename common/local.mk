# common/: libacme, what two or more parts share (ARCHITECTURE.md). What one part alone uses
# lives in that part's own library (its local.mk).
noinst_LTLIBRARIES += libacme.la
libacme_la_SOURCES = \
	common/store/database.cpp common/store/database.hpp common/store/columns.hpp \
	common/store/migrations.cpp common/store/migrations.hpp \
	common/store/spool.cpp common/store/spool.hpp \
	common/store/spool_jobs.cpp common/store/spool_jobs.hpp \
	common/store/spool_reuse.cpp common/store/spool_reuse.hpp \
	common/store/spool_gpu.cpp common/store/spool_gpu.hpp \
	common/store/spool_failures.cpp common/store/spool_failures.hpp \
	common/store/spool_stalls.cpp common/store/spool_stalls.hpp \
	common/store/spool_set.cpp common/store/spool_set.hpp \
	common/store/spool_goodput.cpp common/store/spool_goodput.hpp \
	common/store/labels_store.cpp common/store/labels_store.hpp \
	common/util/parse.cpp common/util/parse.hpp common/util/re2_text.hpp \
	common/util/table.cpp common/util/table.hpp \
	common/util/spawn.cpp common/util/spawn.hpp \
	common/util/fd.hpp common/util/line_read.cpp common/util/line_read.hpp \
	common/util/install_paths.hpp common/util/cli_checks.hpp common/util/html.hpp common/util/wall_clock.hpp \
	common/nvml/nvml_api.hpp \
	common/nvml/library.cpp common/nvml/library.hpp \
	common/nvml/device_selection.cpp common/nvml/device_selection.hpp \
	common/slurm/jobs.cpp common/slurm/jobs.hpp \
	common/slurm/job_type.cpp common/slurm/job_type.hpp \
	common/slurm/actions.cpp common/slurm/actions.hpp \
	common/slurm/admin_comment.cpp common/slurm/admin_comment.hpp \
	common/slurm/run_row.cpp common/slurm/run_row.hpp \
	common/slurm/cluster.cpp common/slurm/cluster.hpp \
	common/slurm/nodes.cpp common/slurm/nodes.hpp common/slurm/compat.hpp \
	common/slurm/accounting.cpp common/slurm/accounting.hpp \
	common/slurm/slurmdbd.cpp common/slurm/slurmdbd.hpp \
	common/record/codec.cpp common/record/codec.hpp common/record/keys.hpp \
	common/record/record.cpp common/record/record.hpp \
	common/record/straggler.cpp common/record/straggler.hpp \
	common/recovery/checkpoints.cpp common/recovery/checkpoints.hpp \
	common/recovery/recovery_policy.cpp common/recovery/recovery_policy.hpp \
	common/recovery/xid_actions.cpp common/recovery/xid_actions.hpp
libacme_la_LIBADD = $(SQLITE_LIBS) $(FMT_LIBS) $(SLURM_LIBS) $(ZLIB_LIBS) -ldl $(RE2_LIBS) $(TOMLPP_LIBS)
dist_man_MANS += man/acme-record.5

# --- diagnosis (issue 4) ---
# The engine lives in libacme (common/diagnose), so faultguard.so and faultdiag share it.
libacme_la_SOURCES += \
	common/diagnose/taxonomy.cpp common/diagnose/taxonomy.hpp \
	common/diagnose/job_end.cpp common/diagnose/job_end.hpp \
	common/diagnose/pattern.cpp common/diagnose/pattern.hpp \
	common/diagnose/rules.cpp common/diagnose/rules.hpp \
	common/diagnose/log_scan.cpp common/diagnose/log_scan.hpp \
	common/diagnose/signature.cpp common/diagnose/signature.hpp \
	common/diagnose/history.cpp common/diagnose/history.hpp \
	common/diagnose/fallback.cpp common/diagnose/fallback.hpp \
	common/diagnose/engine.cpp common/diagnose/engine.hpp \
	common/diagnose/diagnosis_json.cpp common/diagnose/diagnosis_json.hpp \
	common/diagnose/history_store.cpp common/diagnose/history_store.hpp

# Shipped rules; admins add their own files beside them (the learned fallback's model beside
# them is trained by tools/fallback-train: tools/local.mk).
rulesdir = $(acmeconfdir)/rules.d
dist_rules_DATA = rules/10-slurm.toml rules/11-schedulers.toml rules/12-stall.toml rules/15-xid.toml rules/20-infrastructure.toml rules/25-accelerators.toml rules/30-framework.toml rules/35-languages.toml rules/40-script.toml

# --- gpuacct --prometheus (issue 15) ---
# The GET is libevent's evhttp (common/util/http_get, in libacme: a program that uses it links
# $(LIBEVENT_LIBS)); the queries and the answers' parser are gpuacct's own (acct/local.mk).
libacme_la_SOURCES += common/util/http_get.cpp common/util/http_get.hpp

# --- LLM-assisted diagnosis (issue 22 item 3): redaction, the chat request and the answer's
# checks, the bounded POST to the site's model server; faultdiag --suggest-rule's drafts ---
libacme_la_SOURCES += \
	common/diagnose/redact.cpp common/diagnose/redact.hpp \
	common/diagnose/llm_answer.cpp common/diagnose/llm_answer.hpp \
	common/diagnose/llm_client.cpp common/diagnose/llm_client.hpp \
	common/diagnose/rule_draft.cpp common/diagnose/rule_draft.hpp \
	common/util/https_post.cpp common/util/https_post.hpp
# The model's client is libevent's evhttp for http://, libcurl (the system's CA store) for
# https://: every program on libacme (faultdiag, the helpers) links libevent; libcurl is loaded
# (dlopen) at the first https:// request, so that the programs that run after every job do not
# map its thirty libraries at each start (https_post.cpp).
libacme_la_LIBADD += $(LIBEVENT_LIBS)
EXTRA_DIST += tests/fakes/fake-llm-server.py

# --- unit tests ---
tests_unit_acme_unit_SOURCES += \
	tests/unit/store_database_test.cpp \
	tests/unit/store_migrations_test.cpp \
	tests/unit/store_spool_test.cpp tests/unit/store_spool_rows_test.cpp tests/unit/store_spool_reuse_test.cpp \
	tests/unit/record_test.cpp tests/unit/record_straggler_test.cpp \
	tests/unit/util_parse_test.cpp \
	tests/unit/util_version_test.cpp common/util/version.hpp \
	tests/unit/util_spawn_test.cpp tests/unit/util_line_read_test.cpp \
	tests/unit/util_table_test.cpp tests/unit/util_http_get_test.cpp \
	tests/unit/acct_job_type_test.cpp tests/unit/slurm_run_row_test.cpp \
	tests/unit/recovery_test.cpp \
	tests/unit/diagnose_rules_test.cpp \
	tests/unit/diagnose_engine_test.cpp \
	tests/unit/diagnose_signature_test.cpp \
	tests/unit/diagnose_accuracy_test.cpp \
	tests/unit/diagnose_fallback_test.cpp \
	tests/unit/diagnose_redact_test.cpp tests/unit/diagnose_llm_test.cpp
# Diagnosis recall (issue 22): the XID table's tests and the corpus scorer the accuracy test
# shares with tests/bench/diagnose (the corpus reader is theirs, not libacme's).
tests_unit_acme_unit_SOURCES += tests/unit/diagnose_xid_test.cpp \
	common/diagnose/corpus.cpp common/diagnose/corpus.hpp
# The learned fallback's time-split evaluation (issue 40), which tests/bench/diagnose prints.
tests_unit_acme_unit_SOURCES += tests/unit/diagnose_time_split_test.cpp \
	common/diagnose/time_split.cpp common/diagnose/time_split.hpp
# The rules held out from the cases they were written for (issue 40), which tests/bench/diagnose prints.
tests_unit_acme_unit_SOURCES += tests/unit/diagnose_held_out_test.cpp \
	common/diagnose/held_out.cpp common/diagnose/held_out.hpp
EXTRA_DIST += tests/data/diagnosis

# `make bench`: tests/bench/diagnose runs the engine against grep -E with every rule pattern, and
# scores the learned fallback time-split over the first-sight records (time_split: the bench's).
BENCH_TARGETS += tests/bench/diagnose
EXTRA_PROGRAMS += tests/bench/diagnose
tests_bench_diagnose_SOURCES = tests/bench/diagnose.cpp common/diagnose/corpus.cpp common/diagnose/corpus.hpp \
	common/diagnose/time_split.cpp common/diagnose/time_split.hpp \
	common/diagnose/held_out.cpp common/diagnose/held_out.hpp
tests_bench_diagnose_CPPFLAGS = $(AM_CPPFLAGS) -DACME_RULES_DIR=\"$(abs_top_srcdir)/rules\" \
	-DACME_CORPUS_DIR=\"$(abs_top_srcdir)/tests/data/diagnosis\" \
	-DACME_FIRST_SIGHT_DIR=\"$(abs_top_srcdir)/tests/data/first-sight\"
tests_bench_diagnose_LDADD = libacme.la

# --- fuzz targets: drivers in tests/fuzz, built by `make fuzz` from the libraries (tests/local.mk) ---
# checkpoints.toml's rules (recovery's newest complete checkpoint).
FUZZ_TARGETS += tests/fuzz/checkpoint-rules-fuzz
tests_fuzz_checkpoint_rules_fuzz_SOURCES = tests/fuzz/checkpoint_rules_fuzz.cpp
tests_fuzz_checkpoint_rules_fuzz_LDADD = $(FUZZ_LDADD)
# The acme record's codec: the AdminComment JSON slurmdbd hands back.
FUZZ_TARGETS += tests/fuzz/record-fuzz
tests_fuzz_record_fuzz_SOURCES = tests/fuzz/record_fuzz.cpp
tests_fuzz_record_fuzz_LDADD = $(FUZZ_LDADD)
# The diagnosis engine: rule files, and logs through the shipped rules.
FUZZ_TARGETS += tests/fuzz/rules-fuzz
tests_fuzz_rules_fuzz_SOURCES = tests/fuzz/rules_fuzz.cpp
tests_fuzz_rules_fuzz_LDADD = $(FUZZ_LDADD)
FUZZ_TARGETS += tests/fuzz/diagnose-fuzz
tests_fuzz_diagnose_fuzz_SOURCES = tests/fuzz/diagnose_fuzz.cpp
tests_fuzz_diagnose_fuzz_LDADD = $(FUZZ_LDADD)
FUZZ_TARGETS += tests/fuzz/fallback-model-fuzz
tests_fuzz_fallback_model_fuzz_SOURCES = tests/fuzz/fallback_model_fuzz.cpp
tests_fuzz_fallback_model_fuzz_LDADD = $(FUZZ_LDADD)
# The first-sight record reader of the diagnosis bench is a parser too (the corpus reader is
# the unit tests' and the bench's, not libacme's: compiled into the target, its object named
# apart from the gcc build's by the target's own flags).
FUZZ_TARGETS += tests/fuzz/first-sight-fuzz
tests_fuzz_first_sight_fuzz_SOURCES = tests/fuzz/first_sight_fuzz.cpp \
	common/diagnose/corpus.cpp common/diagnose/corpus.hpp
tests_fuzz_first_sight_fuzz_LDADD = $(FUZZ_LDADD)
tests_fuzz_first_sight_fuzz_CXXFLAGS = $(FUZZ_CXXFLAGS)
# The model's answer, and faultdiag --suggest-rule's drafter (it once looped forever on a hex
# run): redaction, escaping, and the draft compiled and run through the engine.
FUZZ_TARGETS += tests/fuzz/llm-answer-fuzz
tests_fuzz_llm_answer_fuzz_SOURCES = tests/fuzz/llm_answer_fuzz.cpp
tests_fuzz_llm_answer_fuzz_LDADD = $(FUZZ_LDADD)
FUZZ_TARGETS += tests/fuzz/rule-draft-fuzz
tests_fuzz_rule_draft_fuzz_SOURCES = tests/fuzz/rule_draft_fuzz.cpp
tests_fuzz_rule_draft_fuzz_LDADD = $(FUZZ_LDADD)
