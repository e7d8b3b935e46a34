// One row mapping per spool table: gpu_summaries and diagnoses are each read by one reader
// (spool_gpu.cpp, spool_failures.cpp), whether a job's own epilog asks or gpuacct reads a whole
// directory (spool_set.cpp): the same row comes back the same way from both.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/store/spool.hpp"
#include "common/store/spool_failures.hpp"
#include "common/store/spool_gpu.hpp"
#include "common/store/spool_set.hpp"
#include "tests/unit/acct_spool_fixture.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;

namespace {

std::vector<store::GpuSampleRow> samples(double util, double gpm) {
    std::vector<store::GpuSampleRow> out;
    for (int i = 0; i < 3; ++i) {
        nvml::Reading r;
        r.util_gpu = util + i;
        r.mem_used = 1000 + i;
        r.mem_total = 4000;
        r.energy_mj = 100 * i;
        r.power_mw = 200000;
        r.ecc_uncorrected = i == 2 ? 1 : 0;
        r.gpm_sm_util = gpm;
        out.push_back({0, 100.0 + i, r});
    }
    return out;
}

}  // namespace

TEST_CASE("gpu_summaries: the epilog's reader and the directory's reader give the same row") {
    test::TempDir dir;
    {
        auto db = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        test::add_job(db, {.id = 7, .node = "n1", .start = 100, .end = 200});
        store::insert_gpu_samples(db, 7, samples(50, 40));
        store::finish_job_gpus(db, 7, "n1", 200, {{0, "GPU-abc"}}, store::kIdleMaxUtil, store::kLowUtilAvg);
    }
    auto db = store::open_spool_read_only(store::spool_path(dir.path().string(), "n1"));
    const auto own = store::job_gpu_summaries(db, 7);
    REQUIRE(own.size() == 1);
    CHECK(own[0].job_id == 7);
    CHECK(own[0].node == "n1");
    CHECK(own[0].uuid == "GPU-abc");
    CHECK(own[0].samples == 3);
    CHECK(*own[0].util_avg == doctest::Approx(51));
    CHECK(*own[0].util_max == doctest::Approx(52));
    CHECK(*own[0].mem_max == 1002);
    CHECK(*own[0].energy_mj == 200);
    CHECK(*own[0].ecc_uncorrected == 1);
    CHECK(own[0].verdict == "ok");
    CHECK(*own[0].gpm_sm_avg == doctest::Approx(40));
    CHECK(!own[0].so_far);

    store::ReadOptions o;
    o.summaries = true;
    const auto set = store::read_spools(dir.path().string(), o);
    REQUIRE(set.summaries.size() == 1);
    const auto& s = set.summaries[0];
    CHECK(s.job_id == 7);
    CHECK(s.node == "n1");
    CHECK(s.samples == own[0].samples);
    CHECK(s.util_avg == own[0].util_avg);
    CHECK(s.mem_max == own[0].mem_max);
    CHECK(s.energy_mj == own[0].energy_mj);
    CHECK(s.ecc_uncorrected == own[0].ecc_uncorrected);
    CHECK(s.verdict == own[0].verdict);
    CHECK(!s.gpm_sm_avg);  // GPM is the job view's own read
    CHECK(!s.so_far);
}

TEST_CASE("gpu_summaries: a running job's samples so far read as a row of the table, on the file's node") {
    test::TempDir dir;
    {
        auto db = store::open_spool(store::spool_path(dir.path().string(), "n2"));
        test::add_job(db, {.id = 8, .node = "n2", .state = "RUNNING", .start = 100, .end = 0});
        store::insert_gpu_samples(db, 8, samples(2, 0));
    }
    store::ReadOptions o;
    o.summaries = true;
    const auto set = store::read_spools(dir.path().string(), o);
    REQUIRE(set.summaries.size() == 1);
    const auto& s = set.summaries[0];
    CHECK(s.job_id == 8);
    CHECK(s.node == "n2");
    CHECK(s.gpu == 0);
    CHECK(s.uuid.empty());
    CHECK(s.samples == 3);
    CHECK(*s.util_max == doctest::Approx(4));
    CHECK(*s.energy_mj == 200);
    CHECK(*s.ecc_uncorrected == 1);
    CHECK(s.verdict == "idle");
    CHECK(s.so_far);
}

TEST_CASE("diagnoses: the job's reader has the evidence; the directory's has the rule and action only when listing") {
    test::TempDir dir;
    {
        auto db = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        test::add_job(db, {.id = 9, .node = "n1", .state = "FAILED", .start = 100, .end = 200});
        store::insert_diagnosis(db, 9,
                                {.restart = 1,
                                 .node = "n1",
                                 .category = "infrastructure",
                                 .reason = "xid_79",
                                 .action = "drain",
                                 .rule = "xid-79",
                                 .ts = 200,
                                 .confidence = 0.9,
                                 .evidence_json = R"([{"line":3,"text":"Xid 79"}])"});
    }
    auto db = store::open_spool_read_only(store::spool_path(dir.path().string(), "n1"));
    const auto own = store::job_diagnoses(db, 9);
    REQUIRE(own.size() == 1);
    CHECK(own[0].job_id == 9);
    CHECK(own[0].restart == 1);
    CHECK(own[0].node == "n1");
    CHECK(own[0].reason == "xid_79");
    CHECK(own[0].action == "drain");
    CHECK(own[0].rule == "xid-79");
    CHECK(own[0].confidence == doctest::Approx(0.9));
    CHECK(own[0].evidence_json == R"([{"line":3,"text":"Xid 79"}])");

    store::ReadOptions o;
    o.diagnoses = true;
    auto listed = store::read_spools(dir.path().string(), o);
    REQUIRE(listed.diagnoses.size() == 1);
    CHECK(listed.diagnoses[0].reason == "xid_79");
    CHECK(listed.diagnoses[0].action == "drain");
    CHECK(listed.diagnoses[0].rule == "xid-79");
    CHECK(listed.diagnoses[0].evidence_json.empty());  // never read for a directory
    o.full_jobs = false;
    auto aggregated = store::read_spools(dir.path().string(), o);
    REQUIRE(aggregated.diagnoses.size() == 1);
    CHECK(aggregated.diagnoses[0].category == "infrastructure");
    CHECK(aggregated.diagnoses[0].action.empty());
    CHECK(aggregated.diagnoses[0].rule.empty());
}
