#include "common/store/spool.hpp"

#include <sys/stat.h>

#include <array>
#include <stdexcept>

#include <fmt/format.h>

namespace acme::store {
namespace {

// Times are Unix epoch seconds as REAL (sub-second sampling); GPU ids are the global ids Slurm
// puts in SLURM_JOB_GPUS (the gres index on the node), never NVML's enumeration order.
constexpr std::string_view kSpoolV1 = R"sql(
CREATE TABLE jobs (
    job_id        INTEGER NOT NULL PRIMARY KEY,
    uid           INTEGER,
    gid           INTEGER,
    node          TEXT NOT NULL,
    gpus          TEXT,            -- SLURM_JOB_GPUS on this node, e.g. "0,1"
    started_at    REAL,
    ended_at      REAL
);
CREATE TABLE steps (
    job_id        INTEGER NOT NULL,
    step_id       INTEGER NOT NULL, -- Slurm's numbering: batch 0xfffffffb, extern 0xfffffffc
    node          TEXT NOT NULL,
    started_at    REAL,
    ended_at      REAL,
    PRIMARY KEY (job_id, step_id)
);
CREATE TABLE gpu_samples (
    job_id        INTEGER NOT NULL,
    gpu           INTEGER NOT NULL,
    ts            REAL NOT NULL,
    util_gpu      REAL,            -- percent
    util_mem      REAL,            -- percent
    mem_used      INTEGER,         -- bytes
    mem_total     INTEGER,         -- bytes
    power_mw      INTEGER,
    energy_mj     INTEGER,         -- cumulative since driver load
    temp_c        INTEGER,
    sm_clock_mhz  INTEGER
);
CREATE INDEX gpu_samples_by_job ON gpu_samples (job_id, gpu, ts);
CREATE TABLE gpu_events (
    job_id        INTEGER,         -- NULL when seen outside any job
    gpu           INTEGER NOT NULL,
    ts            REAL NOT NULL,
    kind          TEXT NOT NULL,   -- xid, ecc_sbe, ecc_dbe, ...
    code          INTEGER,         -- the XID number, the ECC count ...
    detail        TEXT
);
CREATE INDEX gpu_events_by_job ON gpu_events (job_id, ts);
CREATE TABLE task_exits (
    job_id        INTEGER NOT NULL,
    step_id       INTEGER NOT NULL,
    task_id       INTEGER NOT NULL,
    node          TEXT NOT NULL,
    ts            REAL NOT NULL,
    wait_status   INTEGER NOT NULL, -- raw wait(2) status, as S_TASK_EXIT_STATUS gives it
    exit_code     INTEGER,          -- WEXITSTATUS when the task exited
    signal        INTEGER,          -- WTERMSIG when a signal killed it
    PRIMARY KEY (job_id, step_id, task_id)
);
CREATE TABLE diagnoses (
    job_id        INTEGER NOT NULL,
    restart       INTEGER NOT NULL DEFAULT 0, -- Slurm's restart count: one diagnosis per run
    node          TEXT NOT NULL,
    ts            REAL NOT NULL,
    category      TEXT NOT NULL,   -- infrastructure | framework | script | unknown
    reason        TEXT NOT NULL,
    confidence    REAL NOT NULL,
    evidence      TEXT NOT NULL,   -- JSON array of {line, text}
    action        TEXT NOT NULL,   -- requeue | drain | fix_code | none
    PRIMARY KEY (job_id, restart)
);
)sql";

// gputrace: the rest of what NVML tells per sample, why a job has no telemetry, and the
// per-(job, GPU) summary written when the sampler stops.
constexpr std::string_view kSpoolV2 = R"sql(
ALTER TABLE gpu_samples ADD COLUMN throttle_reasons INTEGER;   -- NVML clocks-event bit mask
ALTER TABLE gpu_samples ADD COLUMN ecc_corrected INTEGER;      -- volatile totals
ALTER TABLE gpu_samples ADD COLUMN ecc_uncorrected INTEGER;
ALTER TABLE gpu_samples ADD COLUMN retired_pending INTEGER;
ALTER TABLE gpu_samples ADD COLUMN remap_pending INTEGER;
ALTER TABLE gpu_samples ADD COLUMN remap_failure INTEGER;
ALTER TABLE gpu_samples ADD COLUMN gpm_sm_util REAL;           -- Hopper+ GPM, percent
ALTER TABLE gpu_samples ADD COLUMN gpm_tensor_util REAL;
ALTER TABLE gpu_samples ADD COLUMN gpm_dram_bw_util REAL;
ALTER TABLE jobs ADD COLUMN interval REAL;                     -- seconds between samples
ALTER TABLE jobs ADD COLUMN telemetry_error TEXT;              -- why samples are missing, if they are
CREATE TABLE gpu_summaries (
    job_id        INTEGER NOT NULL,
    gpu           INTEGER NOT NULL,
    node          TEXT NOT NULL,
    uuid          TEXT,
    first_ts      REAL,
    last_ts       REAL,
    samples       INTEGER NOT NULL,
    util_avg      REAL,
    util_max      REAL,
    mem_max       INTEGER,
    mem_total     INTEGER,
    energy_mj     INTEGER,         -- last minus first reading of the counter
    power_avg_mw  REAL,
    power_max_mw  INTEGER,
    temp_max      INTEGER,
    xids          INTEGER NOT NULL DEFAULT 0,
    ecc_uncorrected_delta INTEGER,
    verdict       TEXT NOT NULL,   -- idle | low-util | ok | no-data
    PRIMARY KEY (job_id, gpu)
);
)sql";

// faultguard: the log tail it diagnosed (so faultdiag --job can re-diagnose with new rules)
// and the rule that decided.
constexpr std::string_view kSpoolV3 = R"sql(
CREATE TABLE log_tails (
    job_id        INTEGER NOT NULL,
    restart       INTEGER NOT NULL DEFAULT 0,
    node          TEXT NOT NULL,
    paths         TEXT NOT NULL,   -- the stdout and stderr files read, as JSON
    bytes         INTEGER NOT NULL,
    text          TEXT NOT NULL,   -- at most the plugin's log_bytes per file, whole lines
    PRIMARY KEY (job_id, restart)
);
ALTER TABLE diagnoses ADD COLUMN rule TEXT;
)sql";

// Job records: what Slurm knew of each job, kept on the node so reports work without slurmdbd.
// Written by faultguard's epilog for every job (one row per job and node, like the rest).
constexpr std::string_view kSpoolV4 = R"sql(
ALTER TABLE jobs ADD COLUMN user TEXT;
ALTER TABLE jobs ADD COLUMN account TEXT;
ALTER TABLE jobs ADD COLUMN partition TEXT;
ALTER TABLE jobs ADD COLUMN name TEXT;
ALTER TABLE jobs ADD COLUMN job_type TEXT;          -- pretrain | sft | eval | debug | mllm | other
ALTER TABLE jobs ADD COLUMN job_type_source TEXT;   -- tag | comment | evalsched | name | default
ALTER TABLE jobs ADD COLUMN nodelist TEXT;
ALTER TABLE jobs ADD COLUMN num_nodes INTEGER;
ALTER TABLE jobs ADD COLUMN gpus_total INTEGER;     -- GPUs of the whole job (its TRES)
ALTER TABLE jobs ADD COLUMN submit_time REAL;
ALTER TABLE jobs ADD COLUMN start_time REAL;
ALTER TABLE jobs ADD COLUMN end_time REAL;
ALTER TABLE jobs ADD COLUMN state TEXT;             -- COMPLETED, FAILED, TIMEOUT, ... as sacct says it
ALTER TABLE jobs ADD COLUMN exit_code TEXT;         -- "EXIT:SIGNAL", as sacct's ExitCode
ALTER TABLE jobs ADD COLUMN derived_exit_code TEXT;
ALTER TABLE jobs ADD COLUMN restarts INTEGER;
ALTER TABLE jobs ADD COLUMN batch_host TEXT;
CREATE INDEX jobs_by_end ON jobs (end_time);
)sql";

// Recovery: what faultguard did about each failed run (drain, requeue) and why; and the
// pre-job health gate's verdicts.
constexpr std::string_view kSpoolV5 = R"sql(
CREATE TABLE recoveries (
    job_id        INTEGER NOT NULL,
    restart       INTEGER NOT NULL,
    node          TEXT NOT NULL,
    ts            REAL NOT NULL,
    drained       INTEGER NOT NULL,  -- 1 when this node was drained
    drain_reason  TEXT,
    requeued      INTEGER NOT NULL,  -- 1 when the job was requeued
    outcome       TEXT NOT NULL,     -- one line: what was decided and why, and Slurm's errors
    PRIMARY KEY (job_id, restart)
);
CREATE TABLE health_checks (
    node          TEXT NOT NULL,
    ts            REAL NOT NULL,
    job_id        INTEGER,           -- the job whose prolog ran the gate
    passed        INTEGER NOT NULL,
    detail        TEXT NOT NULL
);
CREATE INDEX health_checks_by_ts ON health_checks (ts);
)sql";

// Stalls: the verdict a job's sampler reached while the job ran (no progress for a window), the
// node it named, its evidence, and what it did about it (acme-gpu-sampler, gputrace(8)).
constexpr std::string_view kSpoolV6 = R"sql(
CREATE TABLE stalls (
    job_id        INTEGER NOT NULL,
    restart       INTEGER NOT NULL,
    node          TEXT NOT NULL,     -- the node whose sampler wrote this row
    ts            REAL NOT NULL,     -- when the verdict was reached
    since         REAL NOT NULL,     -- the last progress seen
    named_node    TEXT,              -- the node that diverged; NULL: none stood out
    hardware      INTEGER NOT NULL,  -- 1 when named on GPU evidence (XIDs, a spin)
    evidence      TEXT NOT NULL,
    action        TEXT NOT NULL,     -- what the sampler did: none | signalled | cancelled ...
    PRIMARY KEY (job_id, restart)
);
)sql";

// A verdict withdrawn while the job still ran: its progress resumed before any cancel (the
// sampler re-checks through the grace period), so the epilog does not diagnose a stall.
constexpr std::string_view kSpoolV7 = R"sql(
ALTER TABLE stalls ADD COLUMN withdrawn INTEGER NOT NULL DEFAULT 0;
)sql";

// Slurm 26.05's SLUID of the job the row belongs to (SLURM_JOB_SLUID, as Slurm prints it):
// a job id handed out again moves the older job's rows aside (spool_reuse.hpp). NULL before 26.05.
constexpr std::string_view kSpoolV8 = R"sql(
ALTER TABLE jobs ADD COLUMN sluid TEXT;
)sql";

// gpuacct goodput: the GPUs whose verdict is idle, looked up without reading every summary (a few
// percent of rows). The verdict is a column too: only then does SQLite read the index alone
// (covering) for goodput's query (spool_goodput.cpp).
constexpr std::string_view kSpoolV9 = R"sql(
CREATE INDEX gpu_summaries_idle ON gpu_summaries (job_id, last_ts, verdict) WHERE verdict = 'idle';
)sql";

constexpr std::array kMigrations = {
    Migration{1, "node spool v1: jobs, steps, gpu_samples, gpu_events, task_exits, diagnoses", kSpoolV1},
    Migration{2, "gputrace: full NVML sample, telemetry errors, per-GPU job summaries", kSpoolV2},
    Migration{3, "faultguard: log tails, deciding rule", kSpoolV3},
    Migration{4, "job records: user, account, partition, name, type, times, state, exit codes", kSpoolV4},
    Migration{5, "recovery: drains and requeues, health-gate verdicts", kSpoolV5},
    Migration{6, "stalls: verdicts on running jobs that stopped making progress", kSpoolV6},
    Migration{7, "stalls: a verdict withdrawn when progress resumed", kSpoolV7},
    Migration{8, "jobs: the SLUID that tells a job id handed out again from the older job", kSpoolV8},
    Migration{9, "gpu_summaries: an index of the idle GPUs (gpuacct goodput)", kSpoolV9},
};

}  // namespace

std::span<const Migration> spool_migrations() { return kMigrations; }

std::string spool_path(std::string_view dir, std::string_view node) {
    if (node.empty() || node.find('/') != std::string_view::npos || node == "." || node == "..")
        throw std::invalid_argument(fmt::format("spool: \"{}\" is not a node name", node));
    std::string path(dir);
    if (path.empty() || path.back() != '/') path += '/';
    path += node;
    path += ".db";
    return path;
}

Database open_spool(const std::string& path) {
    Database db(path);
    migrate(db, spool_migrations());
    return db;
}

Database open_spool_read_only(const std::string& path) {
    // SQLite would block opening a FIFO named x.db, and read a device forever: regular files
    // only (a link to one is fine: spool directories are root's).
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) throw std::runtime_error("not a regular file");
    OpenOptions options;
    options.read_only = true;
    options.create = false;
    return Database(path, options);
}

}  // namespace acme::store
