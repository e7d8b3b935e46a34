// Goodput of a job (issue 39): a requeue chain read as one job, its wall time split into the
// pieces gpuacct(1) defines, and "unknown" where the records cannot tell.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "acct/gpuacct/core/goodput.hpp"
#include "acct/gpuacct/core/goodput_runs.hpp"
#include "common/record/codec.hpp"

using namespace acme;
using acct::GoodputRun;

namespace {

constexpr double T = 1793491200;  // 2026-11-01T00:00:00Z
constexpr double M = 60;

GoodputRun run(double submit, double start, double end, int gpus = 4, std::optional<int> idle = 0) {
    GoodputRun r;
    r.submit = submit;
    r.start = start;
    r.end = end;
    r.gpus = gpus;
    r.idle_gpus = idle;
    return r;
}

}  // namespace

TEST_CASE("goodput: a job that ran once without trouble kept all its running time") {
    const std::vector<GoodputRun> runs{run(T, T + 2 * M, T + 62 * M)};
    const auto g = acct::compute_goodput(runs, T + 100 * M);
    CHECK(g.wall_s == 62 * M);
    CHECK(*g.queued_s == 2 * M);
    CHECK(*g.kept_s == 60 * M);
    CHECK(*g.lost_s == 0);
    CHECK(*g.recovery_s == 0);
    CHECK(*g.ettr == doctest::Approx(60.0 / 62));
    CHECK(g.unknown.empty());
}

TEST_CASE("goodput: a requeue chain resumed from a checkpoint redoes the work since it, and waits in recovery") {
    // Run 0: queued 1 min, ran 30 min, checkpoint written at minute 21, failed at 31.
    // Run 1: started 5 min after the fault from that checkpoint, ran 20 min to the end.
    auto first = run(T, T + 1 * M, T + 31 * M);
    first.failed = true;
    first.category = "infrastructure";
    auto second = run(T + 31 * M, T + 36 * M, T + 56 * M);
    second.resumed_from = "/ckpt/step-200";
    second.resumed_ckpt_ts = T + 21 * M;
    const std::vector<GoodputRun> runs{first, second};
    const auto g = acct::compute_goodput(runs, T + 100 * M);
    CHECK(g.runs == 2);
    CHECK(g.failures == 1);
    CHECK(g.wall_s == 56 * M);
    CHECK(*g.queued_s == 1 * M);
    CHECK(*g.lost_s == 10 * M);
    CHECK(*g.recovery_s == 5 * M);
    CHECK(*g.kept_s == 40 * M);
    CHECK(*g.ettr == doctest::Approx(40.0 / 56));
    CHECK(*g.queued_s + *g.kept_s + *g.lost_s + *g.recovery_s + *g.stalled_s + *g.idle_s == doctest::Approx(g.wall_s));
}

TEST_CASE("goodput: a fresh start after a fault redoes the whole first run") {
    auto first = run(T, T, T + 30 * M);
    first.failed = true;
    auto second = run(T + 30 * M, T + 32 * M, T + 62 * M);
    second.resumed_from = "";
    const std::vector<GoodputRun> runs{first, second};
    const auto g = acct::compute_goodput(runs, T + 100 * M);
    CHECK(*g.lost_s == 30 * M);
    CHECK(*g.kept_s == 30 * M);
    CHECK(*g.recovery_s == 2 * M);
}

TEST_CASE("goodput: a stalled run's window from its last progress is stalled, not kept nor lost") {
    auto first = run(T, T, T + 40 * M);
    first.failed = true;
    first.stall_since = T + 30 * M;  // no progress for the last 10 minutes: verdict, grace, cancel
    auto second = run(T + 40 * M, T + 41 * M, T + 61 * M);
    second.resumed_from = "/ckpt/step-9";
    second.resumed_ckpt_ts = T + 25 * M;
    const std::vector<GoodputRun> runs{first, second};
    const auto g = acct::compute_goodput(runs, T + 100 * M);
    CHECK(*g.stalled_s == 10 * M);
    CHECK(*g.lost_s == 5 * M);  // checkpoint to the last progress
    CHECK(*g.kept_s == 45 * M);
    CHECK(*g.recovery_s == 1 * M);
}

TEST_CASE("goodput: idle GPUs take their share of the kept time") {
    const std::vector<GoodputRun> runs{run(T, T, T + 40 * M, 4, 1)};
    const auto g = acct::compute_goodput(runs, T + 100 * M);
    CHECK(*g.idle_s == 10 * M);
    CHECK(*g.kept_s == 30 * M);
}

TEST_CASE("goodput: what the records do not hold is unknown, never 0") {
    SUBCASE("no checkpoint known after a fault: work redone, kept and ETTR unknown") {
        auto first = run(T, T, T + 30 * M);
        first.failed = true;
        const std::vector<GoodputRun> runs{first, run(T + 30 * M, T + 32 * M, T + 62 * M)};
        const auto g = acct::compute_goodput(runs, T + 100 * M);
        CHECK_FALSE(g.lost_s);
        CHECK_FALSE(g.kept_s);
        CHECK_FALSE(g.ettr);
        CHECK(*g.recovery_s == 2 * M);
        REQUIRE(g.unknown.size() == 1);
        CHECK(g.unknown[0].find("run 1 does not say which checkpoint") != std::string::npos);
        const auto text = acct::render_goodput(7, g);
        CHECK(text.find("ETTR             unknown") != std::string::npos);
        CHECK(text.find("lost (redone)    unknown") != std::string::npos);
        CHECK(acct::goodput_json(g)["lost_s"].is_null());
    }
    SUBCASE("no telemetry: idle unknown, and said") {
        const std::vector<GoodputRun> runs{run(T, T, T + 40 * M, 4, std::nullopt)};
        const auto g = acct::compute_goodput(runs, T + 100 * M);
        CHECK_FALSE(g.idle_s);
        CHECK(*g.kept_s == 40 * M);
        CHECK(g.unknown.at(0).find("no GPU telemetry") != std::string::npos);
    }
}

TEST_CASE("goodput: a job still running ends now") {
    const std::vector<GoodputRun> runs{run(T, T + M, 0)};
    const auto g = acct::compute_goodput(runs, T + 11 * M);
    CHECK(g.wall_s == 11 * M);
    CHECK(*g.kept_s == 10 * M);
}

TEST_CASE("goodput runs: slurmdbd's rows of a requeue chain and their records") {
    const auto token = [](const nlohmann::json& j) { return record::encode_token(j.dump()); };
    slurm::AccountedRun a;
    a.job_id = 42;
    a.db_index = 7;
    a.state = "REQUEUED";
    a.submit = T;
    a.start = T + M;
    a.end = T + 31 * M;
    a.gpus = 2;
    a.admin_comment = "note " + token({{"v", 1}, {"job", 42}, {"restart", 0}, {"expected", {"n1"}},
                                       {"nodes", {{"n1", {{"gpus", {{{"id", 0}, {"verdict", "ok"}}, {{"id", 1}, {"verdict", "idle"}}}},
                                                          {"resumed_from", ""},
                                                          {"diagnosis", {{"category", "infrastructure"}, {"reason", "gpu_lost"}}}}}}}});
    slurm::AccountedRun b = a;
    b.db_index = 9;
    b.state = "COMPLETED";
    b.submit = T + 31 * M;
    b.start = T + 36 * M;
    b.end = T + 56 * M;
    b.admin_comment = token({{"v", 1}, {"job", 42}, {"restart", 1}, {"expected", {"n1"}},
                             {"nodes", {{"n1", {{"resumed_from", "/ckpt/step-2"}, {"resumed_ckpt_ts", T + 21 * M}}}}}});
    slurm::AccountedRun broken = a;
    broken.job_id = 43;
    broken.admin_comment = "ACME1:!!!";
    slurm::AccountedRun edited = a;  // a record of the right shape, a diagnosis of the wrong one
    edited.job_id = 44;
    edited.state = "COMPLETED";
    edited.admin_comment = token({{"v", 1}, {"job", 44}, {"restart", 0}, {"expected", {"n1"}},
                                  {"nodes", {{"n1", {{"diagnosis", {{"category", 5}}}, {"resumed_from", ""}}}}}});
    std::vector<std::string> warnings;
    const std::vector<slurm::AccountedRun> rows{b, broken, a, edited};
    const auto jobs = acct::goodput_runs(rows, warnings);
    REQUIRE(jobs.count(42) == 1);
    const auto& runs = jobs.at(42);
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].failed);
    CHECK(runs[0].category == "infrastructure");
    CHECK(runs[0].idle_gpus == 1);
    CHECK(runs[0].gpus == 2);
    CHECK_FALSE(runs[1].failed);
    CHECK(runs[1].resumed_from == "/ckpt/step-2");
    CHECK(runs[1].resumed_ckpt_ts == T + 21 * M);
    CHECK_FALSE(runs[1].idle_gpus);  // no telemetry in its record
    REQUIRE(warnings.size() == 2);
    CHECK(warnings[0].starts_with("job 43: "));
    CHECK(warnings[1].starts_with("job 44: its ACME1 record has a field of the wrong type"));
    REQUIRE(jobs.at(44).size() == 1);
    CHECK_FALSE(jobs.at(44)[0].failed);  // slurmdbd's COMPLETED, nothing taken from the edited record
    CHECK_FALSE(jobs.at(44)[0].resumed_from);
    const auto g = acct::compute_goodput(runs, T + 100 * M);
    CHECK(*g.lost_s == 10 * M);
    CHECK(*g.recovery_s == 5 * M);
}

TEST_CASE("goodput of a cluster: GPU-hours handed out, where they went, and the GPU time lost by cause") {
    // Job A (4 GPUs): queued 1 min, ran 30, checkpoint at 21, XID at 31; recovered in 5, ran 20.
    auto a0 = run(T, T + 1 * M, T + 31 * M);
    a0.failed = true;
    a0.category = "infrastructure";
    a0.reason = "gpu_lost";
    auto a1 = run(T + 31 * M, T + 36 * M, T + 56 * M);
    a1.resumed_from = "/ckpt/step-200";
    a1.resumed_ckpt_ts = T + 21 * M;
    // Job B (2 GPUs): stalled for its last 10 of 40 minutes, resumed fresh, then ran 20.
    auto b0 = run(T, T, T + 40 * M, 2);
    b0.failed = true;
    b0.stall_since = T + 30 * M;
    auto b1 = run(T + 40 * M, T + 40 * M, T + 60 * M, 2);
    b1.resumed_from = "";
    // Job C (1 GPU): failed with no checkpoint known: not split.
    auto c0 = run(T, T, T + 60 * M, 1);
    c0.failed = true;
    c0.category = "script";
    c0.reason = "python_error";
    acct::ClusterGoodputSum sum;
    for (const auto& runs : {std::vector<GoodputRun>{a0, a1}, std::vector<GoodputRun>{b0, b1}, std::vector<GoodputRun>{c0}})
        sum.add(acct::compute_goodput(runs, T + 100 * M));
    const auto c = sum.result();
    CHECK(c.jobs == 3);
    CHECK(c.runs == 5);
    CHECK(c.failures == 3);
    CHECK(c.handed_out_gpu_h == doctest::Approx((4 * 50 + 2 * 60 + 1 * 60) / 60.0));
    CHECK(c.kept_gpu_h == doctest::Approx((4 * 40 + 2 * 20) / 60.0));
    CHECK(c.lost_gpu_h == doctest::Approx((4 * 10 + 2 * 30) / 60.0));  // B's fresh start redid its 30 minutes before the stall
    CHECK(c.stalled_gpu_h == doctest::Approx(2 * 10 / 60.0));
    CHECK(c.unsplit_gpu_h == doctest::Approx(1.0));
    CHECK(c.kept_gpu_h + c.lost_gpu_h + c.stalled_gpu_h + c.idle_gpu_h + c.unsplit_gpu_h == doctest::Approx(c.handed_out_gpu_h));
    REQUIRE(c.causes.size() == 2);
    CHECK(c.causes[0].category == "unknown");  // B's stall, no diagnosis: 80 GPU-minutes
    CHECK(c.causes[0].reason == "stall");
    CHECK((c.causes[0].lost_s + c.causes[0].stalled_s) == doctest::Approx(2 * 40 * M));
    CHECK(c.causes[1].category == "infrastructure");
    CHECK(c.causes[1].lost_s == doctest::Approx(4 * 10 * M));
    const auto text = acct::render_cluster_goodput(c);
    CHECK(text.find("infrastructure  gpu_lost") != std::string::npos);
    CHECK(acct::cluster_goodput_json(c)["causes"][1]["lost_gpu_h"] == doctest::Approx(4 * 10 / 60.0));
}

TEST_CASE("slurmdbd's rows grouped a job at a time: a requeue chain's runs together, oldest first, however slurmdbd orders them") {
    // Newest run first within a job (slurmdbd's "time_submit desc"), and another cluster's rows
    // after the first's (-M): job 7's runs split by job 9's and 8's.
    struct Row {
        std::uint32_t job;
        std::uint64_t index;
    };
    std::vector<Row> rows{{9, 30}, {7, 12}, {8, 20}, {7, 10}, {9, 31}, {7, 11}};
    std::vector<std::vector<std::uint64_t>> groups;
    slurm::for_each_job_group(
        rows.begin(), rows.end(), [](const Row& r) { return r.job; }, [](const Row& r) { return r.index; },
        [&](auto first, auto last) {
            groups.emplace_back();
            for (auto it = first; it != last; ++it) {
                CHECK(it->job == first->job);
                groups.back().push_back(it->index);
            }
        });
    const std::vector<std::vector<std::uint64_t>> want{{10, 11, 12}, {20}, {30, 31}};
    CHECK(groups == want);
    std::vector<Row> none;
    int calls = 0;
    slurm::for_each_job_group(
        none.begin(), none.end(), [](const Row& r) { return r.job; }, [](const Row& r) { return r.index; },
        [&](auto, auto) { ++calls; });
    CHECK(calls == 0);
}

TEST_CASE("gpuacct goodput summed a job at a time gives what the sum over every row gives") {
    auto row = [](std::uint32_t id, std::uint64_t index, double submit, double start, double end, const char* state,
                  const char* user) {
        slurm::AccountedRun r;
        r.job_id = id;
        r.db_index = index;
        r.submit = submit;
        r.start = start;
        r.end = end;
        r.state = state;
        r.gpus = 4;
        r.user = user;
        return r;
    };
    const std::vector<slurm::AccountedRun> rows{row(5, 3, T + 31 * M, T + 36 * M, T + 56 * M, "COMPLETED", "ann"),
                                                row(6, 2, T, T, T + 10 * M, "COMPLETED", "bob"),
                                                row(5, 1, T, T + M, T + 31 * M, "REQUEUED", "ann"),
                                                row(4, 0, T, T + 2 * M, T + 4 * M, "FAILED", "ann")};
    std::vector<std::string> warnings;
    const auto whole = acct::cluster_goodput(rows, {{"ann"}, {}, {}}, T + 100 * M, warnings);
    acct::ClusterGoodputStream stream({{"ann"}, {}, {}}, T + 100 * M);
    std::vector<slurm::AccountedRun> copy = rows;
    slurm::for_each_job_group(
        copy.begin(), copy.end(), [](const auto& r) { return r.job_id; }, [](const auto& r) { return r.db_index; },
        [&](auto first, auto last) { stream.add_job({&*first, static_cast<size_t>(last - first)}, warnings); });
    const auto streamed = stream.result();
    CHECK(whole.jobs == 2);  // bob's job left out by -u ann
    CHECK(streamed.jobs == whole.jobs);
    CHECK(streamed.runs == whole.runs);
    CHECK(streamed.failures == whole.failures);
    CHECK(acct::cluster_goodput_json(streamed).dump() == acct::cluster_goodput_json(whole).dump());
}
