#include "acct/gpuacct/core/goodput_runs.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/record/codec.hpp"
#include "common/record/keys.hpp"
#include "common/record/record.hpp"

namespace acme::acct {
namespace {

using nlohmann::json;
namespace key = record::key;

std::optional<json> run_record(const slurm::AccountedRun& row, std::vector<std::string>& warnings) {
    std::string error;
    const auto text = record::decode_token(row.admin_comment, error);
    std::optional<json> parsed;
    if (text) parsed = record::parse_record(*text, error);
    if (!error.empty()) warnings.push_back(fmt::format("job {}: {}: its goodput reads slurmdbd's fields of that run only", row.job_id, error));
    return parsed;
}

// What the record adds to a run: every node's part speaks for the run; a diagnosis or an acted
// stall verdict on any node is the run's fault.
void read_record(const json& r, GoodputRun& run) {
    if (!r.contains(key::nodes) || !r[key::nodes].is_object()) return;
    int gpus_seen = 0, idle = 0;
    bool telemetry = false;
    for (const auto& [node, part] : r[key::nodes].items()) {
        if (!part.is_object()) continue;
        if (const auto d = part.find(key::part::diagnosis); d != part.end() && d->is_object()) {
            run.failed = true;
            if (run.category.empty()) {
                run.category = d->value(key::diagnosis::category, "");
                run.reason = d->value(key::diagnosis::reason, "");
            }
        }
        if (const auto s = part.find(key::part::stall); s != part.end() && s->is_object() && !s->value(key::stall::withdrawn, false)) {
            if (const auto since = s->find(key::stall::since); since != s->end() && since->is_number())
                run.stall_since = std::min(run.stall_since.value_or(since->get<double>()), since->get<double>());
            if (s->value(key::stall::action, "none") != "none") run.failed = true;
        }
        if (const auto from = part.find(key::part::resumed_from); from != part.end() && from->is_string()) {
            const std::string path = from->get<std::string>();
            // A search that failed is not a fresh start: which checkpoint is not known.
            if (!path.starts_with("(")) run.resumed_from = path;
            if (const auto ts = part.find(key::part::resumed_ckpt_ts); ts != part.end() && ts->is_number())
                run.resumed_ckpt_ts = ts->get<double>();
        }
        if (const auto g = part.find(key::part::gpus); g != part.end() && g->is_array() && !g->empty()) {
            telemetry = true;
            for (const auto& gpu : *g) {
                ++gpus_seen;
                idle += gpu.is_object() && gpu.value(key::gpu::verdict, "") == "idle";
            }
        }
    }
    if (telemetry) run.idle_gpus = idle;
    if (run.gpus == 0) run.gpus = gpus_seen;
}

}  // namespace

bool failed_state(std::string_view state) {
    return state == "FAILED" || state == "NODE_FAIL" || state == "OUT_OF_MEMORY" || state == "BOOT_FAIL";
}

namespace {

GoodputRun goodput_run(const slurm::AccountedRun& row, std::vector<std::string>& warnings) {
    GoodputRun run;
    run.submit = row.submit;
    run.start = row.start;
    run.end = row.end;
    run.failed = failed_state(row.state);
    run.gpus = static_cast<int>(row.gpus.value_or(0));
    run.user = row.user;
    run.account = row.account;
    run.partition = row.partition;
    if (const auto r = run_record(row, warnings)) {
        // A record of the right shape may still hold a field of the wrong type (an edited
        // AdminComment): that run is read from slurmdbd's fields, as a damaged token is.
        GoodputRun with_record = run;
        try {
            read_record(*r, with_record);
            run = std::move(with_record);
        } catch (const nlohmann::json::exception& e) {
            warnings.push_back(fmt::format("job {}: its ACME1 record has a field of the wrong type ({}): its goodput reads "
                                           "slurmdbd's fields of that run only",
                                           row.job_id, e.what()));
        }
    }
    return run;
}

bool listed(const std::vector<std::string>& names, const std::string& name) {
    return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::vector<GoodputRun> goodput_runs_of_job(std::span<const slurm::AccountedRun> rows, std::vector<std::string>& warnings) {
    std::vector<GoodputRun> out;
    out.reserve(rows.size());
    for (const auto& row : rows) out.push_back(goodput_run(row, warnings));
    return out;
}

std::map<std::int64_t, std::vector<GoodputRun>> goodput_runs(std::span<const slurm::AccountedRun> rows,
                                                             std::vector<std::string>& warnings) {
    std::vector<const slurm::AccountedRun*> order;
    for (const auto& row : rows) order.push_back(&row);
    std::map<std::int64_t, std::vector<GoodputRun>> out;
    slurm::for_each_job_group(
        order.begin(), order.end(), [](const auto* r) { return r->job_id; }, [](const auto* r) { return r->db_index; },
        [&](auto first, auto last) {
            auto& runs = out[(*first)->job_id];
            for (auto it = first; it != last; ++it) runs.push_back(goodput_run(**it, warnings));
        });
    return out;
}

void ClusterGoodputStream::add_job_runs(const std::vector<GoodputRun>& runs) {
    if (runs.empty()) return;
    const auto& last = runs.back();
    if (listed(filter_.users, last.user) && listed(filter_.accounts, last.account) && listed(filter_.partitions, last.partition))
        sum_.add(compute_goodput(runs, now_, false));
}

void ClusterGoodputStream::add_job(std::span<const slurm::AccountedRun> rows, std::vector<std::string>& warnings) {
    add_job_runs(goodput_runs_of_job(rows, warnings));
}

ClusterGoodput cluster_goodput(std::span<const slurm::AccountedRun> rows, const GoodputFilter& filter, double now,
                               std::vector<std::string>& warnings) {
    ClusterGoodputStream stream(filter, now);
    for (const auto& [job_id, runs] : goodput_runs(rows, warnings)) stream.add_job_runs(runs);
    return stream.result();
}

}  // namespace acme::acct
