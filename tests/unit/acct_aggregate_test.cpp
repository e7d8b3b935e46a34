#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "acct/gpuacct/core/aggregate.hpp"
#include "acct/gpuacct/core/spool_rows.hpp"
#include "tests/unit/acct_spool_fixture.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;
using acme::test::add_diagnosis;
using acme::test::add_event;
using acme::test::add_gpu;
using acme::test::add_job;

namespace {

constexpr double T = 1793491200;  // 2026-11-01

acct::SpoolSet read_all(const test::TempDir& dir) {
    acct::ReadOptions o;
    o.summaries = o.diagnoses = o.events = true;
    return acct::read_spools(dir.path().string(), o);
}

}  // namespace

TEST_CASE("a two-node job is one job with both nodes' GPUs") {
    test::TempDir dir;
    {
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        auto n2 = store::open_spool(store::spool_path(dir.path().string(), "n2"));
        add_job(n1, {.id = 7, .node = "n1", .gpus = "0,1", .gpus_total = 4, .num_nodes = 2, .submit = T, .start = T + 60,
                     .end = T + 3660, .batch_host = "n1"});
        add_job(n2, {.id = 7, .node = "n2", .gpus = "2,3", .gpus_total = 4, .num_nodes = 2, .submit = T, .start = T + 60,
                     .end = T + 3660, .batch_host = "n1"});
        add_gpu(n1, 7, "n1", 0, 90, 100, 40LL << 30, "ok");
        add_gpu(n1, 7, "n1", 1, 80, 95, 30LL << 30, "ok");
        add_gpu(n2, 7, "n2", 2, 10, 20, 1LL << 30, "low-util");
        add_gpu(n2, 7, "n2", 3, 0, 0, 0, "idle");
    }
    const auto set = read_all(dir);
    REQUIRE(set.jobs.size() == 1);
    CHECK(set.jobs[0].nodes.size() == 2);
    CHECK(acct::job_gpus(set.jobs[0]) == 4);
    CHECK(acct::job_gpu_hours(set.jobs[0], T) == doctest::Approx(4.0));
    const auto use = acct::gpu_use_by_job(set.summaries).at(7);
    CHECK(use.gpus == 4);
    CHECK(*use.util_avg == doctest::Approx(45.0));
    CHECK(*use.util_max == doctest::Approx(100.0));
    CHECK(*use.mem_max == (40LL << 30));
    CHECK(*use.energy_j == doctest::Approx(4 * 3600.0));
    CHECK(use.verdict == "low-util");
}

TEST_CASE("a corrupt spool is reported and skipped; the others are read") {
    test::TempDir dir;
    {
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        add_job(n1, {.id = 1, .node = "n1", .gpus = "0", .gpus_total = 1, .start = T, .end = T + 10});
    }
    std::ofstream(dir.file("n2.db")) << "this is not an SQLite file, just some text that is long enough";
    const auto set = read_all(dir);
    CHECK(set.jobs.size() == 1);
    REQUIRE(set.problems.size() == 1);
    CHECK(set.problems[0].rfind("n2.db: ", 0) == 0);
    CHECK(set.nodes == std::vector<std::string>{"n1"});
    CHECK_THROWS_AS(acct::read_spools(dir.file("missing"), {}), std::runtime_error);
}

TEST_CASE("a FIFO or a directory named like a spool is reported and skipped, never opened") {
    test::TempDir dir;
    {
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        add_job(n1, {.id = 1, .node = "n1", .gpus = "0", .gpus_total = 1, .start = T, .end = T + 10});
    }
    // Opening a FIFO with no writer blocks: before the check, this read hung.
    REQUIRE(mkfifo(dir.file("x.db").c_str(), 0600) == 0);
    std::filesystem::create_directory(dir.file("y.db"));
    const auto set = read_all(dir);
    CHECK(set.jobs.size() == 1);
    CHECK(set.nodes == std::vector<std::string>{"n1"});
    CHECK(set.problems == std::vector<std::string>{"x.db: not a regular file", "y.db: not a regular file"});
}

TEST_CASE("the period keeps jobs that overlap it, as sacct's -S/-E") {
    test::TempDir dir;
    {
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        add_job(n1, {.id = 1, .node = "n1", .start = T - 7200, .end = T - 3600});  // before
        add_job(n1, {.id = 2, .node = "n1", .start = T - 60, .end = T + 60});      // across the start
        add_job(n1, {.id = 3, .node = "n1", .start = T + 100, .end = 0});         // still running
        add_job(n1, {.id = 4, .node = "n1", .start = T + 9000, .end = T + 9100}); // after
    }
    acct::ReadOptions o;
    o.start = T;
    o.end = T + 3600;
    const auto set = acct::read_spools(dir.path().string(), o);
    REQUIRE(set.jobs.size() == 2);
    CHECK(set.jobs[0].job_id == 2);
    CHECK(set.jobs[1].job_id == 3);
    o = {};
    o.job_ids = {4, 1};
    CHECK(acct::read_spools(dir.path().string(), o).jobs.size() == 2);
}

TEST_CASE("failures are grouped by reason in Table 3 order with their GPU time and time to failure") {
    test::TempDir dir;
    {
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        // script error after 2 minutes on 1 GPU, twice; NVLink after 10 hours on 8 GPUs; one failed job without diagnosis
        add_job(n1, {.id = 1, .node = "n1", .state = "FAILED", .gpus_total = 1, .start = T, .end = T + 120});
        add_job(n1, {.id = 2, .node = "n1", .state = "FAILED", .gpus_total = 1, .start = T, .end = T + 240});
        add_job(n1, {.id = 3, .node = "n1", .state = "FAILED", .gpus_total = 8, .start = T, .end = T + 36000});
        add_job(n1, {.id = 4, .node = "n1", .state = "NODE_FAIL", .gpus_total = 2, .start = T, .end = T + 3600});
        add_job(n1, {.id = 5, .node = "n1", .state = "COMPLETED", .gpus_total = 2, .start = T, .end = T + 3600});
        add_diagnosis(n1, 1, 0, "n1", T + 120, "script", "type_error");
        add_diagnosis(n1, 2, 0, "n1", T + 240, "script", "type_error");
        add_diagnosis(n1, 3, 0, "n1", T + 36000, "infrastructure", "nvlink_error");
    }
    const auto set = read_all(dir);
    const auto rows = acct::aggregate_failures(set.jobs, set.diagnoses, T + 99999);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].reason == "nvlink_error");
    CHECK(rows[0].gpu_hours == doctest::Approx(80.0));
    CHECK(rows[0].ttf_median_s == doctest::Approx(36000));
    CHECK(rows[1].reason == "type_error");
    CHECK(rows[1].num == 2);
    CHECK(rows[1].ttf_median_s == doctest::Approx(180));
    CHECK(rows[1].gpu_demand == doctest::Approx(1.0));
    CHECK(rows[2].reason == "unknown");
    double pct = 0;
    for (const auto& r : rows) pct += r.gpu_time_pct;
    CHECK(pct == doctest::Approx(100.0));
}

TEST_CASE("a requeued job's earlier runs count as failures even when it completed") {
    test::TempDir dir;
    {
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        add_job(n1, {.id = 9, .node = "n1", .state = "COMPLETED", .gpus_total = 4, .restarts = 1, .submit = T,
                     .start = T + 5000, .end = T + 9000});
        add_diagnosis(n1, 9, 0, "n1", T + 3600, "infrastructure", "ecc_error");
    }
    const auto set = read_all(dir);
    const auto rows = acct::aggregate_failures(set.jobs, set.diagnoses, T + 99999);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].reason == "ecc_error");
    CHECK(rows[0].gpu_hours == doctest::Approx(4.0));
}

TEST_CASE("nodes: XID and ECC counts, and only their own infrastructure diagnoses blame them") {
    test::TempDir dir;
    {
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        auto n2 = store::open_spool(store::spool_path(dir.path().string(), "n2"));
        add_job(n1, {.id = 3, .node = "n1", .state = "FAILED", .gpus_total = 2, .num_nodes = 2, .start = T, .end = T + 60});
        add_job(n2, {.id = 3, .node = "n2", .state = "FAILED", .gpus_total = 2, .num_nodes = 2, .start = T, .end = T + 60});
        add_event(n2, 3, 1, T + 30, "xid", 79);
        add_event(n2, 3, 1, T + 31, "xid", 48);
        add_event(n2, 3, 1, T + 31, "ecc_dbe", 2);
        add_diagnosis(n1, 3, 0, "n1", T + 60, "framework", "runtime_error");
        add_diagnosis(n2, 3, 0, "n2", T + 60, "infrastructure", "gpu_lost");
    }
    const auto set = read_all(dir);
    const auto rows = acct::aggregate_nodes(set.nodes, set.jobs, set.diagnoses, set.events);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].node == "n1");
    CHECK(rows[0].xids == 0);
    CHECK(rows[0].failures == 1);
    CHECK(rows[0].infra_failures == 0);
    CHECK(rows[1].xids == 2);
    CHECK(rows[1].ecc_dbe == 2);
    CHECK(rows[1].infra_failures == 1);
}

TEST_CASE("summary: shares by type and state, medians, GPU-count buckets") {
    std::vector<acct::Job> jobs;
    auto job = [&](const char* type, const char* state, int gpus, double run, double queue) {
        acct::Job j;
        j.job_id = static_cast<long long>(jobs.size() + 1);
        j.job_type = type;
        j.state = state;
        j.gpus_total = gpus;
        j.submit = T;
        j.start = T + queue;
        j.end = T + queue + run;
        jobs.push_back(std::move(j));
    };
    job("pretrain", "COMPLETED", 256, 36000, 600);
    job("eval", "COMPLETED", 1, 60, 0);
    job("eval", "FAILED", 1, 120, 10);
    job("debug", "CANCELLED", 8, 3600, 0);
    acct::Job cpu;
    cpu.job_id = 99;
    cpu.start = T;
    cpu.end = T + 10;
    jobs.push_back(std::move(cpu));  // CPU-only: not part of the GPU characterization
    const auto rows = acct::aggregate_summary(jobs, T + 99999);
    auto find = [&](const char* dim, const char* value) {
        for (const auto& r : rows)
            if (r.dimension == dim && r.value == value) return r;
        FAIL("no row ", dim, " ", value);
        return acct::SummaryRow{};
    };
    CHECK(rows[0].dimension == "all");
    CHECK(find("all", "all").jobs == 4);
    CHECK(find("type", "eval").jobs == 2);
    CHECK(find("type", "eval").jobs_pct == doctest::Approx(50.0));
    CHECK(find("type", "eval").duration_median_s == doctest::Approx(90));
    CHECK(find("type", "sft").jobs == 0);
    CHECK(find("type", "pretrain").gpu_time_pct == doctest::Approx(100.0 * 2560 / (2560 + 1.0 / 60 + 2.0 / 60 + 8)));
    CHECK(find("state", "COMPLETED").jobs == 2);
    CHECK(find("gpus", "1").jobs == 2);
    CHECK(find("gpus", "5-8").jobs == 1);
    CHECK(find("gpus", "65-256").jobs == 1);
    CHECK(find("all", "all").gpus_median == doctest::Approx(4.5));
}

TEST_CASE("a requeued job's record is its final run's, whichever node wrote it last") {
    test::TempDir dir;
    {
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        auto n2 = store::open_spool(store::spool_path(dir.path().string(), "n2"));
        // n1 saw the second run complete; n2 saw the first run end in the requeue (PENDING again).
        add_job(n1, {.id = 11, .node = "n1", .gpus = "0,1", .state = "COMPLETED", .gpus_total = 2, .restarts = 1,
                     .start = T + 100, .end = T + 200});
        add_job(n2, {.id = 11, .node = "n2", .gpus = "0,1", .state = "PENDING", .gpus_total = 2, .restarts = 1,
                     .start = T + 100, .end = T + 3700});
    }
    const auto set = read_all(dir);
    REQUIRE(set.jobs.size() == 1);
    CHECK(set.jobs[0].state == "COMPLETED");
    CHECK(set.jobs[0].end == doctest::Approx(T + 200));
}

TEST_CASE("steps from task exits: worst task decides, batch and extern named as sacct names them") {
    std::vector<acct::TaskExit> exits = {
        {5, 0, "n1", T + 10, 0, 0}, {5, 0, "n2", T + 12, 3, 0}, {5, 0xfffffffbLL, "n1", T + 13, 3, 0},
        {5, 1, "n1", T + 20, 0, 9}, {5, 0xfffffffcLL, "n1", T + 14, 0, 0}};
    const auto by_job = acct::task_exits_by_job(exits);
    const auto steps = acct::job_steps(by_job.at(5));
    REQUIRE(steps.size() == 4);
    CHECK(steps[0].step == "0");
    CHECK(steps[0].state == "FAILED");
    CHECK(steps[0].exit_code == "3:0");
    CHECK(steps[0].nodes == "n1,n2");
    CHECK(steps[1].step == "1");
    CHECK(steps[1].state == "CANCELLED");
    CHECK(steps[1].exit_code == "0:9");
    CHECK(steps[2].step == "batch");
    CHECK(steps[3].step == "extern");
}

TEST_CASE("jobs read in parts on threads give the rows of one pass, to the last bit") {
    test::TempDir dir;
    {
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        auto n2 = store::open_spool(store::spool_path(dir.path().string(), "n2"));
        const char* states[] = {"COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED by 0", "TIMEOUT"};
        const char* types[] = {"pretrain", "eval", "sft", "weird"};
        const char* reasons[] = {"type_error", "nvlink_error", "key_error"};
        const char* categories[] = {"script", "infrastructure", "script"};
        n1.exec("BEGIN");
        n2.exec("BEGIN");
        // Ids 1000 apart: wide enough to be cut in parts. Uneven times, so sums depend on order.
        for (int i = 1; i <= 400; ++i) {
            const long long id = i * 1000LL;
            const double start = T + i * 37.3, end = start + 60 + (i * 7919 % 86400) / 3.7;
            test::JobSpec j{.id = id, .node = "n1", .type = types[i % 4], .state = states[i % 5],
                            .gpus_total = 1 << (i % 9), .restarts = i % 7 == 0, .submit = start - i % 13,
                            .start = start, .end = end};
            add_job(n1, j);
            if (i % 3 == 0) {
                j.node = "n2";
                j.state = i % 2 ? "PENDING" : j.state;
                add_job(n2, j);
            }
            if (i % 5 != 0) add_diagnosis(n1, id, 0, "n1", end, categories[i % 3], reasons[i % 3]);
            if (i % 7 == 0) add_diagnosis(n2, id, 1, "n2", end + 5, "infrastructure", "ecc_error");
        }
        n1.exec("COMMIT");
        n2.exec("COMMIT");
    }
    acct::ReadOptions o;
    o.diagnoses = true;
    o.full_jobs = o.node_rows = false;
    auto aggregate = [&](size_t parts) {
        std::vector<acct::SummaryAggregator> summary(parts, acct::SummaryAggregator(T + 99999));
        std::vector<acct::FailureAggregator> failures(parts, acct::FailureAggregator(T + 99999));
        std::vector<std::vector<long long>> ids(parts);
        acct::scan_spools(dir.path().string(), o, parts, [&](size_t part, acct::Job& job, std::span<const acct::Diagnosis> ds) {
            ids[part].push_back(job.job_id);
            summary[part].add(job);
            failures[part].add(job, ds);
        });
        for (size_t part = 1; part < parts; ++part) {
            CHECK(!ids[part].empty());
            CHECK(ids[part - 1].back() < ids[part].front());
            summary[0].append(std::move(summary[part]));
            failures[0].append(std::move(failures[part]));
        }
        return std::make_pair(summary[0].rows(), failures[0].rows());
    };
    const auto [summary1, failures1] = aggregate(1);
    const auto [summary2, failures2] = aggregate(2);
    REQUIRE(summary1.size() == summary2.size());
    for (size_t i = 0; i < summary1.size(); ++i) {
        CHECK(summary1[i].value == summary2[i].value);
        CHECK(summary1[i].jobs == summary2[i].jobs);
        CHECK(summary1[i].gpu_hours == summary2[i].gpu_hours);
        CHECK(summary1[i].gpu_time_pct == summary2[i].gpu_time_pct);
        CHECK(summary1[i].duration_median_s == summary2[i].duration_median_s);
        CHECK(summary1[i].queue_median_s == summary2[i].queue_median_s);
        CHECK(summary1[i].gpus_median == summary2[i].gpus_median);
    }
    REQUIRE(failures1.size() == failures2.size());
    for (size_t i = 0; i < failures1.size(); ++i) {
        CHECK(failures1[i].reason == failures2[i].reason);
        CHECK(failures1[i].category == failures2[i].category);
        CHECK(failures1[i].num == failures2[i].num);
        CHECK(failures1[i].gpu_hours == failures2[i].gpu_hours);
        CHECK(failures1[i].gpu_time_pct == failures2[i].gpu_time_pct);
        CHECK(failures1[i].ttf_median_s == failures2[i].ttf_median_s);
    }
    // And the same as the jobs held in memory.
    o.full_jobs = true;
    const auto set = acct::read_spools(dir.path().string(), o);
    CHECK(set.jobs.size() == 400);
    const auto held = acct::aggregate_failures(set.jobs, set.diagnoses, T + 99999);
    REQUIRE(held.size() == failures1.size());
    for (size_t i = 0; i < held.size(); ++i) CHECK(held[i].gpu_hours == failures1[i].gpu_hours);
    CHECK(acct::aggregate_summary(set.jobs, T + 99999)[0].gpu_hours == summary1[0].gpu_hours);
}

TEST_CASE("a spool from before the job records (v3) is read within the period on the sampler's times") {
    test::TempDir dir;
    {
        store::Database n1(store::spool_path(dir.path().string(), "n1"));
        store::migrate(n1, store::spool_migrations().first(3));
        n1.exec("INSERT INTO jobs (job_id, uid, node, gpus, started_at, ended_at) VALUES "
                "(5, 1000, 'n1', '0,1', 1793491200, 1793494800), (6, 1000, 'n1', '0', 1793400000, 1793403600)");
    }
    acct::ReadOptions o;
    o.start = T;
    o.end = T + 86400;
    const auto set = acct::read_spools(dir.path().string(), o);
    CHECK(set.problems.empty());
    REQUIRE(set.jobs.size() == 1);
    CHECK(set.jobs[0].job_id == 5);
    CHECK(acct::job_gpus(set.jobs[0]) == 2);
    CHECK(acct::job_elapsed(set.jobs[0], T) == doctest::Approx(3600));
}
