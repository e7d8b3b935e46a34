// Reading a telemetry directory: every <node>.db node spool in it, merged into one view of the
// jobs (a job has one row per node it ran on), their per-GPU summaries, diagnoses and GPU
// events. A file that cannot be read is reported in `problems` and skipped, never fatal: one
// broken node must not hide the rest of the cluster. It sits beside the spool's schema (spool.hpp)
// because it is that schema's reader for whole directories: gpuacct's local view of a cluster.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/store/spool_failures.hpp"
#include "common/store/spool_gpu.hpp"

namespace acme::store {

struct NodeGpus {
    std::string node;
    std::string gpus;  // SLURM_JOB_GPUS on that node, "0,1"
};

// What only the per-job listing shows. Kept apart so the aggregate views, which read a million
// jobs, carry ~100 bytes a job instead of ~500.
struct JobText {
    std::int64_t uid = -1;
    std::string user, account, partition, name, job_type_source, nodelist, exit_code, derived_exit_code;
    std::string telemetry_error;
    // From slurmdbd's record only: the nodes whose epilog never reported ("n2,n3"), and seff's
    // numbers (CPU time against the CPUs held, MaxRSS against the memory asked for).
    std::string missing_nodes;
    std::optional<double> total_cpu_s, elapsed_s;
    std::int64_t alloc_cpus = 0;
    std::optional<std::int64_t> req_mem, max_rss;  // bytes
};

struct Job {
    std::int64_t job_id = 0;
    std::string job_type, state;
    std::string batch_host;                 // with ReadOptions::full_jobs or diagnoses
    int num_nodes = 0;                      // with ReadOptions::full_jobs
    int gpus_total = 0, restarts = 0;
    int gpu_ids = 0;                        // GPU ids listed by its node rows, all nodes
    double submit = 0, start = 0, end = 0;  // epoch seconds, 0: unknown
    std::vector<NodeGpus> nodes;            // every node with a row for this job (ReadOptions::node_rows)
    std::unique_ptr<JobText> text_ptr;      // set when ReadOptions::full_jobs

    const JobText& text() const {
        static const JobText empty;
        return text_ptr ? *text_ptr : empty;
    }
    JobText& mutable_text() {
        if (!text_ptr) text_ptr = std::make_unique<JobText>();
        return *text_ptr;
    }
};

struct GpuEvent {
    std::string node;
    std::optional<std::int64_t> job_id;
    int gpu = 0;
    double ts = 0;
    std::string kind;  // xid | ecc_dbe | ecc_sbe | gpu_lost
    std::int64_t code = 0;
};

// One task's end as faultguard recorded it in slurmstepd (task_exits).
struct TaskExit {
    std::int64_t job_id = 0, step_id = 0;
    std::string node;
    double ts = 0;
    int exit_code = 0, signal = 0;
};

// recoveries rows with drained = 1 (faultguard drained the node for a job's failure).
struct Drain {
    std::string node, reason;
    std::int64_t job_id = 0;
    double ts = 0;
};

// The pre-job health gate's verdicts (health_checks).
struct HealthCheck {
    std::string node, detail;
    double ts = 0;
    bool passed = false;
};

// A stall verdict the sampler reached while the job ran (stalls, spool v6; gputrace(8)).
struct Stall {
    std::int64_t job_id = 0, restart = 0;
    std::string node;   // whose sampler recorded it
    double ts = 0, since = 0;
    std::string named;  // the node that diverged; empty: none stood out
    bool hardware = false, withdrawn = false;
    std::string evidence, action;
};

struct ReadOptions {
    // Jobs that overlap [start, end] (sacct's rule: ended after start, began before end; a job
    // still running has no end). nullopt: unbounded.
    std::optional<double> start, end;
    std::vector<std::int64_t> job_ids;  // empty: all
    bool full_jobs = true;  // false: only what aggregates need (no names, users, exit codes)
    bool node_rows = true;  // false: no per-node list (what --summary and --failures skip)
    bool summaries = false, diagnoses = false;
    bool steps = false;   // task exits, for the per-step rows
    bool events = false;  // also drains in the period and each node's last health check up to its end
    bool evidence = false;  // the diagnoses' evidence lines too (the job view; often on overflow pages)
};

struct SpoolSet {
    std::vector<Job> jobs;  // merged across nodes, by job id
    std::vector<GpuSummary> summaries;
    std::vector<Diagnosis> diagnoses;
    std::vector<GpuEvent> events;  // in [start, end]
    std::vector<TaskExit> task_exits;
    std::vector<Stall> stalls;     // of the jobs read, with summaries
    std::vector<Drain> drains;     // in [start, end]
    std::vector<HealthCheck> last_health;  // per node, the newest up to end
    std::vector<std::string> nodes;     // one per readable spool file, sorted
    std::vector<std::string> problems;  // "n3.db: file is not a database", one per skipped file
};

// Reads every *.db file directly in dir. Throws std::runtime_error (one line) only when the
// directory itself cannot be listed.
SpoolSet read_spools(const std::string& dir, const ReadOptions& options);

// What scan_spools saw of the directory besides the jobs.
struct SpoolScan {
    std::vector<std::string> nodes;     // one per readable spool file, sorted
    std::vector<std::string> problems;  // as SpoolSet::problems
};

// Called once per job with its diagnoses from every node (empty unless ReadOptions::diagnoses),
// both valid only during the call; the visitor may move from the job. `part`: see scan_spools.
using JobVisitor = std::function<void(size_t part, Job& job, std::span<const Diagnosis> diagnoses)>;

// The jobs of read_spools, merged across nodes, handed one at a time instead of held: --summary
// and --failures aggregate a million jobs as they stream. The range of job ids is cut into up
// to `parts` runs read side by side, each on its own thread with its own connections (one run
// when the range is too narrow to be worth a thread). Calls for one part come from one thread,
// in id order, and every id of part p is below those of part p + 1. Reads only the jobs and
// diagnoses tables (ReadOptions::summaries, steps and events are ignored). Throws as
// read_spools.
SpoolScan scan_spools(const std::string& dir, const ReadOptions& options, size_t parts, const JobVisitor& visit);

}  // namespace acme::store
