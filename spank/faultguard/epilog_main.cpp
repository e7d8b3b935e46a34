// acme-faultguard-epilog: the heavy half of faultguard's job epilog, in its own process so
// nothing of it can hurt slurmd (the plugin waits for it a bounded time and kills it after).
// On one node of one finished job it: turns the task exits slurmstepd handed over into spool
// rows; asks slurmctld how the job ended; reads the tail of the job's stdout/stderr as the
// job's user (on the batch host only); runs the diagnosis engine over all of it with the GPU
// events the sampler recorded; stores the diagnosis; prints one line for slurmd's log.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/slurm/job_type.hpp"
#include "common/diagnose/engine.hpp"
#include "common/diagnose/history_store.hpp"
#include "common/diagnose/llm_client.hpp"
#include "spank/faultguard/core/epilog_args.hpp"
#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/core/hard_stop.hpp"
#include "spank/faultguard/core/log_tail.hpp"
#include "spank/faultguard/core/output_path.hpp"
#include "spank/faultguard/core/record_part.hpp"
#include "spank/faultguard/core/record_retry.hpp"
#include "spank/faultguard/core/spool_records.hpp"
#include "spank/faultguard/record_outbox.hpp"
#include "spank/faultguard/record_publish.hpp"
#include "spank/faultguard/record_retrier.hpp"
#include "spank/faultguard/core/task_exit_log.hpp"
#include "common/recovery/recovery_policy.hpp"
#include "spank/faultguard/core/recovery_release.hpp"
#include "common/slurm/actions.hpp"
#include "common/util/spawn.hpp"
#include "common/slurm/jobs.hpp"
#include "common/slurm/run_row.hpp"
#include "common/slurm/nodes.hpp"
#include "common/store/spool.hpp"
#include "common/store/spool_failures.hpp"
#include "common/store/spool_gpu.hpp"
#include "common/store/spool_stalls.hpp"
#include "common/util/parse.hpp"
#include "common/util/version.hpp"
#include "common/util/wall_clock.hpp"

namespace {

using namespace acme;

using Options = faultguard::EpilogArgs;

// Set when the plugin's timeout= passed and it let this run go on detached (--go-on): the
// node is given back, so no recovery from here on, and stdout is faultguard's log now.
volatile sig_atomic_t g_gone_on = 0;
char g_go_on_ack[128];
std::size_t g_go_on_ack_size = 0;

// The plugin stops reading stdout once it has read the ack: nothing goes there after it.
void go_on_detached(int) {
    const int saved = errno;
    if (!g_gone_on) {
        const ssize_t ignored = ::write(STDOUT_FILENO, g_go_on_ack, g_go_on_ack_size);
        (void)ignored;
        dup2(STDERR_FILENO, STDOUT_FILENO);
        g_gone_on = 1;
    }
    errno = saved;
}

// A run the plugin waits for at most timeout= and then lets go on (--go-on): ready for the
// signal, and bounded from its start by the whole time it may take.
void prepare_to_go_on(const Options& o) {
    const auto ack = fmt::format("\n{}\n", faultguard::kGoOnAck);
    g_go_on_ack_size = std::min(ack.size(), sizeof g_go_on_ack);
    std::memcpy(g_go_on_ack, ack.data(), g_go_on_ack_size);
    const auto limit = static_cast<unsigned>(std::ceil(o.go_on));
    faultguard::arm_hard_stop(limit, fmt::format("job {} on {}: the epilog, gone on detached after faultguard's timeout=, "
                                                 "was stopped at its time limit ({} s); a record part not yet handed over "
                                                 "to the outbox is missing\n",
                                                 o.job, o.node, limit));
    struct sigaction sa {};
    sa.sa_handler = go_on_detached;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(faultguard::kGoOnSignal, &sa, nullptr);
}

using util::wall_now;

std::string slurp_and_remove(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    unlink(path.c_str());
    return ss.str();
}

void record_job_row(store::Database& db, const Options& o, const std::optional<slurm::JobRecord>& record) {
    faultguard::JobRow row;
    row.job_id = o.job;
    row.uid = o.uid;
    row.gid = o.gid;
    row.node = o.node;
    row.gpus = o.gpus;
    row.user = o.user;
    row.nodelist = o.nodelist;
    row.restarts = o.restart;
    row.exit_code = o.exit_code2;
    row.sluid = o.sluid;
    std::string comment, name;
    if (record) {
        row.account = record->account;
        row.partition = record->partition;
        row.name = name = record->name;
        comment = record->comment;
        // slurmctld counts a completing job's nodes down as their epilogs end: an epilog that
        // runs after the others saw 1 of 2. The allocation's node list does not shrink.
        const auto hosts = slurm::expand_hostlist(!o.nodelist.empty() ? o.nodelist : record->nodes);
        row.num_nodes = std::max<decltype(row.num_nodes)>(record->num_nodes, static_cast<decltype(row.num_nodes)>(hosts.size()));
        row.gpus_total = record->gpus_total;
        row.submit_time = record->submit_time;
        row.start_time = record->start_time;
        row.end_time = record->end_time > 0 ? record->end_time : wall_now();
        row.state = record->state_name;
        row.batch_host = record->batch_host;
        if (row.user.empty()) row.user = record->user;
        if (!record->nodes.empty()) row.nodelist = record->nodes;
        row.exit_code = faultguard::exit_code_text(static_cast<int>(record->exit_code));
        row.derived_exit_code = faultguard::exit_code_text(static_cast<int>(record->derived_ec));
    } else {
        row.end_time = wall_now();
    }
    const auto type = acct::classify_job_type({o.job_type, comment, name});
    row.job_type = std::string(type.type);
    row.job_type_source = std::string(type.source);
    faultguard::record_job(db, row);
}

// What slurmstepd put in ACME_RESUME_CKPT for this run, if the job gave --ckpt-dir; the
// hand-off file is removed either way.
std::optional<std::string> take_resumed_from(const Options& o) {
    const std::string path = faultguard::resume_path(o.spool, o.node, o.job);
    if (struct stat st {}; ::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    std::string line = slurp_and_remove(path);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return line;
}

// The run's end for its publisher's pacing (0: unknown), never later than now: a requeued job's
// end time is backfill's guess at its next run's while its epilogs run (core/publish_pacing.hpp).
double run_end(const std::optional<slurm::JobRecord>& record) {
    return record ? faultguard::pacing_end(record->end_time, static_cast<double>(wall_now())) : 0.0;
}

// An epilog that requeued the job writes its part itself, before it returns (the next run is
// about to get a row of its own): the node waits on it, so its time is bounded whatever the
// job's size, 4 s plus three turns of at most 1.5 s (record_publish.hpp). The detached
// publisher's (record_outbox.cpp) is longer: nothing waits on it.
constexpr double kInEpilogBaseSeconds = 4.0;
constexpr double kInEpilogMaxTurnSeconds = 1.5;

// This node's part of the run's acme record, into its AdminComment in slurmdbd (sacct, gpuacct
// and faultdiag read it from any node). The read-back loop takes seconds (record_publish.hpp),
// so it runs after the epilog, detached, unless this epilog requeued the job: then the next run
// is about to get a row of its own and the part is written now, while this run's row is the
// newest. Quiet on a cluster without slurmdbd. Returns what slurmd's log line adds about it.
std::string publish_record(store::Database& db, const Options& o, const std::optional<slurm::JobRecord>& record,
                           const std::optional<std::string>& resumed_from, const std::optional<store::StallRow>& stall,
                           const std::optional<diagnose::Diagnosis>& d,
                           const std::optional<faultguard::RecoveryDone>& recovery, std::string& publish_here) {
    faultguard::NodePartInputs in;
    in.gpus = store::job_gpu_summaries(db, o.job);
    in.events = store::job_gpu_events(db, o.job);
    in.diagnosis = d;
    in.recovery = recovery;
    in.gate = store::job_health_check(db, o.job);
    if (resumed_from) faultguard::take_resume_line(*resumed_from, in);
    in.stall = stall;
    in.epilog_ts = wall_now();
    auto expected = slurm::expand_hostlist(o.nodelist);
    if (expected.empty()) expected = {o.node};
    slurm::JobRow row{static_cast<unsigned>(o.job)};
    if (record && record->array_job_id != 0 && record->array_task_id < 0xfffffffeu /* NO_VAL: not a task */) {
        row.array_job_id = record->array_job_id;
        row.array_task_id = record->array_task_id;
    }
    // The run's own row in slurmdbd, whenever the part is written (a requeued job's next run
    // gets a row of its own about 5 s after an admin's requeue).
    const auto run = slurm::run_selector(record, o.restart);
    auto part = faultguard::node_part(in);
    const auto path = faultguard::record_part_path(o.spool, o.node, o.job, o.restart);
    std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
    if (const char* conf = getenv("SLURM_CONF")) env.push_back(fmt::format("SLURM_CONF={}", conf));
    const auto log = faultguard::log_path(o.spool, o.node);
    // Parts slurmdbd did not take at their own epilog (it was down): another try each.
    for (const auto& left : faultguard::outbox_parts(o.spool, o.node, path, faultguard::kOutboxPerEpilog)) {
        std::string ignored;
        util::spawn_detached({"/proc/self/exe", "--publish", left}, env, log, ignored, util::Priority::background);
    }
    if (!(recovery && recovery->requeued)) {
        const nlohmann::json handoff = {{"job", o.job},       {"array_job_id", row.array_job_id},
                                        {"array_task_id", row.array_task_id},
                                        {"restart", o.restart}, {"submit", run.submit}, {"start", run.start},
                                        {"before", run.before}, {"run_unknown", run.unknown},
                                        {"end", run_end(record)},
                                        {"expected", expected}, {"node", o.node},
                                        {"retry", faultguard::retry_schedule_json({o.record_retry, o.record_retry_pause})},
                                        {"part", part}};
        mkdir(faultguard::run_dir(o.spool).c_str(), 0700);
        std::string error;
        if (faultguard::write_handoff(path, handoff, error)) {
            // A helper nobody waits for (detached) publishes the part itself once its line is
            // out: another exec of this binary would cost the node starting the next job more
            // than the whole epilog did (issue #41).
            if (o.detached > 0) {
                publish_here = path;
                return "; record: publishing now";
            }
            // Normal priority: a failed run's record is the first thing its user looks at.
            if (util::spawn_detached({"/proc/self/exe", "--publish", path}, env, log, error))
                return "; record: publishing after the epilog";
        }
        unlink(path.c_str());
        fmt::print("job {} on {}: cannot publish the record after the epilog ({}); publishing now\n", o.job, o.node, error);
    }
    // The node waits on this one: its pacing among the job's nodes fits a few seconds.
    const auto pacing = faultguard::publish_pacing(expected, o.node, kInEpilogBaseSeconds, kInEpilogMaxTurnSeconds);
    fmt::print("{}", faultguard::publish_result_line(
                         o.job, o.node, faultguard::publish_node_part(row, o.restart, run, expected, o.node, part, pacing)));
    return {};
}

// gpucheck's verdict on this node's job GPUs: healthy, faulty, or nullopt when it cannot tell
// (no GPU, no CUDA, not installed).
std::optional<bool> run_gpucheck(const Options& o, std::string& detail) {
    if (o.gpucheck.empty() || o.gpus.empty()) return std::nullopt;
    const auto r = util::run_bounded({o.gpucheck, "--quick", "--gpus", o.gpus}, {"PATH=/usr/bin:/bin"}, "", 60);
    detail = r.output;
    if (!r.started || r.timed_out || !WIFEXITED(r.wait_status)) return std::nullopt;
    if (WEXITSTATUS(r.wait_status) == 0) return true;
    if (WEXITSTATUS(r.wait_status) == 1) return false;
    return std::nullopt;
}

faultguard::RecoveryDone recover(store::Database& db, const Options& o, const diagnose::JobEnd& end,
                                 const diagnose::Diagnosis& d, const std::optional<store::StallRow>& stall,
                                 const recovery::XidActions& xids) {
    recovery::Inputs in;
    in.xids = xids;
    in.diagnosis = d;
    in.gpu_events = end.gpu_events;
    in.job_gpus = end.job_gpus;
    in.max_restarts = o.auto_recover;
    in.restarts = static_cast<int>(o.restart);
    if (stall && stall->hardware && stall->named_node == o.node && d.reason == "stalled_node") {
        const auto at = stall->evidence.find(" named: ");
        in.stall_named_here = at == std::string::npos ? std::string("its GPUs diverged") : stall->evidence.substr(at + 8);
    }
    if (d.category == diagnose::Category::infrastructure) {
        bool evidence_here = false;
        // The sampler's idle_alert/idle_cancel events say how the job used its GPUs, not that they failed.
        for (const auto& e : end.gpu_events)
            evidence_here = evidence_here || (e.kind != "ecc_sbe" && e.kind.rfind("idle_", 0) != 0);
        // A node the stall verdict named is checked like one without evidence (recovery_policy.hpp).
        if (!evidence_here) in.gpucheck_healthy = run_gpucheck(o, in.gpucheck_detail);
    }
    in.uid = o.uid;
    in.drain_per_user = o.drain_per_user;
    if (in.drain_per_user > 0 && o.uid >= 0) {
        // How many nodes this uid's jobs hold drained now, from slurmctld's reasons: one RPC, and
        // only for a failed --auto-recover job (a node that cannot be asked is not held back).
        std::string error;
        if (const auto nodes = slurm::load_node_health(error)) {
            std::vector<std::string> reasons;
            for (const auto& n : *nodes)
                if (n.state.find("DRAIN") != std::string::npos) reasons.push_back(n.reason);
            in.drained_by_uid = recovery::drains_by_uid(reasons, o.uid);
        }
    }
    auto p = recovery::plan(in);
    if (p.drain) p.drain_reason += recovery::drain_owner_tag(o.job, o.uid);
    std::string outcome = p.why;
    bool drained = false, requeued = false;
    if (p.drain) {
        const auto err = slurm::drain_node(o.node, p.drain_reason);
        drained = err.empty();
        if (!err.empty()) outcome += fmt::format("; drain failed: {}", err);
        // A drain on hardware evidence is this node's latest health verdict: the pre-job gate
        // looks for fatal XIDs only after it, so a node an admin resumed is not failed again
        // for the same XID.
        faultguard::record_health_check(db, o.node, wall_now(), o.job, false, "drained by recovery: " + p.drain_reason);
    }
    // The node a stall verdict named and nobody drained: the requeued job avoids it. Every node's
    // epilog that holds the verdict says so, so whichever release watcher runs first keeps it.
    const std::string avoid = p.avoid_node ? o.node
                              : stall && stall->hardware && d.reason == "stalled_node" && stall->named_node != o.node ? stall->named_node
                                                                                                                    : std::string();
    if (p.requeue) {
        const auto err = slurm::requeue_job(static_cast<unsigned>(o.job));
        requeued = err.empty();
        if (!err.empty()) outcome += fmt::format("; requeue failed: {}", err);
        // The requeue completes only after this epilog returns; a detached watcher then makes
        // the job eligible at once instead of after cred_expire.
        if (requeued) {
            const auto err = recovery::start_release_watcher(static_cast<unsigned>(o.job), o.restart,
                                                             faultguard::log_path(o.spool, o.node), avoid);
            if (!err.empty()) outcome += fmt::format("; cannot start the release watcher: {}", err);
        }
    }
    faultguard::record_recovery(db, o.job, o.restart, o.node, wall_now(), drained, p.drain_reason, requeued, outcome);
    fmt::print("job {} on {}: recovery: {}\n", o.job, o.node, outcome);
    return {drained, requeued, drained ? p.drain_reason : std::string(), outcome};
}

int run(const Options& given) {
    auto db = store::open_spool(store::spool_path(given.spool, given.node));

    // 1. The task exits slurmstepd wrote for this job on this node; the sampler's stall-cancel mark,
    // read by the plugin already (job_script.cpp), goes with them (a requeued run starts without it).
    ::unlink(store::stall_cancel_mark_path(given.spool, given.node, given.job).c_str());
    const auto exits =
        faultguard::parse_task_exits(slurp_and_remove(faultguard::task_exit_path(given.spool, given.node, given.job)));
    faultguard::record_task_exits(db, given.job, given.node, exits);

    // 2. How the job ended, as slurmctld says (the record still exists while the job completes).
    const auto record = slurm::load_job(static_cast<unsigned>(given.job));
    // The run's own restart count from here on (its spool rows, stall verdict, record and outbox
    // file): after a requeue slurmctld made, the epilog's SLURM_JOB_RESTART_COUNT is already the
    // next run's, whose part on this node would then share this one's outbox file.
    Options o = given;
    o.restart = slurm::run_restart(record, given.restart);
    diagnose::JobEnd end;
    end.job_exit = diagnose::parse_exit_code2(o.exit_code2);
    end.task_wait_statuses = faultguard::task_wait_statuses(db, o.job);
    end.gpu_events = faultguard::job_gpu_events(db, o.job);
    if (const auto ids = util::parse_id_list(o.gpus)) end.job_gpus = *ids;
    if (record) {
        end.time_limit = record->timeout;
        end.cancelled = record->cancelled;
        end.node_failure = record->node_fail;
        end.oom_kill = record->oom;
        if (!end.job_exit && record->exit_code) end.job_exit = diagnose::from_wait_status(static_cast<int>(record->exit_code));
    }
    record_job_row(db, o, record);
    const auto resumed_from = take_resumed_from(o);
    // The sampler's verdict while the job ran: it stopped making progress (gputrace(8)).
    // A verdict the sampler withdrew (the job's progress resumed) is kept in the record, but
    // the run is not diagnosed as stalled.
    const auto stall = store::job_stall(db, o.job, o.restart);
    if (stall && !stall->withdrawn) {
        end.stalled = true;
        end.stall_named = !stall->named_node.empty();
    }

    bool failed = end.time_limit || end.cancelled || end.node_failure || end.oom_kill ||
                  (end.job_exit && !end.job_exit->success());
    for (int status : end.task_wait_statuses) failed = failed || status != 0;
    if (!failed) {
        std::string publish_here;
        const auto published = o.admin_comment ? publish_record(db, o, record, resumed_from, stall, std::nullopt,
                                                                std::nullopt, publish_here)
                                               : std::string();
        fmt::print("job {} on {}: completed; nothing to diagnose{}\n", o.job, o.node, published);
        if (publish_here.empty()) return 0;
        std::fflush(stdout);
        return faultguard::publish_handoff(publish_here);  // its own time limit (alarm) and line
    }

    // 3. The log, read as the job's user, where the batch script ran (or, when slurmctld could
    //    not be asked, on the first node of the job).
    std::string batch_host = record ? record->batch_host : std::string();
    if (batch_host.empty()) {
        const auto hosts = slurm::expand_hostlist(o.nodelist);
        if (!hosts.empty()) batch_host = hosts.front();
    }
    std::string log;
    std::vector<std::string> notes;
    if (batch_host == o.node && o.uid >= 0 && o.gid >= 0) {
        std::vector<std::string> paths;
        if (record && !record->std_out.empty()) {
            paths = {record->std_out, record->std_err};
        } else {
            faultguard::JobNames names;
            names.job_id = static_cast<std::uint32_t>(o.job);
            names.user = o.user;
            names.first_node = batch_host;
            names.work_dir = o.work_dir;
            if (record) {
                names.name = record->name;
                names.array_job_id = record->array_job_id;
                names.array_task_id = record->array_task_id;
            }
            paths = {faultguard::expand_output_pattern(o.stdout_pattern, names),
                     faultguard::expand_output_pattern(o.stderr_pattern.empty() ? o.stdout_pattern : o.stderr_pattern,
                                                       names)};
        }
        auto tail = faultguard::read_tails_as_user(paths, static_cast<uid_t>(o.uid), static_cast<gid_t>(o.gid),
                                                   o.log_bytes, o.read_timeout);
        log = std::move(tail.text);
        notes = std::move(tail.notes);
        if (!log.empty()) faultguard::record_log_tail(db, o.job, o.restart, o.node, paths, log);
    }
    end.log = log;

    // 4. Diagnose and store.
    std::string error;
    auto engine = diagnose::load_engine_noexcept(o.rules, error);
    // A store that does not exist yet means no history; one that cannot be read is named.
    std::string history_error;
    const auto history = diagnose::load_history_noexcept(o.labels, history_error);
    diagnose::Diagnosis d;
    if (engine) {
        d = diagnose::diagnose_noexcept(*engine, end, history ? &*history : nullptr);
    } else {
        d.evidence.push_back({0, "faultguard", error});
    }
    if (stall && !stall->withdrawn && d.rule.rfind("stall.", 0) == 0)
        d.evidence.insert(d.evidence.begin(), {0, "sampler", fmt::format("stall on {}: {}", stall->node, stall->evidence)});
    for (const auto& note : notes) d.evidence.push_back({0, "faultguard", "log not read: " + note});
    if (!history_error.empty()) d.evidence.push_back({0, "faultguard", "history not used: " + history_error});
    // Evidence lines are quoted from the job's log: stored (spool, AdminComment) with the same
    // redaction as what the model is sent, so a token or password a job printed stays in its log.
    diagnose::RedactOptions redaction;
    if (!o.user.empty()) redaction.words.push_back(o.user);
    if (record && !record->user.empty()) redaction.words.push_back(record->user);
    for (auto& e : d.evidence) e.text = diagnose::redact(e.text, redaction);
    faultguard::record_diagnosis(db, o.job, o.restart, o.node, wall_now(), d);
    fmt::print("job {} on {}: {}/{} ({:.2f}) action={}{}{}\n", o.job, o.node, diagnose::to_string(d.category), d.reason,
               d.confidence, diagnose::to_string(d.action), d.evidence.empty() ? "" : ": ",
               d.evidence.empty() ? "" : util::printable(d.evidence.front().text, 160));
    // Which XIDs drain: the rules' [[xid]] table, or the built-in copy when it is missing.
    recovery::XidActions xids = recovery::builtin_xid_actions(engine ? "built-in list (no [[xid]] table in the rules)"
                                                                     : "built-in list (rules not loaded)");
    if (engine)
        if (auto from_rules = recovery::xid_actions_from_rules(engine->rules())) xids = std::move(*from_rules);
    // Recovery plans on the rules' answer, before the model is asked: the model never changes
    // what recovery does, and its time cannot delay a drain.
    std::optional<faultguard::RecoveryDone> recovery;
    if (o.auto_recover >= 0 && g_gone_on)
        fmt::print("job {} on {}: recovery: none: faultguard's timeout= passed before it and the node was given back\n", o.job,
                   o.node);
    else if (o.auto_recover >= 0)
        recovery = recover(db, o, end, d, stall, xids);
    // 5. Where the rules did not decide and the admin configured a model server: ask it.
    if (!o.llm_endpoint.empty() && !log.empty()) {
        diagnose::LlmConfig llm;
        llm.endpoint = o.llm_endpoint;
        llm.model = o.llm_model;
        llm.token_file = o.llm_token_file;
        llm.timeout = o.llm_timeout;
        llm.below = o.llm_below;
        const auto asked = diagnose::ask_model(llm, log, d, redaction);
        if (!asked.note.empty()) fmt::print("job {} on {}: {}\n", o.job, o.node, util::printable(asked.note, 300));
        if (asked.diagnosis) {
            d = *asked.diagnosis;
            faultguard::record_diagnosis(db, o.job, o.restart, o.node, wall_now(), d);
        }
    }
    if (o.admin_comment) {
        std::string publish_here;
        const auto published = publish_record(db, o, record, resumed_from, stall, d, recovery, publish_here);
        if (!published.empty()) fmt::print("job {} on {}: {}\n", o.job, o.node, published.substr(2));
        if (!publish_here.empty()) {
            std::fflush(stdout);
            faultguard::publish_handoff(publish_here);
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    for (const auto a : args) {
        if (a == "--version") {
            fmt::print("{}\n", acme::version_line("acme-faultguard-epilog"));
            return 0;
        }
        if (a == "--help" || a == "-h") {
            fmt::print("acme-faultguard-epilog: records how a job ended on this node and diagnoses it (run by "
                       "faultguard.so)\n{}", faultguard::epilog_usage());
            return 0;
        }
    }
    std::string error;
    const auto parsed = faultguard::parse_epilog_args(args, error);
    if (!parsed) {
        fmt::print(stderr, "acme-faultguard-epilog: {}\n", error);
        return 2;
    }
    const Options& o = *parsed;
    if (o.release > 0) return recovery::release_after_requeue(static_cast<unsigned>(o.release), o.restart, o.exclude_node);
    if (o.retry_outbox) {
        try {
            return faultguard::run_record_retrier(o.spool, o.node);
        } catch (const std::exception& e) {
            fmt::print(stderr, "acme-faultguard-epilog --retry-outbox: {}\n", e.what());
            return 1;
        }
    }
    if (!o.publish.empty()) {
        // A retrier's try: its line goes where the retrier reads it (its stdout).
        if (o.retry_try) dup2(STDOUT_FILENO, STDERR_FILENO);
        try {
            return faultguard::publish_handoff(o.publish, o.retry_try);
        } catch (const std::exception& e) {
            fmt::print(stderr, "acme-faultguard-epilog --publish: {}\n", e.what());
            return 1;
        }
    }
    if (o.job <= 0 || o.node.empty() || o.spool.empty() || o.rules.empty()) {
        fmt::print(stderr, "acme-faultguard-epilog: --job, --node, --spool and --rules are required\n");
        return 2;
    }
    if (o.node.find('/') != std::string::npos) {
        fmt::print(stderr, "acme-faultguard-epilog: --node {}: not a node name\n", util::printable(o.node));
        return 2;
    }
    if (o.detached > 0) {
        // Nobody waits for this run (faultguard.so started it detached for a job that ended
        // cleanly): it ends itself when its time is up, and its line goes to faultguard's log.
        const auto limit = static_cast<unsigned>(std::ceil(o.detached));
        faultguard::arm_hard_stop(limit, fmt::format("job {} on {}: the epilog was stopped at its time limit ({} s); a "
                                                     "record part not yet handed over to the outbox is missing\n",
                                                     o.job, o.node, limit));
        dup2(STDERR_FILENO, STDOUT_FILENO);
    }
    if (o.go_on > 0 && o.detached <= 0) prepare_to_go_on(o);
    try {
        return run(o);
    } catch (const std::exception& e) {
        fmt::print("job {} on {}: faultguard failed: {}\n", o.job, o.node, e.what());
        return 1;
    }
}
