// gpuacct goodput from node spools (issue 39): two real spool files written by the store's own
// writers, read back by the streaming path (gpuacct goodput) and by read_spools (the HTML
// report), each against a hand computation: a failed run with its diagnosis, a stalled run, a
// job with idle GPUs over two nodes, and a requeued job whose earlier runs the spools do not hold.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "acct/gpuacct/core/goodput_spool.hpp"
#include "common/store/spool.hpp"
#include "common/store/spool_failures.hpp"
#include "common/store/spool_jobs.hpp"
#include "common/store/spool_stalls.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;

namespace {

constexpr double T = 1793491200;  // 2026-11-01T00:00:00Z
constexpr double M = 60;

store::SpoolJobRow job_row(long long id, const std::string& node, const std::string& gpus, long long gpus_total,
                           double submit, double start, double end, const std::string& state, long long restarts = 0) {
    store::SpoolJobRow r;
    r.job_id = id;
    r.node = node;
    r.gpus = gpus;
    r.user = "ann";
    r.account = "acme";
    r.partition = "gpu";
    r.state = state;
    r.gpus_total = gpus_total;
    r.num_nodes = 1;
    r.submit_time = submit;
    r.start_time = start;
    r.end_time = end;
    r.restarts = restarts;
    return r;
}

void diagnosis(store::Database& db, long long id, long long restart, double ts, const char* category, const char* reason) {
    store::Diagnosis d;
    d.job_id = id;
    d.restart = restart;
    d.node = "n1";
    d.ts = ts;
    d.category = category;
    d.reason = reason;
    d.confidence = 0.9;
    d.evidence_json = "[]";
    d.action = "none";
    store::insert_diagnosis(db, id, d);
}

// The sampler's summary of each GPU (finish_job_gpus' row): only the verdict matters here.
void summaries(store::Database& db, long long id, const std::string& node, const std::vector<const char*>& verdicts) {
    for (size_t g = 0; g < verdicts.size(); ++g)
        db.prepare("INSERT INTO gpu_summaries (job_id, gpu, node, samples, verdict) VALUES (?, ?, ?, 10, ?)")
            .bind_all(static_cast<long long>(id), static_cast<long long>(g), node, std::string(verdicts[g]))
            .run();
}

// Writes the spools of the four jobs; returns the directory.
void write_spools(const test::TempDir& dir) {
    auto n1 = store::open_spool(dir.file("n1.db"));
    auto n2 = store::open_spool(dir.file("n2.db"));
    // Job 1: 4 GPUs, queued 2 min, ran 30 min, failed: diagnosed, nothing resumed after it.
    store::upsert_job_record(n1, job_row(1, "n1", "0,1,2,3", 4, T, T + 2 * M, T + 32 * M, "FAILED"));
    diagnosis(n1, 1, 0, T + 32 * M, "script", "type_error");
    summaries(n1, 1, "n1", {"ok", "ok", "ok", "ok"});
    // Job 2: 2 GPUs, queued 1 min, ran 60 min; no progress from minute 41 (of the clock) on: the
    // sampler cancelled it; diagnosed as a hang.
    store::upsert_job_record(n1, job_row(2, "n1", "4,5", 2, T, T + M, T + 61 * M, "CANCELLED"));
    store::StallRow stall;
    stall.node = "n1";
    stall.ts = T + 60 * M;
    stall.since = T + 41 * M;
    stall.evidence = "no progress";
    stall.action = "cancelled";
    store::upsert_stall(n1, 2, stall);
    diagnosis(n1, 2, 0, T + 61 * M, "framework", "nccl_timeout");
    summaries(n1, 2, "n1", {"ok", "ok"});
    // Job 3: 8 GPUs over two nodes, ran 60 min to completion; 2 of n1's GPUs idle. A verdict
    // withdrawn (progress resumed) is no stall.
    store::upsert_job_record(n1, job_row(3, "n1", "0,1,2,3", 8, T, T, T + 60 * M, "COMPLETED"));
    store::upsert_job_record(n2, job_row(3, "n2", "0,1,2,3", 8, T, T, T + 60 * M, "COMPLETED"));
    summaries(n1, 3, "n1", {"idle", "ok", "idle", "ok"});
    summaries(n2, 3, "n2", {"ok", "ok", "ok", "ok"});
    store::StallRow withdrawn = stall;
    withdrawn.since = T + 10 * M;
    withdrawn.action = "none";
    withdrawn.withdrawn = true;
    store::upsert_stall(n2, 3, withdrawn);
    // Job 4: requeued twice after infrastructure faults (restarts 0 and 1 diagnosed); the spool
    // holds its newest run: resubmitted at minute 100, running 5 min later, 30 min to completion.
    store::upsert_job_record(n2, job_row(4, "n2", "4,5,6,7", 4, T + 100 * M, T + 105 * M, T + 135 * M, "COMPLETED", 2));
    diagnosis(n2, 4, 0, T + 50 * M, "infrastructure", "gpu_lost");
    diagnosis(n2, 4, 1, T + 99 * M, "infrastructure", "nvlink_error");
    summaries(n2, 4, "n2", {"ok", "ok", "ok", "ok"});
}

void check_hand_computation(const acct::ClusterGoodput& c) {
    CHECK(c.jobs == 4);
    CHECK(c.runs == 6);      // 1 + 1 + 1 + 3
    CHECK(c.failures == 4);  // job 1, job 2 (cancelled for its stall), job 4's two earlier runs
    CHECK(c.runs_not_held == 2);
    CHECK(c.jobs_partly_held == 1);
    // GPUs x running time of the runs held: 4 x 30 + 2 x 60 + 8 x 60 + 4 x 30 minutes = 14 h.
    CHECK(c.handed_out_gpu_h == doctest::Approx(14.0));
    // Kept: job 3's 6 busy GPUs x 1 h and job 4's newest run 4 x 0.5 h; idle: job 3's 2 x 1 h.
    CHECK(c.kept_gpu_h == doctest::Approx(8.0));
    CHECK(c.idle_gpu_h == doctest::Approx(2.0));
    // Stalled: job 2 from minute 41 to 61 on 2 GPUs.
    CHECK(c.stalled_gpu_h == doctest::Approx(2 * 20 / 60.0));
    // Not split: the failed runs nothing resumed after: job 1 whole, job 2 outside its stall.
    CHECK(c.unsplit_gpu_h == doctest::Approx(2.0 + 2 * 40 / 60.0));
    CHECK(c.lost_gpu_h == 0);
    CHECK(c.kept_gpu_h + c.idle_gpu_h + c.stalled_gpu_h + c.unsplit_gpu_h + c.lost_gpu_h ==
          doctest::Approx(c.handed_out_gpu_h));
    // Waits: jobs 1 and 2 queued 2 + 1 min; job 4's newest run waited 5 min after a fault.
    CHECK(c.queued_h == doctest::Approx(3 / 60.0));
    CHECK(c.recovery_h == doctest::Approx(5 / 60.0));
    // The GPU time lost by cause: only the stall's is known (no run resumed from a checkpoint
    // the spools know of); the earlier runs' faults are counted, never as 0 hours.
    REQUIRE(c.causes.size() == 1);
    CHECK(c.causes[0].category == "framework");
    CHECK(c.causes[0].reason == "nccl_timeout");
    CHECK(c.causes[0].stalled_s == doctest::Approx(2 * 20 * M));
    CHECK(c.causes[0].lost_s == 0);
}

}  // namespace

TEST_CASE("goodput from node spools: streamed, it equals the hand computation") {
    test::TempDir dir;
    write_spools(dir);
    acct::ReadOptions read;
    read.start = T - 86400;
    read.end = T + 86400;
    acct::SpoolScan scan;
    const auto c = acct::stream_spool_goodput(dir.path().string(), read, {}, T + 200 * M, scan);
    CHECK(scan.nodes == std::vector<std::string>{"n1", "n2"});
    check_hand_computation(c);
    const auto text = acct::render_cluster_goodput(c);
    CHECK(text.find("not held: 2 earlier runs of 1 requeued job") != std::string::npos);
    CHECK(acct::cluster_goodput_json(c)["runs_not_held"] == 2);

    // -u, -A, -r as from slurmdbd: the newest run's user, account, partition.
    acct::SpoolScan again;
    CHECK(acct::stream_spool_goodput(dir.path().string(), read, {{"bob"}, {}, {}, {}, {}}, T + 200 * M, again).jobs == 0);
    CHECK(acct::stream_spool_goodput(dir.path().string(), read, {{"ann"}, {"acme"}, {"gpu"}, {}, {}}, T + 200 * M, again).jobs == 4);
}

TEST_CASE("goodput from node spools: the report's read gives the same sums as the stream") {
    test::TempDir dir;
    write_spools(dir);
    acct::ReadOptions read;
    read.start = T - 86400;
    read.end = T + 86400;
    read.summaries = true;
    read.diagnoses = true;
    const auto data = acct::read_spools(dir.path().string(), read);
    const auto c = acct::spool_cluster_goodput(dir.path().string(), data, {}, T + 200 * M);
    check_hand_computation(c);
    acct::SpoolScan scan;
    CHECK(acct::cluster_goodput_json(c).dump() ==
          acct::cluster_goodput_json(acct::stream_spool_goodput(dir.path().string(), read, {}, T + 200 * M, scan)).dump());
}

TEST_CASE("goodput from node spools: a requeued job's earlier runs are unknown, never 0") {
    acct::Job job;
    job.job_id = 4;
    job.state = "COMPLETED";
    job.restarts = 2;
    job.gpus_total = 4;
    job.submit = T + 100 * M;
    job.start = T + 105 * M;
    job.end = T + 135 * M;
    std::vector<acct::Diagnosis> diagnoses(2);
    diagnoses[0].restart = 0;
    diagnoses[1].restart = 1;
    const auto g = acct::spool_goodput(job, diagnoses, {}, 0, T + 200 * M);
    CHECK(g.runs == 3);
    CHECK(g.runs_not_held == 2);
    CHECK(g.failures == 2);
    CHECK_FALSE(g.ettr.has_value());  // the wall time from the first submission is not held
    CHECK(*g.kept_s == 30 * M);       // the newest run's own time
    CHECK(*g.recovery_s == 5 * M);
    REQUIRE(g.unknown.size() == 1);
    CHECK(g.unknown[0].find("runs 0 to 1 are not held") != std::string::npos);
    CHECK(acct::goodput_json(g)["ettr"].is_null());
}
