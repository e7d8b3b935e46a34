// The HTML report's aggregates: fixed-size whatever the number of jobs.
#include <doctest/doctest.h>

#include <vector>

#include "acct/gpuacct/core/report_aggregates.hpp"

using namespace acme;
using namespace acme::acct;

namespace {

Job job(std::int64_t id, const std::string& type, const std::string& user, const std::string& account, int gpus,
        double hours) {
    Job j;
    j.job_id = id;
    j.job_type = type;
    j.gpus_total = gpus;
    j.state = "COMPLETED";
    j.submit = 1000;
    j.start = 1000;
    j.end = 1000 + hours * 3600;
    j.mutable_text().user = user;
    j.mutable_text().account = account;
    return j;
}

GpuSummary gpu(std::int64_t id, int index, double util, const std::string& verdict) {
    GpuSummary s;
    s.job_id = id;
    s.node = "n1";
    s.gpu = index;
    s.samples = 10;
    s.util_avg = util;
    s.util_max = util;
    s.verdict = verdict;
    return s;
}

}  // namespace

TEST_CASE("report: the utilisation CDF weighs each job by its GPU-hours") {
    std::vector<Job> jobs;
    jobs.push_back(job(1, "pretrain", "ann", "llm", 8, 10));  // 80 GPU-hours at 90 %
    jobs.push_back(job(2, "pretrain", "bob", "llm", 1, 1));   // 1 GPU-hour at 5 %
    jobs.push_back(job(3, "eval", "bob", "eval", 1, 2));      // no telemetry: not in the CDF
    std::vector<GpuSummary> gpus;
    for (int g = 0; g < 8; ++g) gpus.push_back(gpu(1, g, 90.4, "ok"));
    gpus.push_back(gpu(2, 0, 5.0, "low-util"));
    const auto h = util_by_type(jobs, gpus, 1e9);
    REQUIRE(h.size() == 1);
    CHECK(h[0].type == "pretrain");
    CHECK(h[0].jobs == 2);
    CHECK(h[0].gpu_hours == doctest::Approx(81));
    CHECK(h[0].gpu_hours_at[90] == doctest::Approx(80));
    CHECK(h[0].gpu_hours_at[5] == doctest::Approx(1));
}

TEST_CASE("report: idle and low-utilisation GPU-hours by user and by account, the worst first, top N") {
    std::vector<Job> jobs;
    jobs.push_back(job(1, "sft", "ann", "llm", 4, 2));  // 2 of 4 GPUs idle for 2 h: 4 idle GPU-hours
    jobs.push_back(job(2, "sft", "bob", "llm", 2, 3));  // 1 low-util GPU for 3 h
    jobs.push_back(job(3, "sft", "cid", "viz", 1, 5));  // busy
    std::vector<GpuSummary> gpus = {gpu(1, 0, 0, "idle"), gpu(1, 1, 0, "idle"), gpu(1, 2, 80, "ok"), gpu(1, 3, 80, "ok"),
                                    gpu(2, 0, 3, "low-util"), gpu(2, 1, 60, "ok"), gpu(3, 0, 99, "ok")};
    const auto users = waste_by(WasteKey::user, jobs, gpus, 1e9, 2);
    REQUIRE(users.size() == 2);
    CHECK(users[0].name == "ann");
    CHECK(users[0].idle_gpu_hours == doctest::Approx(4));
    CHECK(users[0].gpu_hours == doctest::Approx(8));
    CHECK(users[1].name == "bob");
    CHECK(users[1].low_gpu_hours == doctest::Approx(3));
    const auto accounts = waste_by(WasteKey::account, jobs, gpus, 1e9, 10);
    REQUIRE(accounts.size() == 2);
    CHECK(accounts[0].name == "llm");
    CHECK(accounts[0].jobs == 2);
    CHECK(accounts[0].idle_gpu_hours + accounts[0].low_gpu_hours == doctest::Approx(7));
    CHECK(accounts[1].name == "viz");
    CHECK(accounts[1].idle_gpu_hours + accounts[1].low_gpu_hours == 0);
}

TEST_CASE("report: XIDs per node in slices of the period, with their codes") {
    std::vector<GpuEvent> events;
    auto xid = [&](const std::string& node, double ts, std::int64_t code) {
        GpuEvent e;
        e.node = node;
        e.ts = ts;
        e.kind = "xid";
        e.code = code;
        events.push_back(e);
    };
    xid("n1", 100, 79);
    xid("n1", 101, 13);
    xid("n2", 950, 13);
    GpuEvent ecc;
    ecc.node = "n3";
    ecc.ts = 500;
    ecc.kind = "ecc_dbe";
    events.push_back(ecc);
    const auto x = xid_summary(events, 0, 1000, 10);
    CHECK(x.from == 100);  // open start: the first event
    CHECK(x.to == 1000);
    REQUIRE(x.cells.size() == 2);
    CHECK(x.cells[0].node == "n1");
    CHECK(x.cells[0].bucket == 0);
    CHECK(x.cells[0].count == 2);
    CHECK(x.cells[0].codes == std::map<std::int64_t, std::int64_t>{{13, 1}, {79, 1}});
    CHECK(x.cells[1].node == "n2");
    CHECK(x.cells[1].bucket == 9);
    REQUIRE(x.codes.size() == 2);
    CHECK(x.codes[0].code == 13);
    CHECK(x.codes[0].count == 2);
    CHECK(x.codes[0].nodes == std::vector<std::string>{"n1", "n2"});
}
