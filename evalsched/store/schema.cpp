// evalschedd's schema: the numbered migrations of its SQLite file, the only place its tables
// are created or altered (DESIGN.md "Stores"). Append a migration, never edit a shipped one.
#include "evalsched/store/schema.hpp"

#include <array>

namespace acme::store {
namespace {

// Times are Unix epoch seconds as REAL. size_class is evalsched's bucket ("7b", "13b", ...):
// priors transfer across checkpoints of one model and across nearby sizes, not across GPUs.
constexpr std::string_view kEvalschedV1 = R"sql(
CREATE TABLE prior_runs (
    id            INTEGER PRIMARY KEY,
    dataset       TEXT NOT NULL,
    size_class    TEXT NOT NULL,
    gpus          INTEGER NOT NULL CHECK (gpus > 0),
    seconds       REAL NOT NULL CHECK (seconds > 0),  -- inference of this piece, load excluded
    fraction      REAL NOT NULL DEFAULT 1 CHECK (fraction > 0 AND fraction <= 1),
    checkpoint    TEXT NOT NULL DEFAULT '',
    node          TEXT NOT NULL DEFAULT '',
    finished_at   REAL NOT NULL
);
CREATE INDEX prior_runs_by_key ON prior_runs (dataset, size_class, gpus, finished_at);
CREATE TABLE model_loads (
    id            INTEGER PRIMARY KEY,
    node          TEXT NOT NULL,
    bytes         REAL NOT NULL CHECK (bytes > 0),
    seconds       REAL NOT NULL CHECK (seconds > 0),
    checkpoint    TEXT NOT NULL DEFAULT '',
    finished_at   REAL NOT NULL
);
CREATE INDEX model_loads_by_node ON model_loads (node, finished_at);
)sql";

// v2: the daemon's state. Every row changes only inside a transaction, so after kill -9 the
// file holds a consistent picture: an attempt is 'submitting' from just before
// slurm_submit_batch_job until its job id is recorded, and the restart reconciles exactly those
// by their tag (the Slurm job name) instead of submitting them again.
constexpr std::string_view kEvalschedV2 = R"sql(
CREATE TABLE evaluations (
    id               INTEGER PRIMARY KEY,
    name             TEXT NOT NULL,              -- the training run, e.g. "run7"
    checkpoint       TEXT NOT NULL,              -- e.g. "step-12000"
    path             TEXT NOT NULL,              -- on shared storage
    suite_name       TEXT NOT NULL,
    suite_file       TEXT NOT NULL,
    uid              INTEGER NOT NULL,
    gid              INTEGER NOT NULL,
    user             TEXT NOT NULL,
    priority         INTEGER NOT NULL DEFAULT 0,
    params_b         REAL NOT NULL,
    checkpoint_bytes REAL NOT NULL,
    output_dir       TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('active', 'done', 'failed', 'cancelled')),
    submitted_at     REAL NOT NULL,
    finished_at      REAL
);
CREATE INDEX evaluations_by_name ON evaluations (name, submitted_at);
CREATE TABLE trials (
    id              INTEGER PRIMARY KEY,
    evaluation      INTEGER NOT NULL REFERENCES evaluations (id),
    trial_key       TEXT NOT NULL,               -- evalsched core's Trial::id
    datasets        TEXT NOT NULL,               -- comma-separated parts
    shard           INTEGER NOT NULL DEFAULT 0,
    num_shards      INTEGER NOT NULL DEFAULT 1,
    gpus            INTEGER NOT NULL CHECK (gpus > 0),
    median_s        REAL NOT NULL,
    p90_s           REAL NOT NULL,
    startup_s       REAL NOT NULL,
    metric_s        REAL NOT NULL DEFAULT 0,
    conservative    INTEGER NOT NULL DEFAULT 0,
    command         TEXT NOT NULL,
    metric_command  TEXT NOT NULL DEFAULT '',    -- moved to metric_jobs by v4
    state           TEXT NOT NULL CHECK (state IN ('pending', 'submitting', 'queued', 'running', 'done', 'failed', 'cancelled')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    excluded_nodes  TEXT NOT NULL DEFAULT '',
    reason          TEXT NOT NULL DEFAULT '',
    UNIQUE (evaluation, trial_key)
);
CREATE INDEX trials_by_state ON trials (state, evaluation);
CREATE TABLE attempts (
    id           INTEGER PRIMARY KEY,
    trial        INTEGER NOT NULL REFERENCES trials (id),
    number       INTEGER NOT NULL,
    tag          TEXT NOT NULL UNIQUE,           -- the Slurm job name; reconciliation key
    job_id       INTEGER,
    metric_job   INTEGER,                        -- moved to metric_jobs by v4
    node         TEXT NOT NULL DEFAULT '',
    time_limit_s REAL NOT NULL DEFAULT 0,
    state        TEXT NOT NULL CHECK (state IN ('submitting', 'queued', 'running', 'done', 'failed', 'cancelled', 'lost')),
    submitted_at REAL,
    ended_at     REAL,
    exit_code    INTEGER,
    category     TEXT NOT NULL DEFAULT '',       -- diagnosis: infrastructure, framework, script, unknown
    reason       TEXT NOT NULL DEFAULT '',
    UNIQUE (trial, number)
);
CREATE TABLE results (
    evaluation  INTEGER NOT NULL REFERENCES evaluations (id),
    dataset     TEXT NOT NULL,
    metric      TEXT NOT NULL,
    value       REAL NOT NULL,
    PRIMARY KEY (evaluation, dataset, metric)
);
CREATE TABLE stagings (
    id          INTEGER PRIMARY KEY,
    evaluation  INTEGER NOT NULL REFERENCES evaluations (id),
    node        TEXT NOT NULL,
    copied      INTEGER NOT NULL,                -- 1: this trial copied from shared storage
    bytes       REAL NOT NULL DEFAULT 0,         -- read from shared storage (0 when reused)
    seconds     REAL NOT NULL DEFAULT 0,
    at          REAL NOT NULL
);
CREATE INDEX stagings_by_evaluation ON stagings (evaluation, node);
-- Slurm job names carry it, so two evalschedd databases (a reinstall, a test) never adopt
-- each other's jobs by tag.
CREATE TABLE instance (id TEXT NOT NULL);
INSERT INTO instance (id) VALUES (lower(hex(randomblob(4))));
)sql";

// v3: indexes for the API's reads (issue 7's latency target). The summaries of GET
// /v1/evaluations group trials by evaluation and state; a user's list filters on uid.
constexpr std::string_view kEvalschedV3 = R"sql(
CREATE INDEX trials_by_evaluation ON trials (evaluation, state);
CREATE INDEX evaluations_by_uid ON evaluations (uid, id);
)sql";

// v4: CPU metric jobs per dataset, not per trial. A sharded or bundled dataset is scored once,
// by one job that runs after every trial holding a piece of it (metric_trials), so the metric
// job needs its own record: its own state, tag and job id. v2 kept a single-trial dataset's
// metric command on the trial and its job on the attempt; those become rows here (in-flight
// ones keep their job, found again by its v2 tag), and the v2 columns are no longer read.
constexpr std::string_view kEvalschedV4 = R"sql(
CREATE TABLE metric_jobs (
    id            INTEGER PRIMARY KEY,
    evaluation    INTEGER NOT NULL REFERENCES evaluations (id),
    dataset       TEXT NOT NULL,
    command       TEXT NOT NULL,                 -- rendered; {output} is the dataset's directory
    estimate_s    REAL NOT NULL DEFAULT 0,
    state         TEXT NOT NULL CHECK (state IN ('waiting', 'submitting', 'queued', 'running', 'done', 'failed', 'cancelled')),
    submissions   INTEGER NOT NULL DEFAULT 0,    -- numbers the tags
    failures      INTEGER NOT NULL DEFAULT 0,    -- counted against max_attempts
    tag           TEXT UNIQUE,                   -- the newest submission's Slurm job name
    job_id        INTEGER,
    after_jobs    TEXT NOT NULL DEFAULT '',      -- the trial jobs it was chained to (afterany)
    node          TEXT NOT NULL DEFAULT '',
    category      TEXT NOT NULL DEFAULT '',
    reason        TEXT NOT NULL DEFAULT '',
    submitted_at  REAL,
    ended_at      REAL,                          -- also: a cancelled job has been killed
    UNIQUE (evaluation, dataset)
);
CREATE INDEX metric_jobs_by_state ON metric_jobs (state, evaluation);
CREATE TABLE metric_trials (
    metric  INTEGER NOT NULL REFERENCES metric_jobs (id),
    trial   INTEGER NOT NULL REFERENCES trials (id),
    PRIMARY KEY (metric, trial)
);
CREATE INDEX metric_trials_by_trial ON metric_trials (trial);
INSERT INTO metric_jobs (evaluation, dataset, command, estimate_s, state, submissions, tag, job_id)
    SELECT t.evaluation, t.datasets, t.metric_command, t.metric_s,
           CASE WHEN t.state IN ('done', 'failed', 'cancelled') THEN t.state
                WHEN a.metric_job IS NOT NULL THEN 'queued' ELSE 'waiting' END,
           CASE WHEN a.metric_job IS NOT NULL THEN 1 ELSE 0 END,
           CASE WHEN a.metric_job IS NOT NULL THEN a.tag || '-metric' END,
           a.metric_job
    FROM trials t
    LEFT JOIN attempts a ON a.trial = t.id AND a.number = t.attempts AND a.state IN ('submitting', 'queued', 'running')
    WHERE t.metric_command != '';
INSERT INTO metric_trials (metric, trial)
    SELECT m.id, t.id FROM metric_jobs m JOIN trials t ON t.evaluation = m.evaluation AND t.datasets = m.dataset;
UPDATE trials SET metric_command = '' WHERE metric_command != '';
)sql";

// v5: what a busy daemon's API needs to answer reads without rebuilding them. The scheduler
// commits every round; a version per evaluation, bumped by triggers on every table a status or
// report shows, lets the API keep each evaluation's answer until that evaluation changes
// instead of dropping every answer at each commit. Triggers, not code: no writer can forget.
// Also the per-evaluation sums of stagings read from an index instead of every staging row.
constexpr std::string_view kEvalschedV5 = R"sql(
ALTER TABLE evaluations ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER evaluations_version AFTER UPDATE OF name, checkpoint, path, state, priority, output_dir, finished_at ON evaluations
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.id; END;
CREATE TRIGGER trials_insert_version AFTER INSERT ON trials
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.evaluation; END;
CREATE TRIGGER trials_update_version AFTER UPDATE ON trials
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.evaluation; END;
CREATE TRIGGER attempts_insert_version AFTER INSERT ON attempts
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = (SELECT evaluation FROM trials WHERE id = NEW.trial); END;
CREATE TRIGGER attempts_update_version AFTER UPDATE ON attempts
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = (SELECT evaluation FROM trials WHERE id = NEW.trial); END;
CREATE TRIGGER attempts_delete_version AFTER DELETE ON attempts
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = (SELECT evaluation FROM trials WHERE id = OLD.trial); END;
CREATE TRIGGER metric_jobs_insert_version AFTER INSERT ON metric_jobs
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.evaluation; END;
CREATE TRIGGER metric_jobs_update_version AFTER UPDATE ON metric_jobs
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.evaluation; END;
CREATE TRIGGER stagings_insert_version AFTER INSERT ON stagings
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.evaluation; END;
CREATE TRIGGER results_insert_version AFTER INSERT ON results
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.evaluation; END;
CREATE TRIGGER results_delete_version AFTER DELETE ON results
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = OLD.evaluation; END;
CREATE INDEX stagings_bytes_by_evaluation ON stagings (evaluation, copied, bytes);
CREATE INDEX evaluations_versions ON evaluations (uid, id, version);
CREATE INDEX evaluations_versions_by_name ON evaluations (name, id, version);
)sql";

// v6: /metrics counters that only go up (issue 16). Running totals kept by triggers, so a
// scrape reads three rows instead of every evaluation, and no writer can forget them; a
// trial keeps the run time it reported (run_s), the prediction error's other half.
constexpr std::string_view kEvalschedV6 = R"sql(
ALTER TABLE trials ADD COLUMN run_s REAL;
CREATE TABLE totals (name TEXT PRIMARY KEY, sum REAL NOT NULL DEFAULT 0, count INTEGER NOT NULL DEFAULT 0);
INSERT INTO totals (name, sum, count) SELECT 'makespan', COALESCE(SUM(finished_at - submitted_at), 0), COUNT(*)
    FROM evaluations WHERE state = 'done' AND finished_at IS NOT NULL;
INSERT INTO totals (name, sum, count) SELECT 'shared_bytes', COALESCE(SUM(bytes), 0), COUNT(*) FROM stagings WHERE bytes > 0;
INSERT INTO totals (name, sum, count) VALUES ('prior_error', 0, 0);
CREATE TRIGGER totals_makespan AFTER UPDATE OF state ON evaluations
    WHEN NEW.state = 'done' AND OLD.state <> 'done' AND NEW.finished_at IS NOT NULL
BEGIN UPDATE totals SET sum = sum + (NEW.finished_at - NEW.submitted_at), count = count + 1 WHERE name = 'makespan'; END;
CREATE TRIGGER totals_shared_bytes AFTER INSERT ON stagings WHEN NEW.bytes > 0
BEGIN UPDATE totals SET sum = sum + NEW.bytes, count = count + 1 WHERE name = 'shared_bytes'; END;
CREATE TRIGGER totals_prior_error AFTER UPDATE OF run_s ON trials
    WHEN OLD.run_s IS NULL AND NEW.run_s > 0 AND NEW.num_shards = 1 AND NEW.median_s > 0
BEGIN UPDATE totals SET sum = sum + abs(NEW.run_s - NEW.median_s) / NEW.median_s, count = count + 1 WHERE name = 'prior_error'; END;
CREATE INDEX trials_reported ON trials (state, num_shards, run_s);
)sql";

// v7: the environment the user submitted from (issue 21), a JSON array of "NAME=value", given
// to the evaluation's jobs as sbatch --export=ALL would. Here, not in a file, because this store
// is root-only and an environment may hold tokens.
constexpr std::string_view kEvalschedV7 = R"sql(
ALTER TABLE evaluations ADD COLUMN environment TEXT NOT NULL DEFAULT '';
)sql";

// v8: each dataset's sample count as the suite gives it (issue 19), so progress can say how
// many samples of an evaluation have been evaluated, not only how many datasets. A dataset
// whose suite gives no count has no row.
constexpr std::string_view kEvalschedV8 = R"sql(
CREATE TABLE dataset_samples (
    evaluation INTEGER NOT NULL REFERENCES evaluations (id),
    dataset    TEXT NOT NULL,
    samples    INTEGER NOT NULL CHECK (samples > 0),
    PRIMARY KEY (evaluation, dataset)
);
)sql";

// v9: evalsched follow (issue 21), and staging only what the harness reads. A follow watches
// a training run's checkpoint directory as its user; follow_checkpoints remembers each complete
// checkpoint it decided on (submitted, with its evaluation, or skipped, with why), so a
// restarted daemon never evaluates one twice.
constexpr std::string_view kEvalschedV9 = R"sql(
CREATE TABLE follows (
    id            INTEGER PRIMARY KEY,
    dir           TEXT NOT NULL,
    name          TEXT NOT NULL,              -- the training run: its evaluations' name
    suite         TEXT NOT NULL,              -- the suite's text, as submitted
    suite_file    TEXT NOT NULL,
    uid           INTEGER NOT NULL,
    gid           INTEGER NOT NULL,
    user          TEXT NOT NULL,
    priority      INTEGER NOT NULL DEFAULT 0,
    params_b      REAL NOT NULL DEFAULT 0,   -- 0: from each checkpoint's weight files
    every         INTEGER NOT NULL DEFAULT 0,
    keep_up       INTEGER NOT NULL DEFAULT 0,
    environment   TEXT NOT NULL DEFAULT '',
    state         TEXT NOT NULL CHECK (state IN ('active', 'cancelled')),
    problem       TEXT NOT NULL DEFAULT '',  -- the last scan's trouble, '' when it went fine
    created_at    REAL NOT NULL,
    scanned_at    REAL,
    cancelled_at  REAL
);
CREATE INDEX follows_by_state ON follows (state, id);
CREATE TABLE follow_checkpoints (
    follow        INTEGER NOT NULL REFERENCES follows(id),
    step          INTEGER NOT NULL,
    path          TEXT NOT NULL,
    evaluation    INTEGER,                   -- NULL: skipped
    reason        TEXT NOT NULL DEFAULT '',
    decided_at    REAL NOT NULL,
    PRIMARY KEY (follow, path)
);
CREATE INDEX follow_checkpoints_by_step ON follow_checkpoints (follow, step);
-- The suite's stage globs, one per line, that trials copy of the checkpoint; '' (evaluations
-- from before v9): the whole checkpoint, as then.
ALTER TABLE evaluations ADD COLUMN stage TEXT NOT NULL DEFAULT '';
)sql";

// v10: pilot allocations (issue 18, evalsched.conf mode = pilots). A pilot is one batch job on
// one node that holds GPUs for one evaluation at one trial GPU count; the trials run inside it
// as job steps, each an attempt row with the pilot and its step id. A trial whose pilot ends
// mid-step goes back to pending (its attempt 'lost', not counted against max_attempts).
constexpr std::string_view kEvalschedV10 = R"sql(
CREATE TABLE pilots (
    id            INTEGER PRIMARY KEY,
    evaluation    INTEGER NOT NULL REFERENCES evaluations (id),
    gpus          INTEGER NOT NULL CHECK (gpus > 0),
    node          TEXT NOT NULL,
    tag           TEXT NOT NULL UNIQUE,          -- the Slurm job name; reconciliation key
    job_id        INTEGER,
    state         TEXT NOT NULL CHECK (state IN ('submitting', 'queued', 'running', 'releasing', 'ended')),
    time_min_s    REAL NOT NULL,                 -- --time-min asked
    time_limit_s  REAL NOT NULL,                 -- --time asked
    granted_s     REAL,                          -- the limit slurmctld granted (backfill may shrink it)
    submitted_at  REAL NOT NULL,
    started_at    REAL,
    ended_at      REAL,
    steps         INTEGER NOT NULL DEFAULT 0,    -- trials it ran
    reason        TEXT NOT NULL DEFAULT ''       -- how it ended
);
CREATE INDEX pilots_by_state ON pilots (state, evaluation);
ALTER TABLE attempts ADD COLUMN pilot INTEGER REFERENCES pilots (id);
ALTER TABLE attempts ADD COLUMN step_id INTEGER;
CREATE INDEX attempts_by_pilot ON attempts (pilot, state);
CREATE TRIGGER pilots_insert_version AFTER INSERT ON pilots
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.evaluation; END;
CREATE TRIGGER pilots_update_version AFTER UPDATE ON pilots
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.evaluation; END;
)sql";

// v11: precursor staging (issue 18). One CPU-only stage job per (evaluation, node) copies the
// checkpoint into the node-local cache before GPU trials land there; trials depend on it
// (afterok). number 2 is its one retry; after that the node's trials stage themselves.
constexpr std::string_view kEvalschedV11 = R"sql(
CREATE TABLE stage_jobs (
    id            INTEGER PRIMARY KEY,
    evaluation    INTEGER NOT NULL REFERENCES evaluations (id),
    node          TEXT NOT NULL,
    number        INTEGER NOT NULL CHECK (number >= 1),
    state         TEXT NOT NULL CHECK (state IN ('submitting', 'queued', 'running', 'done', 'failed', 'cancelled')),
    tag           TEXT NOT NULL UNIQUE,
    job_id        INTEGER,
    reason        TEXT NOT NULL DEFAULT '',
    submitted_at  REAL NOT NULL,
    ended_at      REAL,
    UNIQUE (evaluation, node, number)
);
CREATE INDEX stage_jobs_by_state ON stage_jobs (state, evaluation);
CREATE TRIGGER stage_jobs_insert_version AFTER INSERT ON stage_jobs
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.evaluation; END;
CREATE TRIGGER stage_jobs_update_version AFTER UPDATE ON stage_jobs
BEGIN UPDATE evaluations SET version = version + 1 WHERE id = NEW.evaluation; END;
)sql";

// v12: what a trial costs beyond its inference (issue 18): harness init and the model load,
// learned per size class and GPU count. The planner bundles datasets shorter than a few
// startups; the cost model's 25 s guess bundled a suite whose trials start in 5 s.
constexpr std::string_view kEvalschedV12 = R"sql(
CREATE TABLE prior_startups (
    id            INTEGER PRIMARY KEY,
    size_class    TEXT NOT NULL,
    gpus          INTEGER NOT NULL CHECK (gpus > 0),
    seconds       REAL NOT NULL CHECK (seconds > 0),
    checkpoint    TEXT NOT NULL DEFAULT '',
    node          TEXT NOT NULL DEFAULT '',
    finished_at   REAL NOT NULL
);
CREATE INDEX prior_startups_by_key ON prior_startups (size_class, gpus, finished_at);
)sql";

// v13: pilots that serve and tail re-sharding need the suite at run time, not only when the trials
// were cut. suite_text: the suite as submitted ('' before: never re-sharded, never served);
// served: 1 when the trials' commands are the suite's client_command (mode = pilots and the
// suite names a serve_command), so a pilot of the evaluation starts its server first.
constexpr std::string_view kEvalschedV13 = R"sql(
ALTER TABLE evaluations ADD COLUMN suite_text TEXT NOT NULL DEFAULT '';
ALTER TABLE evaluations ADD COLUMN served INTEGER NOT NULL DEFAULT 0;
)sql";

// v14: a failed attempt, trial or metric job says why in the log's own words and where that log
// is (issue 38): the diagnosis's deciding line (else the log's last line) and the job's log
// file, for status, watch and the report.
constexpr std::string_view kEvalschedV14 = R"sql(
ALTER TABLE attempts ADD COLUMN evidence TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN log TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN evidence TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN log TEXT NOT NULL DEFAULT '';
ALTER TABLE metric_jobs ADD COLUMN evidence TEXT NOT NULL DEFAULT '';
ALTER TABLE metric_jobs ADD COLUMN log TEXT NOT NULL DEFAULT '';
)sql";

// What the harness's table shows beside a score (version, filter, n-shot, stderr, mode), as
// JSON text from result.json's "details", for evalsched report.
constexpr std::string_view kEvalschedV15 = R"sql(
ALTER TABLE results ADD COLUMN info TEXT NOT NULL DEFAULT '';
)sql";

constexpr std::array kMigrations = {
    Migration{1, "evalsched v1: prior_runs, model_loads", kEvalschedV1},
    Migration{2, "evalsched v2: evaluations, trials, attempts, results, stagings", kEvalschedV2},
    Migration{3, "evalsched v3: indexes for the API's reads", kEvalschedV3},
    Migration{4, "evalsched v4: metric jobs per dataset", kEvalschedV4},
    Migration{5, "evalsched v5: evaluation versions for the API's caches", kEvalschedV5},
    Migration{6, "evalsched v6: running totals for /metrics counters", kEvalschedV6},
    Migration{7, "evalsched v7: the submitter's environment per evaluation", kEvalschedV7},
    Migration{8, "evalsched v8: sample counts per dataset", kEvalschedV8},
    Migration{9, "evalsched v9: follows of training runs' checkpoint directories", kEvalschedV9},
    Migration{10, "evalsched v10: pilot allocations, trials as their job steps", kEvalschedV10},
    Migration{11, "evalsched v11: precursor stage jobs per evaluation and node", kEvalschedV11},
    Migration{12, "evalsched v12: learned trial startups", kEvalschedV12},
    Migration{13, "evalsched v13: the suite's text per evaluation, pilots that serve", kEvalschedV13},
    Migration{14, "evalsched v14: evidence and log of failed attempts, trials and metric jobs", kEvalschedV14},
    Migration{15, "evalsched v15: the harness's details beside each score", kEvalschedV15},
};

}  // namespace

std::span<const Migration> evalsched_migrations() { return kMigrations; }

Database open_evalsched_store(const std::string& path) {
    Database db(path);
    migrate(db, evalsched_migrations());
    // In WAL mode a connection drops its page cache whenever another one commits, and the
    // scheduler commits every round: mapped pages make the API's next read cost no copies
    // (a whole-store status went from 16 ms to 6 ms in the API benchmark with 20 writes/s).
    db.exec("PRAGMA mmap_size = 268435456");
    return db;
}

}  // namespace acme::store
