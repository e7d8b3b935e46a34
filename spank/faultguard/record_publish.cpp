#include "spank/faultguard/record_publish.hpp"

#include <chrono>
#include <random>
#include <thread>

#include "common/record/codec.hpp"
#include "common/record/keys.hpp"
#include "common/record/record.hpp"
#include "common/slurm/admin_comment.hpp"

namespace acme::faultguard {
namespace {

using Clock = std::chrono::steady_clock;

// The record in the field, or nullopt (none, or damaged: a damaged token is replaced).
std::optional<nlohmann::json> current_record(const std::string& field) {
    std::string error;
    const auto text = record::decode_token(field, error);
    if (!text) return std::nullopt;
    return record::parse_record(*text, error);
}

bool holds_part(const std::optional<nlohmann::json>& r, long long restart, const std::string& node,
                const nlohmann::json& part) {
    namespace key = record::key;
    return r && r->value(key::restart, -1LL) == restart && record::has_node(*r, node) &&
           (*r)[key::nodes][node].value(key::part::ts, -1.0) == part.value(key::part::ts, -2.0);
}

}  // namespace

PublishResult publish_node_part(const slurm::JobRow& row, long long restart, long long run_submit,
                                const std::vector<std::string>& expected, const std::string& node,
                                const nlohmann::json& part, double budget_s) {
    PublishResult result;
    const unsigned job_id = row.job_id;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(budget_s));
    std::mt19937 random(std::random_device{}());
    std::uniform_int_distribution<int> delay_ms(300, 1200);
    int seen = 0;
    while (seen < 2) {
        std::string error;
        long long row_submit = 0;
        const auto field = slurm::load_admin_comment(row, error, &row_submit);
        if (!field) {
            // slurmctld hands job records to slurmdbd through a queue: a short job (an array
            // task, often) can reach its epilog before its row does. Wait for it, within budget.
            if (error.find("has no job") != std::string::npos && Clock::now() + std::chrono::milliseconds(1200) < deadline) {
                std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
                continue;
            }
            result.no_accounting = error.find("not slurmdbd") != std::string::npos;
            result.error = error;
            return result;
        }
        const auto existing = current_record(*field);
        // The job was requeued since this run ended: its newest row is the next run's.
        if ((run_submit > 0 && row_submit > run_submit) ||
            (existing && existing->value("job", -1LL) == static_cast<long long>(job_id) &&
             existing->value("restart", -1LL) > restart)) {
            result.error = "the job was requeued before this run's part was written; not put on the next run's row";
            return result;
        }
        if (holds_part(existing, restart, node, part)) {
            ++seen;
        } else {
            seen = 0;
            auto merged = record::merge_node_part(existing, job_id, restart, expected, node, part);
            const std::string value = record::with_token(*field, record::encode_within_budget(std::move(merged)));
            if (auto err = slurm::store_admin_comment(row, value); !err.empty()) {
                result.error = err;
                return result;
            }
            ++result.writes;
            result.bytes = value.size();
        }
        if (seen >= 2) break;
        if (Clock::now() + std::chrono::milliseconds(1200) > deadline) {
            result.error = seen > 0 ? "" : "its part was overwritten by other nodes' writes until the time ran out";
            result.published = seen > 0;
            return result;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    }
    result.published = true;
    return result;
}

}  // namespace acme::faultguard
