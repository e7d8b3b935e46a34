// What faultguard.so hands acme-faultguard-epilog: one type, and one table of flags behind it,
// so the plugin's argv and the helper's parser cannot drift apart (they were two lists). The
// plugin compiles this file into itself: no CLI11, nothing but fmt and the strict number parsers.
#pragma once

#include <csignal>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acme::faultguard {

struct EpilogArgs {
    long long job = 0;
    std::string node, spool, rules;
    std::string labels;             // labels store for history matching; empty: none
    std::string job_type;           // the job's --llm-job-type; empty: not given
    int drain_per_user = 3;         // nodes one uid's jobs may hold drained at once (0: no limit)
    int auto_recover = -1;          // the job's --auto-recover restart cap; -1: not asked
    std::string gpucheck;           // localises an infrastructure failure with no hardware evidence
    bool admin_comment = false;     // put the node's GPU summary into the job's AdminComment
    // faultguard's record_retry= and record_retry_pause=: how long after the job's end the
    // node's retrier tries a part slurmdbd did not take, and its longest pause (record_retry.hpp).
    double record_retry = 1800, record_retry_pause = 300;
    long long uid = -1, gid = -1, restart = 0;
    // The epilog environment's SLURM_JOB_EXIT_CODE2, SLURM_JOB_GPUS, SLURM_NODELIST,
    // SLURM_JOB_WORK_DIR, SLURM_JOB_STDOUT, SLURM_JOB_STDERR, SLURM_JOB_USER.
    std::string exit_code2, gpus, nodelist, work_dir, stdout_pattern, stderr_pattern, user;
    std::string sluid;  // SLURM_JOB_SLUID (Slurm 26.05+): tells this job from an older one with its id
    long long log_bytes = 256 * 1024;
    double read_timeout = 5;
    // LLM-assisted diagnosis; off when llm_endpoint is empty.
    std::string llm_endpoint, llm_model, llm_token_file;
    double llm_timeout = 8;
    double llm_below = 0.5;
    std::string exclude_node;  // internal (with --release): the node the requeued job avoids
    long long release = 0;  // internal (the release watcher): wait for this job's requeue
    std::string publish;    // internal (the detached publisher): put this record hand-off file in AdminComment
    bool retry_try = false;     // internal (with --publish): one try of the node's retrier, its line on stdout
    bool retry_outbox = false;  // internal (with --spool, --node): the node's record retrier
    // internal: the plugin started this helper detached (a job that ended cleanly): nobody waits
    // for it, so it ends itself after this many seconds and writes its line to faultguard's log.
    double detached = 0;
    // internal: the plugin waits for this helper at most its timeout=, then lets it go on
    // detached (SIGWINCH, answered with kGoOnAck) for at most this many seconds more, without
    // recovery, rather than kill it and diagnose again from scratch.
    double go_on = 0;
    bool operator==(const EpilogArgs&) const = default;
};

// The signal and the line of the hand-over above (util::Release): a helper that has not set
// itself up for it yet ignores SIGWINCH (its default action) and is killed as before.
inline constexpr int kGoOnSignal = SIGWINCH;
inline constexpr const char* kGoOnAck = "acme-faultguard-epilog: going on detached";

// helper followed by one `--flag value` pair per field that differs from its default (a flag
// alone for a true bool); parse_epilog_args() of the tail gives `a` back.
std::vector<std::string> epilog_argv(const std::string& helper, const EpilogArgs& a);

// `--flag value` and `--flag=value`; nullopt with a one-line `error` on an unknown flag, a
// missing or malformed value, or a value out of range. --help/--version are the caller's.
std::optional<EpilogArgs> parse_epilog_args(const std::vector<std::string_view>& args, std::string& error);

// One line per flag, for --help.
std::string epilog_usage();

}  // namespace acme::faultguard
