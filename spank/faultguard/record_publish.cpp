#include "spank/faultguard/record_publish.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "common/record/codec.hpp"
#include "common/record/keys.hpp"
#include "common/record/record.hpp"
#include "common/slurm/admin_comment.hpp"

namespace acme::faultguard {
namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.0, s)));
}

// Sleeps `s` seconds, or until the deadline when that comes first.
void sleep_within(double s, Clock::time_point deadline) {
    const auto until = std::min(Clock::now() + seconds(s), deadline);
    if (until > Clock::now()) std::this_thread::sleep_until(until);
}

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

PublishResult publish_node_part(const slurm::JobRow& row, long long restart, const slurm::RunSelector& run,
                                const std::vector<std::string>& expected, const std::string& node,
                                const nlohmann::json& part, const PublishPacing& pacing) {
    PublishResult result;
    const unsigned job_id = row.job_id;
    const auto start = Clock::now();
    const auto deadline = start + seconds(pacing.budget_s);
    // Every node has had its turn by then, and its write has reached slurmdbd a little later.
    const auto turns_over = start + seconds(pacing.turns_over_s + 1.5);
    std::mt19937 random(std::random_device{}());
    std::uniform_real_distribution<double> check_delay(0.3, 1.2);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    int undone = 0;  // times another node's write undid this node's part

    sleep_within(pacing.first_delay_s, deadline);
    using Kind = slurm::AdminCommentError::Kind;
    slurm::AdminCommentError error;
    auto session = slurm::AdminCommentSession::open(error);
    if (!session) {
        result.no_accounting = error.kind == Kind::not_slurmdbd;
        result.unreachable = error.kind == Kind::unreachable;
        result.error = error.text;
        return result;
    }
    int seen = 0;
    int late_checks = 0;  // the looks taken after the part was seen twice (at most 2)
    bool write_now = true;  // the first read after this node's turn writes at once
    int failures = 0;       // slurmdbd's refusals in a row
    // A slurmdbd busy with hundreds of nodes' publishers at once refuses some of them (EAGAIN:
    // 31 of 256 parts were dropped so in tests/bench/record-scale). That is no answer about the
    // part: try again on a fresh connection after a growing, random pause, and when the time is
    // up keep the part in the outbox for the node's next epilog, never drop it.
    const auto try_again = [&](const std::string& why) {
        ++failures;
        const double pause = std::min(8.0, 0.25 * (1 << std::min(failures, 5))) * (0.5 + unit(random));
        if (Clock::now() + seconds(pause + 1.0) >= deadline) {
            result.unreachable = true;
            result.error = why;
            return false;
        }
        sleep_within(pause, deadline);
        session.reset();
        slurm::AdminCommentError reopen;
        session = slurm::AdminCommentSession::open(reopen);
        if (!session) {
            result.unreachable = true;
            result.error = reopen.text;
            return false;
        }
        return true;
    };
    const bool run_named = run.submit > 0 || run.start > 0 || run.before > 0;
    for (;;) {
        slurm::RunRow run_row;
        error = {};
        const auto read_at = Clock::now();
        const auto field = session->load(row, run, error, &run_row);
        if (!field && error.kind == Kind::failed) {
            if (try_again(error.text)) continue;
            return result;
        }
        if (!field) {
            // slurmctld hands job records to slurmdbd through a queue: a short job (an array
            // task, often) can reach its epilog before its row does. Wait for it, within budget.
            if ((error.kind == Kind::no_job || error.kind == Kind::superseded) &&
                Clock::now() + std::chrono::milliseconds(1200) < deadline) {
                sleep_within(check_delay(random), deadline);
                continue;
            }
            // No row yet when the time is up: slurmctld's queue to slurmdbd is long (slurmdbd
            // was down): a later try may find it. unknown_run: none will (the line says why).
            result.unreachable = error.kind == Kind::no_job || error.kind == Kind::superseded;
            result.error = error.text;
            return result;
        }
        const auto existing = current_record(*field);
        // The run's own row is named (a requeued job's next run has its own): only a writer that
        // could not name it takes the newest row, and not when that holds a later run's record.
        if (!run_named && existing && existing->value("job", -1LL) == static_cast<long long>(job_id) &&
            existing->value("restart", -1LL) > restart) {
            result.error = "the job was requeued before this run's part was written, and slurmctld no longer knew the run to "
                           "find its own row; not put on the next run's row";
            return result;
        }
        double wait = check_delay(random);
        if (holds_part(existing, restart, node, part)) {
            ++seen;
            if (seen >= 2) {
                // Seen twice. A write that read before this part was there can still land as
                // late as slurmdbd is slow, and the rewrites of undone parts come after the
                // turns: look again once the turns are over and once the rewrites' widest
                // spread is, each a margin later (twice the slowest write this node saw).
                // A job of one node has no other writer: nothing can undo its part.
                if (expected.size() <= 1) break;
                const auto margin = seconds(std::max(1.5, 2 * result.slowest_write_s));
                const auto next = late_checks == 0   ? turns_over + margin
                                  : late_checks == 1 ? turns_over + seconds(std::max(pacing.retry_spread_s, pacing.turn_s)) + margin
                                                     : Clock::time_point::max();
                if (next == Clock::time_point::max() || next >= deadline) break;
                ++late_checks;
                if (next > Clock::now()) wait = std::chrono::duration<double>(next - Clock::now()).count();
            }
        } else if (!write_now) {
            // Undone by another node's write: write again on a fresh read once every node's
            // turn is over (not into the others' turns), at a random time within the job's
            // spread, so that the nodes rewriting now do not meet again.
            seen = 0;
            late_checks = 0;
            write_now = true;
            // Each undo doubles the spread (up to the job's turn): when slurmdbd is slower
            // than the slots assumed, the rewrites thin out instead of meeting again.
            const double spread = std::min(pacing.retry_spread_s * (1 << std::min(undone, 6)),
                                           std::max(pacing.retry_spread_s, pacing.turn_s));
            ++undone;
            if (Clock::now() < turns_over) ++result.undone_in_turns;
            else ++result.undone_after;
            wait = std::max(0.0, std::chrono::duration<double>(turns_over - Clock::now()).count()) + 0.3 + spread * unit(random);
        } else {
            auto merged = record::merge_node_part(existing, job_id, restart, expected, node, part);
            const std::string value = record::with_token(*field, record::encode_within_budget(std::move(merged)));
            if (const auto err = session->store(row, run_row, value); err.kind != Kind::none) {
                // no_job: the row changed between the read and the write; read it again.
                if ((err.kind == Kind::failed || err.kind == Kind::no_job) && try_again(err.text)) continue;
                if (!result.unreachable) result.error = err.text;
                return result;
            }
            ++result.writes;
            result.bytes = value.size();
            result.slowest_write_s = std::max(result.slowest_write_s, std::chrono::duration<double>(Clock::now() - read_at).count());
            seen = 0;
            late_checks = 0;
            write_now = false;
        }
        failures = 0;
        if (Clock::now() + seconds(wait) > deadline) break;
        sleep_within(wait, deadline);
    }
    // Out of time with the part seen at the last read: it is there as far as anyone can tell.
    // Not seen (undone by other nodes' writes, or written too late to read back): the part is
    // not lost, a later try merges it in (record_outbox.cpp keeps it).
    result.published = seen > 0;
    if (!result.published) {
        result.out_of_time = true;
        result.error = result.writes > 0 ? "its part was overwritten by other nodes' writes until the time ran out"
                                         : "the time ran out before its part was written";
    }
    return result;
}

std::string publish_result_line(long long job, const std::string& node, const PublishResult& r) {
    if (r.published) {
        const int undone = r.undone_in_turns + r.undone_after;
        const std::string why = undone == 0 ? std::string()
                                            : fmt::format(" (undone {} time{} during the turns, {} after)", r.undone_in_turns,
                                                          r.undone_in_turns == 1 ? "" : "s", r.undone_after);
        return fmt::format("job {} on {}: record in AdminComment ({} bytes, {} write{}{}, slowest {:.0f} ms)\n", job, node,
                           r.bytes, r.writes, r.writes == 1 ? "" : "s", why, r.slowest_write_s * 1000);
    }
    if (r.no_accounting) return {};
    return fmt::format("job {} on {}: record not in AdminComment: {}\n", job, node, r.error);
}

}  // namespace acme::faultguard
