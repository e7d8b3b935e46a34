// gpuacct's Prometheus source: the queries it sends, and Prometheus' /api/v1/query answers (as
// the HTTP API writes them) turned into the GpuSummary rows of a running job.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "acct/gpuacct/core/aggregate.hpp"
#include "acct/gpuacct/core/prometheus_source.hpp"

using namespace acme;
using acct::prometheus::Collector;
using acct::prometheus::Stat;

namespace {

// One series of an instant vector, labelled as the sampler's textfile labels it.
std::string series(const char* node, int gpu, const char* value, long long job = 7) {
    return fmt::format(R"({{"metric":{{"Hostname":"{}","gpu":"{}","hpc_job":"{}"}},"value":[1793491200.5,"{}"]}})", node,
                       gpu, job, value);
}

std::string vector_of(const std::vector<std::string>& items) {
    std::string joined;
    for (const auto& i : items) joined += (joined.empty() ? "" : ",") + i;
    return R"({"status":"success","data":{"resultType":"vector","result":[)" + joined + "]}}";
}

const std::vector<std::int64_t> kJobs = {7};

}  // namespace

TEST_CASE("one query per metric for every job of the batch, each over the range given") {
    const std::vector<std::int64_t> ids = {12, 13, 40};
    const auto queries = acct::prometheus::build_queries(ids, 95);
    CHECK(queries.size() == 11);
    for (const auto& q : queries) {
        CHECK(q.expr.find(R"(hpc_job=~"12|13|40")") != std::string::npos);
        CHECK(q.expr.find("by (hpc_job, Hostname, gpu)") != std::string::npos);
        // The job is on the info series only (gputrace(8)): every query selects through it.
        CHECK(q.expr.find(R"(acme_job_gpu_info{hpc_job=~"12|13|40"})") != std::string::npos);
    }
    CHECK(queries[0].stat == Stat::samples);
    // Scrapes of the job's own info series, not subquery points.
    CHECK(queries[0].expr == R"(sum by (hpc_job, Hostname, gpu) (count_over_time(acme_job_gpu_info{hpc_job=~"12|13|40"}[95s])))");
    const auto energy = std::find_if(queries.begin(), queries.end(), [](const auto& q) { return q.stat == Stat::energy; });
    REQUIRE(energy != queries.end());
    // The GPU series joined to the job inside a subquery, so a point counts for the job that
    // held the GPU at that moment.
    CHECK(energy->expr ==
          R"(max by (hpc_job, Hostname, gpu) (max_over_time((DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION * on(Hostname, gpu) )"
          R"(group_left(hpc_job) acme_job_gpu_info{hpc_job=~"12|13|40"})[95s:1s]) - )"
          R"(min_over_time((DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION * on(Hostname, gpu) group_left(hpc_job) )"
          R"(acme_job_gpu_info{hpc_job=~"12|13|40"})[95s:1s])))");
    // A job that began this second still has a range Prometheus accepts.
    CHECK(acct::prometheus::build_queries(ids, 0)[0].expr.find("[1s]") != std::string::npos);
    CHECK(acct::prometheus::build_queries(ids, 0)[1].expr.find("[1s:1s]") != std::string::npos);
    // A long run keeps a series to 2000 points at most.
    CHECK(acct::prometheus::subquery_step(3 * 86400) == 130);
    CHECK(acct::prometheus::build_queries(ids, 3 * 86400)[1].expr.find("[259200s:130s]") != std::string::npos);
    CHECK(acct::prometheus::query_target("up{a=\"b\"}") == "/api/v1/query?query=up%7Ba%3D%22b%22%7D");
}

TEST_CASE("answers become one row per (job, node, GPU) in the spool's units, judged by the spool's rule") {
    Collector c(kJobs);
    CHECK(c.add(Stat::samples, vector_of({series("n1", 0, "12"), series("n1", 1, "12"), series("n2", 0, "11")})) == "");
    CHECK(c.add(Stat::util_avg, vector_of({series("n1", 0, "70"), series("n1", 1, "20"), series("n2", 0, "3")})) == "");
    CHECK(c.add(Stat::util_max, vector_of({series("n1", 0, "75"), series("n1", 1, "40"), series("n2", 0, "4")})) == "");
    CHECK(c.add(Stat::mem_max, vector_of({series("n1", 0, "1024.5")})) == "");
    CHECK(c.add(Stat::mem_total, vector_of({series("n1", 0, "81920")})) == "");
    CHECK(c.add(Stat::power_avg, vector_of({series("n1", 0, "250.25")})) == "");
    CHECK(c.add(Stat::power_max, vector_of({series("n1", 0, "300.4")})) == "");
    CHECK(c.add(Stat::energy, vector_of({series("n1", 0, "123456")})) == "");
    CHECK(c.add(Stat::temp_max, vector_of({series("n1", 0, "66")})) == "");
    CHECK(c.add(Stat::xids, vector_of({series("n2", 0, "2")})) == "");
    CHECK(c.add(Stat::ecc, vector_of({series("n2", 0, "1")})) == "");
    const auto rows = c.summaries();
    REQUIRE(rows.size() == 3);
    const auto& a = rows[0];
    CHECK(a.job_id == 7);
    CHECK(a.node == "n1");
    CHECK(a.gpu == 0);
    CHECK(a.so_far);
    CHECK(a.samples == 12);
    CHECK(*a.util_avg == doctest::Approx(70));
    CHECK(*a.util_max == doctest::Approx(75));
    CHECK(*a.mem_max == 1074266112);  // 1024.5 MiB in bytes
    CHECK(*a.mem_total == 81920LL * 1048576);
    CHECK(*a.power_avg_mw == doctest::Approx(250250));
    CHECK(*a.power_max_mw == 300400);
    CHECK(*a.energy_mj == 123456);
    CHECK(*a.temp_max == 66);
    CHECK(a.xids == 0);
    CHECK(a.verdict == "ok");
    CHECK(rows[1].node == "n1");
    CHECK(rows[1].gpu == 1);
    CHECK(rows[1].verdict == "low-util");
    CHECK_FALSE(rows[1].mem_max);
    CHECK(rows[2].node == "n2");
    CHECK(rows[2].verdict == "idle");
    CHECK(rows[2].xids == 2);
    CHECK(*rows[2].ecc_uncorrected == 1);

    // What gpuacct shows of them: the job's mean of its GPUs' averages, and its worst verdict.
    const auto use = acct::gpu_use_by_job(rows);
    REQUIRE(use.count(7) == 1);
    CHECK(*use.at(7).util_avg == doctest::Approx((70 + 20 + 3) / 3.0));
    CHECK(use.at(7).verdict == "low-util");
    CHECK(use.at(7).gpus == 3);
}

TEST_CASE("NaN and infinite values, missing or odd labels and other jobs' series are skipped") {
    Collector c(kJobs);
    const std::string answer = vector_of({
        series("n1", 0, "NaN"),
        series("n1", 1, "+Inf"),
        series("n1", 2, "-Inf"),
        series("n1", 3, "1e300"),
        series("n1", 4, "70abc"),
        series("n1", 5, "70", 8),  // not a job asked about
        R"({"metric":{"gpu":"0","hpc_job":"7"},"value":[1,"70"]})",                    // no Hostname
        R"({"metric":{"Hostname":"n1","hpc_job":"7"},"value":[1,"70"]})",              // no gpu
        R"({"metric":{"Hostname":"n1","gpu":"0"},"value":[1,"70"]})",                  // no hpc_job
        R"({"metric":{"Hostname":"n1","gpu":"x","hpc_job":"7"},"value":[1,"70"]})",    // gpu not a number
        R"({"metric":{"Hostname":"","gpu":"0","hpc_job":"7"},"value":[1,"70"]})",      // empty Hostname
        R"({"metric":{"Hostname":"n1","gpu":"-1","hpc_job":"7"},"value":[1,"70"]})",   // negative gpu
        R"({"metric":{"Hostname":"n1","gpu":"0","hpc_job":"7 "},"value":[1,"70"]})",   // trailing space
        R"({"metric":{"Hostname":"n1","gpu":"0","hpc_job":"7"},"value":[1]})",         // no value
        R"({"metric":{"Hostname":"n1","gpu":"0","hpc_job":"7"},"value":[1,null]})",    // null value
        series("n9", 0, "42"),
    });
    CHECK(c.add(Stat::util_avg, answer) == "");
    const auto rows = c.summaries();
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].node == "n9");
    CHECK(*rows[0].util_avg == doctest::Approx(42));
    // No count or maximum scraped: nothing to judge.
    CHECK(rows[0].samples == 0);
    CHECK(rows[0].verdict == "no-data");
}

TEST_CASE("an empty answer gives no rows, and a job without utilisation series is no-data") {
    Collector c(kJobs);
    CHECK(c.add(Stat::samples, vector_of({})) == "");
    CHECK(c.summaries().empty());
    CHECK(c.add(Stat::power_avg, vector_of({series("n1", 0, "100")})) == "");
    const auto rows = c.summaries();
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].verdict == "no-data");
    CHECK(*rows[0].power_avg_mw == doctest::Approx(100000));
}

TEST_CASE("Prometheus' errors and malformed bodies are one phrase each, and add nothing") {
    Collector c(kJobs);
    CHECK(c.add(Stat::util_avg, R"({"status":"error","errorType":"bad_data","error":"1:10: parse error: unexpected"})") ==
          "query refused: bad_data: 1:10: parse error: unexpected");
    CHECK(c.add(Stat::util_avg, R"({"status":"error"})") == "query refused: no reason given");
    CHECK(c.add(Stat::util_avg, "<html>502 Bad Gateway</html>") == "not JSON");
    CHECK(c.add(Stat::util_avg, "") == "not JSON");
    CHECK(c.add(Stat::util_avg, "[1,2]") == "not a Prometheus answer");
    CHECK(c.add(Stat::util_avg, R"({"data":{}})") == "not a Prometheus answer (no status)");
    CHECK(c.add(Stat::util_avg, R"({"status":"success"})") == "not a Prometheus answer (no data)");
    CHECK(c.add(Stat::util_avg, R"({"status":"success","data":{"resultType":"matrix","result":[]}})") == "not an instant vector");
    CHECK(c.add(Stat::util_avg, R"({"status":"success","data":{"resultType":"vector","result":{}}})") == "not an instant vector");
    // One broken series spoils the answer: none of its good series is kept.
    CHECK(c.add(Stat::util_avg, vector_of({series("n1", 0, "70"), "17"})) == "not an instant vector");
    CHECK(c.add(Stat::util_avg, vector_of({series("n1", 0, "70"), R"({"value":[1,"2"]})"})) == "not an instant vector");
    CHECK(c.summaries().empty());
    // A long error is cut.
    const std::string long_error = std::string(R"({"status":"error","error":")") + std::string(5000, 'x') + "\"}";
    CHECK(c.add(Stat::util_avg, long_error).size() < 300);
}

TEST_CASE("running_summaries: every query answered gives rows; the first failure gives none and says why") {
    const std::vector<acct::prometheus::RunningJob> jobs = {{7, 1000}, {8, 0}};  // 8 has not started
    std::vector<std::string> asked;
    std::map<std::string, std::string> answers;
    auto get = [&](const std::string& target) {
        asked.push_back(target);
        util::HttpResponse r;
        r.status = 200;
        r.body = vector_of({series("n1", 0, target.find("count_over_time") != std::string::npos ? "10" : "50")});
        return r;
    };
    std::string error;
    const auto rows = acct::prometheus::running_summaries(get, jobs, 1060, error);
    CHECK(error == "");
    CHECK(asked.size() == 11);
    // Job 7 alone, over its 60 s.
    CHECK(asked[0].find(util::url_encode(R"(hpc_job=~"7")")) != std::string::npos);
    CHECK(asked[0].find(util::url_encode("[60s]")) != std::string::npos);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].samples == 10);
    CHECK(rows[0].verdict == "ok");

    asked.clear();
    auto refused = [&](const std::string& target) {
        asked.push_back(target);
        util::HttpResponse r;
        r.error = "connection refused";
        return r;
    };
    CHECK(acct::prometheus::running_summaries(refused, jobs, 1060, error).empty());
    CHECK(error == "connection refused");
    CHECK(asked.size() == 1);  // not eleven timeouts in a row

    int n = 0;
    auto bad_later = [&](const std::string&) {
        util::HttpResponse r;
        r.status = ++n < 3 ? 200 : 400;
        r.body = n < 3 ? vector_of({series("n1", 0, "50")}) : R"({"status":"error","errorType":"bad_data","error":"bad"})";
        return r;
    };
    CHECK(acct::prometheus::running_summaries(bad_later, jobs, 1060, error).empty());
    CHECK(error == "HTTP 400: query refused: bad_data: bad");

    auto proxy_page = [&](const std::string&) {
        util::HttpResponse r;
        r.status = 404;
        r.body = "<html>not found</html>";
        return r;
    };
    CHECK(acct::prometheus::running_summaries(proxy_page, jobs, 1060, error).empty());
    // No Prometheus API at that path (node_exporter 1.6+ at the wrong port answers so).
    CHECK(error == "HTTP 404 (is this Prometheus' URL?)");

    auto gateway_error = [&](const std::string&) {
        util::HttpResponse r;
        r.status = 502;
        r.body = "<html>bad gateway</html>";
        return r;
    };
    CHECK(acct::prometheus::running_summaries(gateway_error, jobs, 1060, error).empty());
    CHECK(error == "HTTP 502");

    auto landing_page = [&](const std::string&) {
        util::HttpResponse r;
        r.status = 200;
        r.body = "<html>Node Exporter</html>";
        return r;
    };
    CHECK(acct::prometheus::running_summaries(landing_page, jobs, 1060, error).empty());
    CHECK(error == "not JSON (is this Prometheus' URL?)");

    // No job started: nothing asked.
    asked.clear();
    error.clear();
    const std::vector<acct::prometheus::RunningJob> pending = {{9, 0}};
    CHECK(acct::prometheus::running_summaries(refused, pending, 1060, error).empty());
    CHECK(asked.empty());
    CHECK(error == "");
}

TEST_CASE("many running jobs are asked in batches, each over its own oldest job's elapsed time") {
    std::vector<acct::prometheus::RunningJob> jobs;
    for (int i = 1; i <= 250; ++i) jobs.push_back({i, 1000.0 + i});  // job 1 oldest
    std::vector<std::string> asked;
    auto get = [&](const std::string& target) {
        asked.push_back(target);
        util::HttpResponse r;
        r.status = 200;
        r.body = vector_of({});
        return r;
    };
    std::string error;
    acct::prometheus::running_summaries(get, jobs, 2000, error);
    CHECK(error == "");
    REQUIRE(asked.size() == 22);
    // Newest first: jobs 250..51 over job 51's 949 s, then 50..1 over job 1's 999 s.
    CHECK(asked[0].find(util::url_encode("[949s]")) != std::string::npos);
    CHECK(asked[11].find(util::url_encode("[999s]")) != std::string::npos);
    CHECK(asked[11].find(util::url_encode(R"(hpc_job=~"50|49|)")) != std::string::npos);
}
