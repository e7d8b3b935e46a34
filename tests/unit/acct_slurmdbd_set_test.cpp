// gpuacct's slurmdbd source and faultdiag's, from runs as slurmdbd returns them, with acme
// records made by the same functions the epilogs use (no slurmdbd needed).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "acct/faultdiag/slurmdbd_job.hpp"
#include "acct/gpuacct/core/aggregate.hpp"
#include "acct/gpuacct/core/slurmdbd_set.hpp"
#include "acct/gpuacct/views.hpp"
#include "common/record/codec.hpp"
#include "common/record/record.hpp"

using namespace acme;
using nlohmann::json;

namespace {

constexpr double T = 1793491200;  // 2026-11-01

json gpu(int id, double util, long long mem_mib, const char* verdict = "ok") {
    return {{"id", id},           {"samples", 10},      {"util_avg", util},         {"util_max", util + 5},
            {"mem_max_mib", mem_mib}, {"mem_total_mib", 81920}, {"power_avg_w", 250.5},     {"power_max_w", 300.0},
            {"energy_j", 1000.0},  {"temp_max_c", 70},   {"xids", 0},                {"verdict", verdict}};
}

json part(std::vector<json> gpus, std::optional<json> diagnosis = std::nullopt) {
    json p = {{"gpus", gpus}, {"ts", T + 100}};
    if (diagnosis) p["diagnosis"] = *diagnosis;
    return p;
}

json diagnosis(const char* reason, const char* category, double confidence) {
    return {{"category", category}, {"reason", reason}, {"confidence", confidence}, {"action", "requeue"},
            {"rule", "test-rule"},  {"evidence", json::array({{{"source", "log"}, {"text", "Xid 79"}, {"line", 3}}})}};
}

slurm::AccountedRun run(std::uint32_t id, std::uint64_t index, const char* state, const std::string& admin_comment) {
    slurm::AccountedRun r;
    r.job_id = id;
    r.db_index = index;
    r.user = "acmetest";
    r.uid = 1234;
    r.account = "research";
    r.partition = "gpu";
    r.name = "pretrain-7b";
    r.nodes = "n[1-2]";
    r.state = state;
    r.exit_code = "1:0";
    r.derived_exit_code = "1:0";
    r.submit = T;
    r.start = T + 10;
    r.end = T + 110;
    r.num_nodes = 2;
    r.gpus = 4;
    r.admin_comment = admin_comment;
    r.alloc_cpus = 4;
    r.total_cpu_s = 200;
    r.elapsed_s = 100;
    r.req_mem_bytes = 4LL << 30;
    r.max_rss_bytes = 1LL << 30;
    return r;
}

// The record of a 2-node run as the two epilogs leave it, in the AdminComment beside an admin's note.
std::string two_node_comment(std::uint32_t job, long long restart, bool with_n2 = true) {
    auto r = record::merge_node_part(std::nullopt, job, restart, {"n1", "n2"}, "n1",
                                     part({gpu(0, 90, 1000), gpu(1, 80, 2000)}, diagnosis("xid_error", "infrastructure", 0.9)));
    if (with_n2) {
        auto p2 = part({gpu(0, 10, 500, "low-util"), gpu(3, 20, 4000, "low-util")});
        p2["events"] = json::array({{{"gpu", 3}, {"kind", "xid"}, {"code", 79}, {"ts", T + 90}}});
        p2["recovery"] = {{"drained", true}, {"requeued", true}, {"drain_reason", "acme: xid 79"}, {"outcome", "requeued"}};
        p2["gate"] = {{"passed", true}, {"detail", "ok"}};
        r = record::merge_node_part(r, job, restart, {"n1", "n2"}, "n2", p2);
    }
    return "note:keep " + record::encode_within_budget(r);
}

acct::SpoolSet build(const std::vector<slurm::AccountedRun>& runs, std::vector<std::string>& warnings) {
    acct::ReadOptions o;
    return acct::spool_set_from_accounting(runs, o, warnings);
}

}  // namespace

TEST_CASE("slurmdbd: a two-node job shows both nodes' GPUs, the diagnosis and slurmdbd's own fields") {
    std::vector<std::string> warnings;
    auto set = build({run(42, 1, "FAILED", two_node_comment(42, 0))}, warnings);
    CHECK(warnings.empty());
    REQUIRE(set.jobs.size() == 1);
    const auto& job = set.jobs[0];
    CHECK(job.state == "FAILED");
    CHECK(job.text().user == "acmetest");
    CHECK(job.text().nodelist == "n[1-2]");
    CHECK(job.gpus_total == 4);
    CHECK(job.gpu_ids == 4);
    CHECK(job.job_type == "pretrain");
    CHECK(job.text().missing_nodes.empty());
    CHECK(set.summaries.size() == 4);
    const auto use = acct::gpu_use_by_job(set.summaries).at(42);
    CHECK(use.util_avg == doctest::Approx(50.0));
    CHECK(*use.mem_max == 4000LL * 1024 * 1024);
    CHECK(use.verdict == "low-util");
    REQUIRE(set.diagnoses.size() == 1);
    CHECK(set.diagnoses[0].reason == "xid_error");
    CHECK(set.diagnoses[0].node == "n1");
    REQUIRE(set.events.size() == 1);
    CHECK(set.events[0].node == "n2");
    CHECK(set.events[0].code == 79);
    REQUIRE(set.drains.size() == 1);
    CHECK(set.drains[0].reason == "acme: xid 79");
    CHECK(set.nodes == std::vector<std::string>{"n1", "n2"});

    // What the user reads: the row of gpuacct -j 42.
    gpuacct::Context context;
    context.data = std::move(set);
    context.jobs.push_back(std::move(context.data.jobs[0]));
    context.data.jobs.clear();
    const auto table = gpuacct::jobs_view(context);
    REQUIRE(table.rows.size() == 1);
    auto cell = [&](std::string_view name) {
        for (size_t i = 0; i < table.fields.size(); ++i)
            if (table.fields[i].name == name) return table.rows[0][i].text;
        FAIL("no field " << name);
        return std::string();
    };
    CHECK(cell("Reason") == "xid_error");
    CHECK(cell("GPUIDs") == "n1:0,1;n2:0,3");
    CHECK(cell("GPUUtil") == "50.0");
    CHECK(cell("CPUEff") == "50.0");  // 200 s of CPU over 4 CPUs x 100 s
    CHECK(cell("MemEff") == "25.0");
    CHECK(cell("MissingNodes") == "");
}

TEST_CASE("slurmdbd: each requeued run keeps its diagnosis with its restart; the newest run speaks for the job") {
    std::vector<std::string> warnings;
    auto first = run(7, 10, "REQUEUED", two_node_comment(7, 0));
    auto second = run(7, 11, "COMPLETED", "");
    second.exit_code = "0:0";
    {
        // The requeued run left n1 (drained) and ran on n2 and n3.
        auto r = record::merge_node_part(std::nullopt, 7, 1, {"n2", "n3"}, "n2", part({gpu(2, 99, 100)}));
        r = record::merge_node_part(r, 7, 1, {"n2", "n3"}, "n3", part({gpu(1, 97, 100)}));
        second.admin_comment = record::encode_within_budget(r);
    }
    // slurmdbd's order is not relied on.
    const auto set = build({second, first}, warnings);
    CHECK(warnings.empty());
    REQUIRE(set.jobs.size() == 1);
    CHECK(set.jobs[0].restarts == 1);
    CHECK(set.jobs[0].state == "COMPLETED");
    CHECK(set.jobs[0].text().exit_code == "0:0");
    REQUIRE(set.diagnoses.size() == 1);
    CHECK(set.diagnoses[0].restart == 0);
    // The newest run's GPUs only, as a spool keeps them.
    CHECK(set.summaries.size() == 2);
    CHECK(acct::gpu_use_by_job(set.summaries).at(7).util_avg == doctest::Approx(98.0));
    // Every node the job ran on, each with the GPUs of its last run there (as the spools hold them).
    REQUIRE(set.jobs[0].nodes.size() == 3);
    CHECK(set.jobs[0].nodes[0].node == "n1");
    CHECK(set.jobs[0].nodes[0].gpus == "0,1");
    CHECK(set.jobs[0].nodes[1].gpus == "2");
    CHECK(set.jobs[0].nodes[2].node == "n3");
    // The failed first run still counts as a failure, with its reason.
    const auto rows = acct::aggregate_failures(set.jobs, set.diagnoses, T + 1000);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].reason == "xid_error");
    CHECK(rows[0].num == 1);
}

TEST_CASE("slurmdbd -D: each run of a requeued job is its own row with its own state, nodes, GPUs and diagnosis") {
    std::vector<std::string> warnings;
    auto first = run(7, 10, "REQUEUED", two_node_comment(7, 0));
    first.nodes = "n[1-2]";
    auto second = run(7, 11, "COMPLETED", "");
    second.exit_code = "0:0";
    second.nodes = "n[2-3]";
    second.start = T + 200;
    second.end = T + 500;
    {
        auto r = record::merge_node_part(std::nullopt, 7, 1, {"n2", "n3"}, "n2", part({gpu(2, 99, 100)}));
        r = record::merge_node_part(r, 7, 1, {"n2", "n3"}, "n3", part({gpu(1, 97, 100)}));
        second.admin_comment = record::encode_within_budget(r);
    }
    // A third job, never requeued, between them in slurmdbd's order (which is not relied on).
    const auto other = run(8, 12, "FAILED", two_node_comment(8, 0));
    const std::vector<slurm::AccountedRun> runs = {second, other, first};
    auto rows = acct::runs_from_accounting(runs);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].job.job_id == 7);
    CHECK(rows[0].job.restarts == 0);
    CHECK(rows[0].job.state == "REQUEUED");
    CHECK(rows[0].job.text().nodelist == "n[1-2]");
    CHECK(rows[0].gpus.size() == 4);
    CHECK(rows[1].job.job_id == 7);
    CHECK(rows[1].job.restarts == 1);
    CHECK(rows[1].job.state == "COMPLETED");
    CHECK(rows[1].job.start == T + 200);
    CHECK(rows[1].gpus.size() == 2);
    CHECK(rows[2].job.job_id == 8);
    CHECK(rows[2].job.restarts == 0);
    REQUIRE(rows[0].diagnoses.size() == 1);
    CHECK(rows[0].diagnoses[0].restart == 0);
    CHECK(rows[1].diagnoses.empty());

    // What the user reads: gpuacct -j 7 -D, one line per run with that run's figures.
    gpuacct::Context context;
    context.data = build(runs, warnings);
    CHECK(warnings.empty());
    context.per_run = true;
    context.data.diagnoses.clear();
    for (auto& r : rows) {
        for (auto& d : r.diagnoses) context.data.diagnoses.push_back(std::move(d));
        context.run_use[{r.job.job_id, r.job.restarts}] = acct::gpu_use_by_job(r.gpus).begin()->second;
        context.jobs.push_back(std::move(r.job));
    }
    const auto table = gpuacct::jobs_view(context);
    REQUIRE(table.rows.size() == 3);
    auto cell = [&](size_t row, std::string_view name) {
        for (size_t i = 0; i < table.fields.size(); ++i)
            if (table.fields[i].name == name) return table.rows[row][i].text;
        FAIL("no field " << name);
        return std::string();
    };
    CHECK(cell(0, "JobID") == "7");
    CHECK(cell(0, "State") == "REQUEUED");
    CHECK(cell(0, "GPUUtil") == "50.0");
    CHECK(cell(0, "Reason") == "xid_error");  // why the first run was requeued
    CHECK(cell(0, "GPUIDs") == "n1:0,1;n2:0,3");
    CHECK(cell(1, "JobID") == "7");
    CHECK(cell(1, "State") == "COMPLETED");
    CHECK(cell(1, "GPUUtil") == "98.0");
    CHECK(cell(1, "Reason") == "");
    CHECK(cell(1, "Restarts") == "1");
    CHECK(cell(1, "GPUIDs") == "n2:2;n3:1");
    CHECK(cell(2, "State") == "FAILED");
    CHECK(cell(2, "Reason") == "xid_error");
}

TEST_CASE("slurmdbd -D: runs are numbered by their rows, even when an admin's requeue gave both records the same number") {
    // scontrol requeue counts the restart before the first run's epilog writes its record.
    auto first = run(5, 20, "REQUEUED", two_node_comment(5, 1));
    auto second = run(5, 21, "COMPLETED", "");
    second.admin_comment = record::encode_within_budget(
        record::merge_node_part(std::nullopt, 5, 1, {"n3"}, "n3", part({gpu(0, 90, 100)})));
    const auto rows = acct::runs_from_accounting(std::vector<slurm::AccountedRun>{first, second});
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].job.restarts == 0);
    CHECK(rows[1].job.restarts == 1);
    CHECK(rows[0].gpus.size() == 4);
    CHECK(rows[1].gpus.size() == 1);
    REQUIRE(rows[0].diagnoses.size() == 1);
    CHECK(rows[0].diagnoses[0].restart == 0);
}

TEST_CASE("slurmdbd: a node that never reported is named as missing") {
    std::vector<std::string> warnings;
    const auto set = build({run(9, 1, "FAILED", two_node_comment(9, 0, false))}, warnings);
    REQUIRE(set.jobs.size() == 1);
    CHECK(set.jobs[0].text().missing_nodes == "n2");
    CHECK(set.summaries.size() == 2);
}

TEST_CASE("slurmdbd: a damaged or unknown record is one warning naming the job, the job still listed") {
    std::vector<std::string> warnings;
    const std::string unknown = record::encode_token(R"({"v":99,"job":12,"nodes":{}})");
    const auto set = build({run(11, 1, "FAILED", "ACME1:@@notbase64@@"), run(12, 2, "TIMEOUT", unknown),
                            run(13, 3, "COMPLETED", "an admin's note, no record")},
                           warnings);
    REQUIRE(warnings.size() == 2);
    CHECK(warnings[0].find("job 11: ") == 0);
    CHECK(warnings[1].find("job 12: ") == 0);
    CHECK(warnings[1].find("unknown version") != std::string::npos);
    REQUIRE(set.jobs.size() == 3);
    CHECK(set.jobs[0].state == "FAILED");
    CHECK(set.jobs[1].state == "TIMEOUT");
    CHECK(set.summaries.empty());
    CHECK(set.diagnoses.empty());
}

TEST_CASE("slurmdbd: a trimmed record's per-node totals give the job the same figures") {
    auto r = record::merge_node_part(std::nullopt, 5, 0, {"n1"}, "n1", part({gpu(0, 90, 1000), gpu(1, 70, 3000)}));
    std::vector<std::string> warnings;
    const auto full = build({run(5, 1, "COMPLETED", record::encode_within_budget(r))}, warnings);
    // Folded as encode_within_budget does when the detail does not fit.
    json t = {{"count", 2}, {"util_avg", 80.0}, {"util_max", 95.0}, {"mem_max_mib", 3000}, {"energy_j", 2000.0},
              {"xids", 1}, {"verdicts", {"ok"}}};
    r["nodes"]["n1"].erase("gpus");
    r["nodes"]["n1"]["gpu_totals"] = t;
    r["trimmed"] = 1;
    const auto trimmed = build({run(5, 1, "COMPLETED", record::encode_token(r.dump()))}, warnings);
    CHECK(warnings.empty());
    const auto a = acct::gpu_use_by_job(full.summaries).at(5), b = acct::gpu_use_by_job(trimmed.summaries).at(5);
    CHECK(b.gpus == 2);
    CHECK(b.util_avg == doctest::Approx(*a.util_avg));
    CHECK(*b.mem_max == *a.mem_max);
    CHECK(*b.energy_j == doctest::Approx(*a.energy_j));
    CHECK(b.xids == 1);
    CHECK(b.verdict == "ok");
}

TEST_CASE("slurmdbd: TRES counts by id, gres/gpu's id being whatever slurmdbd gave it") {
    CHECK(slurm::tres_count("1=4,2=8192,4=2,1001=2", 1001) == 2);
    CHECK(slurm::tres_count("1=4,2=8192,4=2,1001=2", 2) == 8192);
    CHECK(slurm::tres_count("1=4,2=8192", 1001) == std::nullopt);
    CHECK(slurm::tres_count("", 1) == std::nullopt);
    CHECK(slurm::tres_count("10=3,1=x", 1) == std::nullopt);
    CHECK(slurm::tres_count("11=3", 1) == std::nullopt);
}

TEST_CASE("faultdiag from slurmdbd: the newest run's most decisive diagnosis, with its evidence") {
    auto first = run(7, 10, "REQUEUED", two_node_comment(7, 0));
    auto second = run(7, 11, "FAILED", "");
    {
        auto r = record::merge_node_part(std::nullopt, 7, 1, {"n1", "n2"}, "n1",
                                         part({gpu(0, 1, 1)}, diagnosis("nccl_timeout", "infrastructure", 0.6)));
        r = record::merge_node_part(r, 7, 1, {"n1", "n2"}, "n2", part({gpu(0, 1, 1)}, diagnosis("unknown", "unknown", 0.9)));
        second.admin_comment = record::encode_within_budget(r);
    }
    const std::vector<slurm::AccountedRun> runs = {second, first};
    const auto job = faultdiag::accounted_job(runs, 7);
    CHECK(job.found);
    REQUIRE(job.stored);
    CHECK(job.stored->restart == 1);
    CHECK(job.stored->node == "n1");
    CHECK(job.stored->diagnosis.reason == "nccl_timeout");
    REQUIRE(job.stored->diagnosis.evidence.size() == 1);
    CHECK(job.stored->diagnosis.evidence[0].text == "Xid 79");
    CHECK(job.stored->diagnosis.evidence[0].line == 3);
    CHECK_FALSE(faultdiag::accounted_job(runs, 8).found);
}

TEST_CASE("faultdiag from slurmdbd: a failed run's record is waited for only in the seconds after it ended") {
    auto failed = run(9, 20, "FAILED", "");
    failed.end = 1000;
    const std::vector<slurm::AccountedRun> runs = {failed};
    const auto job = faultdiag::accounted_job(runs, 9);
    CHECK(job.state == "FAILED");
    CHECK(job.end == 1000);
    CHECK(faultdiag::record_may_be_on_its_way(job, 1003));
    CHECK_FALSE(faultdiag::record_may_be_on_its_way(job, 1000 + faultdiag::kRecordArrivalSeconds));
    auto completed = job;
    completed.state = "COMPLETED";  // its record never holds a diagnosis
    CHECK_FALSE(faultdiag::record_may_be_on_its_way(completed, 1003));
    auto running = job;
    running.state = "RUNNING";
    running.end = 0;
    CHECK_FALSE(faultdiag::record_may_be_on_its_way(running, 1003));
    auto diagnosed = faultdiag::accounted_job(std::vector<slurm::AccountedRun>{run(7, 11, "FAILED", "")}, 7);
    diagnosed.end = 1000;
    diagnosed.stored = faultdiag::StoredDiagnosis{};
    CHECK_FALSE(faultdiag::record_may_be_on_its_way(diagnosed, 1003));
    CHECK_FALSE(faultdiag::record_may_be_on_its_way(faultdiag::accounted_job(runs, 8), 1003));
}

TEST_CASE("slurmdbd, one job at a time: --summary and --failures count the same as over the jobs held") {
    // A mixed period: a requeue chain, a failed job, a completed one, a GPU job whose TRES slurmdbd
    // lost (its GPUs come from the record's ids), a damaged record.
    auto first = run(7, 10, "REQUEUED", two_node_comment(7, 0));
    auto second = run(7, 11, "COMPLETED", two_node_comment(7, 1));
    auto failed = run(8, 12, "FAILED", two_node_comment(8, 0));
    auto done = run(9, 13, "COMPLETED", two_node_comment(9, 0));
    auto no_tres = run(10, 14, "FAILED", two_node_comment(10, 0));
    no_tres.gpus.reset();
    auto damaged = run(11, 15, "COMPLETED", "ACME1:not-a-record");
    const std::vector<slurm::AccountedRun> all = {first, second, failed, done, no_tres, damaged};
    std::vector<std::string> warnings;
    const auto set = build(all, warnings);
    const auto summary_held = acct::aggregate_summary(set.jobs, T + 1000);
    const auto failures_held = acct::aggregate_failures(set.jobs, set.diagnoses, T + 1000);

    for (const bool every_record : {true, false}) {
        CAPTURE(every_record);
        acct::AccountedJobs jobs;
        acct::SummaryAggregator summary(T + 1000);
        acct::FailureAggregator failures(T + 1000);
        std::vector<std::string> streamed_warnings;
        int decoded = 0;
        for (size_t first_run = 0; first_run < all.size();) {
            size_t end = first_run + 1;
            while (end < all.size() && all[end].job_id == all[first_run].job_id) ++end;
            std::vector<const slurm::AccountedRun*> runs;
            for (size_t k = first_run; k < end; ++k) runs.push_back(&all[k]);
            // What load.cpp decodes for --failures: a chain, or a job that ended badly.
            const bool records = every_record || runs.size() > 1 || runs.back()->state == "FAILED";
            decoded += records;
            const auto& job = jobs.next(runs, records, streamed_warnings);
            summary.add(job);
            failures.add(job, jobs.diagnoses());
            first_run = end;
        }
        if (!every_record) CHECK(decoded == 3);
        const auto s = summary.rows();
        const auto f = failures.rows();
        REQUIRE(f.size() == failures_held.size());
        for (size_t i = 0; i < f.size(); ++i) {
            CHECK(f[i].reason == failures_held[i].reason);
            CHECK(f[i].num == failures_held[i].num);
            CHECK(f[i].gpu_hours == failures_held[i].gpu_hours);
            CHECK(f[i].ttf_median_s == failures_held[i].ttf_median_s);
        }
        REQUIRE(s.size() == summary_held.size());
        for (size_t i = 0; i < s.size(); ++i) {
            CHECK(s[i].value == summary_held[i].value);
            CHECK(s[i].jobs == summary_held[i].jobs);
            CHECK(s[i].gpu_hours == summary_held[i].gpu_hours);
        }
        // A damaged record is noticed only when it is read.
        CHECK(streamed_warnings.size() == (every_record ? 1u : 0u));
    }
    CHECK(warnings.size() == 1);
}

TEST_CASE("slurmdbd, one job at a time: without its records a job has slurmdbd's fields, its runs counted by rows") {
    auto first = run(7, 10, "REQUEUED", two_node_comment(7, 0));
    auto second = run(7, 11, "COMPLETED", two_node_comment(7, 3));
    acct::AccountedJobs jobs;
    std::vector<std::string> warnings;
    const std::vector<const slurm::AccountedRun*> runs = {&first, &second};
    const auto& bare = jobs.next(runs, false, warnings);
    CHECK(bare.state == "COMPLETED");
    CHECK(bare.gpus_total == 4);
    CHECK(bare.restarts == 1);
    CHECK(bare.nodes.empty());
    CHECK(jobs.diagnoses().empty());
    // With them: the record's own run number, its nodes and each run's diagnoses.
    const auto& full = jobs.next(runs, true, warnings);
    CHECK(full.restarts == 3);
    CHECK(full.nodes.size() == 2);
    CHECK(jobs.diagnoses().size() == 2);
    CHECK(warnings.empty());
}
