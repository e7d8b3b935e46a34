#include "evalsched/daemon/sched/job_files.hpp"

#include <ctime>


#include <fmt/format.h>

#include "evalsched/core/user_environment.hpp"
#include "evalsched/daemon/accounts.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/user_files.hpp"

namespace acme::evalsched {

using nlohmann::json;

double wall_clock_s() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

std::string attempt_dir(const EvalInfo& e, const std::string& tag) { return fmt::format("{}/attempts/{}", e.output_dir, tag); }
std::string done_marker(const EvalInfo& e, std::int64_t trial) { return fmt::format("{}/inference-done/{}", e.output_dir, trial); }
std::string log_path(const EvalInfo& e, const std::string& tag) { return fmt::format("{}/logs/{}.out", e.output_dir, tag); }

std::string part_dir(const EvalInfo& e, const TrialRow& t, const std::string& dataset) {
    if (t.num_shards == 1) return fmt::format("{}/{}", e.output_dir, dataset);
    return fmt::format("{}/{}/shard-{}-of-{}", e.output_dir, dataset, t.shard, t.num_shards);
}

std::optional<std::string> ensure_dirs(const EvalInfo& e) {
    return prepare_user_dirs(e.output_dir, {"logs", "attempts", "inference-done"}, e.uid, e.gid);
}

slurm::BatchJob job_for(const EvalInfo& e, const std::string& tag, const std::string& partition, std::vector<std::string> extra,
                        const std::vector<std::string>& user_env) {
    slurm::BatchJob job;
    job.name = tag;
    std::string home = "/";
    if (const auto account = account_of(e.uid); account && !account->home.empty()) home = account->home;
    std::vector<std::string> fixed = {"HOME=" + home, "USER=" + e.user, "LOGNAME=" + e.user, fmt::format("EVALSCHED_EVALUATION={}", e.id)};
    if (user_env.empty()) fixed.insert(fixed.begin(), "PATH=/usr/local/bin:/usr/bin:/bin");
    for (auto& x : extra) fixed.push_back(std::move(x));
    fixed.push_back("EVALSCHED_OUTPUT=" + e.output_dir);
    job.environment = merge_environment(user_env, fixed);
    job.user_id = e.uid;
    job.group_id = e.gid;
    job.partition = partition;
    job.work_dir = e.output_dir;
    job.std_out = log_path(e, tag);
    return job;
}

std::optional<double> measured_startup(const RunRecord& run, const std::optional<double>& inference) {
    if (!run.seconds || !inference) return std::nullopt;
    const double s = *run.seconds - *inference;
    return s > 0 ? std::optional(s) : std::nullopt;
}

std::vector<Outcome::Score> scores_of(const json& r, const std::string& dataset) {
    std::vector<Outcome::Score> out;
    const json& scores = r.contains("scores") ? r["scores"] : r;
    if (!scores.is_object()) return out;
    // The harness's details beside each score, kept whole for the report (bounded: a result.json
    // is read with a size cap).
    const json details = r.contains("details") && r["details"].is_object() ? r["details"] : json::object();
    for (auto it = scores.begin(); it != scores.end(); ++it)
        if (it->is_number()) {
            const auto d = details.find(it.key());
            out.push_back({dataset, it.key(), it->get<double>(), d != details.end() && d->is_object() ? d->dump() : std::string()});
        }
    return out;
}

namespace {
// The first line the job script printed as "evalsched: ..." (without that prefix, at most 300
// printable characters), empty when there is none.
std::string first_wrapper_line(const std::string& log) {
    constexpr std::string_view prefix = "evalsched: ";
    std::string line;
    std::size_t at = 0;
    while (at < log.size()) {
        std::size_t end = log.find('\n', at);
        if (end == std::string::npos) end = log.size();
        if (line.empty() && std::string_view(log).substr(at, end - at).starts_with(prefix)) line = log.substr(at + prefix.size(), end - at - prefix.size());
        at = end + 1;
    }
    std::erase_if(line, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
    return line.substr(0, 300);
}

// The last line of the log with something printable on it, trimmed, at most the engine's
// evidence length: when nothing decided, the failing program's own last word.
std::string last_line(const std::string& log) {
    std::size_t end = log.size();
    while (end > 0) {
        const std::size_t begin = log.rfind('\n', end - 1);
        const std::size_t from = begin == std::string::npos ? 0 : begin + 1;
        std::string line = log.substr(from, end - from);
        std::erase_if(line, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
        const auto first = line.find_first_not_of(' ');
        if (first != std::string::npos) {
            line = line.substr(first, line.find_last_not_of(' ') - first + 1);
            return line.substr(0, diagnose::kEvidenceChars);
        }
        if (begin == std::string::npos) break;
        end = begin;
    }
    return {};
}
}  // namespace

Failure diagnose_failure(const diagnose::Engine* engine, const std::string& log, const EvalInfo& e, const slurm::JobView* job) {
    const std::string tail = read_as_user(log, e.uid, e.gid, 256 * 1024).value_or("");
    diagnose::JobEnd end;
    end.log = tail;
    if (job) {
        end.job_exit = diagnose::from_wait_status(static_cast<int>(job->exit_code));
        end.time_limit = job->timeout;
        end.node_failure = job->node_fail;
        end.cancelled = job->cancelled;
        end.oom_kill = job->oom;
    }
    Failure f{"unknown", job ? "exit " + std::to_string(job->exit_code >> 8) : "job vanished from slurmctld", ""};
    if (job && (job->exit_code >> 8) == kStageFailedExit) {
        // The wrapper's own line says why (a squatted cache directory names its owner).
        const std::string why = first_wrapper_line(tail);
        f = {"infrastructure", why.empty() ? "staging_failed" : "staging_failed: " + why, ""};
    } else if (end.node_failure) {
        f = {"infrastructure", "node_failure", ""};
    } else if (engine) {
        const diagnose::Diagnosis d = diagnose::diagnose_noexcept(*engine, end);
        f.category = std::string(diagnose::to_string(d.category));
        if (d.reason != "unknown") f.reason = d.reason;
        // The deciding line when the log decided; Slurm's or the exit status's words say no
        // more than the reason does.
        if (d.reason != "unknown" && !d.evidence.empty() && d.evidence.front().source == "log") f.evidence = d.evidence.front().text;
    }
    if (f.evidence.empty()) f.evidence = last_line(tail);
    return f;
}

}  // namespace acme::evalsched
