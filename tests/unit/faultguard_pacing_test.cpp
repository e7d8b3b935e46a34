#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "spank/faultguard/core/publish_pacing.hpp"

using namespace acme::faultguard;

namespace {
std::vector<std::string> nodes(int n) {
    std::vector<std::string> out;
    for (int i = 1; i <= n; ++i) out.push_back(fmt::format("n{}", i));
    return out;
}
}  // namespace

TEST_CASE("a one-node job writes at once, within the base budget and one turn") {
    const auto p = publish_pacing({"n1"}, "n1", 40, 60);
    CHECK(p.first_delay_s == 0);
    CHECK(p.turn_s == doctest::Approx(kWriteSlotSeconds));
    CHECK(p.retry_spread_s == doctest::Approx(0.9));
    CHECK(p.budget_s == doctest::Approx(40 + 3 * kWriteSlotSeconds));
    // Its job's end known or not: an admin's requeue gives the next run a row moments later.
    const auto known = publish_pacing({"n1"}, "n1", 40, 60, 0.5);
    CHECK(known.first_delay_s == 0);
    CHECK(known.budget_s == doctest::Approx(p.budget_s));
}

TEST_CASE("the nodes of a 128-node job take turns a write slot apart, in node-list order") {
    const auto all = nodes(128);
    CHECK(publish_pacing(all, "n1", 40, 60).first_delay_s == 0);
    CHECK(publish_pacing(all, "n2", 40, 60).first_delay_s == doctest::Approx(kWriteSlotSeconds));
    const auto last = publish_pacing(all, "n128", 40, 60);
    CHECK(last.first_delay_s == doctest::Approx(127 * kWriteSlotSeconds));
    CHECK(last.turn_s == doctest::Approx(128 * kWriteSlotSeconds));
    // Rewrites spread over half the job's turn; the budget holds three turns past the base.
    CHECK(last.retry_spread_s == doctest::Approx(64 * kWriteSlotSeconds));
    CHECK(last.budget_s == doctest::Approx(40 + 3 * 128 * kWriteSlotSeconds));
    std::set<long> starts;
    for (const auto& n : all) starts.insert(std::lround(publish_pacing(all, n, 40, 60).first_delay_s * 1000));
    CHECK(starts.size() == all.size());
}

TEST_CASE("an epilog's own publish stays within its cap whatever the job's size") {
    for (const int n : {1, 16, 512, 4096}) {
        const auto all = nodes(n);
        const auto p = publish_pacing(all, all.back(), 4, 1.5);
        CAPTURE(n);
        CHECK(p.first_delay_s < 1.5);
        CHECK(p.turn_s <= doctest::Approx(1.5));
        CHECK(p.budget_s <= doctest::Approx(4 + 3 * 1.5));
    }
    // The detached publisher's turn is capped too: a minute, at 4096 nodes.
    CHECK(publish_pacing(nodes(4096), "n4096", 40, 60).turn_s == doctest::Approx(60));
}

TEST_CASE("a node missing from the job's list goes first, and an empty list is one node") {
    CHECK(publish_pacing(nodes(8), "gpu99", 40, 60).first_delay_s == 0);
    const auto p = publish_pacing({}, "n1", 40, 60);
    CHECK(p.first_delay_s == 0);
    CHECK(p.turn_s == doctest::Approx(kWriteSlotSeconds));
}

TEST_CASE("with the job's end known, every node counts its turn from it, not from its own epilog") {
    const auto all = nodes(16);
    // n5's turn is 3 s (the settling) plus 4 slots after the end; its epilog ended 1 s after it.
    const auto early = publish_pacing(all, "n5", 40, 60, 1.0);
    CHECK(early.first_delay_s == doctest::Approx(kSettleSeconds + 4 * kWriteSlotSeconds - 1.0));
    CHECK(early.turns_over_s == doctest::Approx(kSettleSeconds + 16 * kWriteSlotSeconds - 1.0));
    CHECK(early.budget_s == doctest::Approx(40 + 3 * 16 * kWriteSlotSeconds + kSettleSeconds));
    // A node whose epilog ended after its turn writes at once.
    const auto late = publish_pacing(all, "n5", 40, 60, 30.0);
    CHECK(late.first_delay_s == 0);
    CHECK(late.turns_over_s == 0);
    // Unknown end: the turns count from now.
    CHECK(publish_pacing(all, "n5", 40, 60).first_delay_s == doctest::Approx(4 * kWriteSlotSeconds));
}

TEST_CASE("a publisher's hard stop leaves a read and a write begun at its budget's end their whole time") {
    // tests/bench/record-scale 256: budget 223 s, and the stop was 20 s past it, shorter than
    // one libslurm call to a busy slurmdbd (MessageTimeout + 35 s).
    for (const int n : {1, 32, 256, 4096}) {
        const auto all = nodes(n);
        const auto p = publish_pacing(all, all.back(), 40, 60, 5);
        CAPTURE(n);
        CHECK(publish_hard_stop_s(p) >= p.budget_s + 3 * kSlurmdbdCallSeconds);
        CHECK(publish_hard_stop_s(p) < p.budget_s + 3 * kSlurmdbdCallSeconds + 1);
    }
}

TEST_CASE("a requeued job's end that slurmctld puts ahead (backfill's guess at the next run) is capped at now") {
    const double now = 1'796'165'100;
    // While an admin's requeue completes, slurmctld's end time is the next run's, up to an hour on.
    CHECK(pacing_end(now + 3600, now) == now);
    CHECK(pacing_end(now - 4, now) == now - 4);
    CHECK(pacing_end(0, now) == 0);
    // Capped by each node's epilog (seconds after the run's end), the nodes of a 32-node job take
    // their turns on one clock, a slot apart, though their publishers start 1.5 s apart; the
    // guess, a future end, gave each publisher its own clock (its start).
    const auto all = nodes(32);
    const double end = pacing_end(now + 3600, now);
    const double n1_start = now + 0.5, n32_start = now + 2.0;
    const auto n1 = publish_pacing(all, "n1", 40, 60, n1_start - end);
    const auto n32 = publish_pacing(all, "n32", 40, 60, n32_start - end);
    CHECK(n1_start + n1.first_delay_s == doctest::Approx(end + kSettleSeconds));
    CHECK(n32_start + n32.first_delay_s == doctest::Approx(end + kSettleSeconds + 31 * kWriteSlotSeconds));
    CHECK(n32_start + n32.turns_over_s == doctest::Approx(n1_start + n1.turns_over_s));
}
