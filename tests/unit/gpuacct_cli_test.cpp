// gpuacct as a user runs it, on a temporary spool: what it prints, what it refuses.
#include <doctest/doctest.h>

#include <cctype>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "acct/gpuacct/cli.hpp"
#include "common/util/version.hpp"
#include "tests/unit/acct_spool_fixture.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;

namespace {

constexpr double T = 1793491200;  // 2026-11-01T00:00:00Z

struct Run {
    int status;
    std::string out, err;
};

struct Cluster {
    test::TempDir dir;
    Cluster() {
        setenv("TZ", "UTC", 1);
        tzset();
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        auto n2 = store::open_spool(store::spool_path(dir.path().string(), "n2"));
        test::add_job(n1, {.id = 101, .node = "n1", .gpus = "0,1", .name = "llama-pretrain", .state = "FAILED",
                           .gpus_total = 2, .submit = T, .start = T + 30, .end = T + 7230, .exit_code = "1:0"});
        test::add_gpu(n1, 101, "n1", 0, 91.25, 100, 60LL << 30, "ok");
        test::add_gpu(n1, 101, "n1", 1, 88.75, 99, 59LL << 30, "ok");
        test::add_diagnosis(n1, 101, 0, "n1", T + 7230, "infrastructure", "nccl_timeout");
        test::add_job(n2, {.id = 102, .node = "n2", .gpus = "3", .user = "bob", .name = "mmlu", .type = "eval",
                           .gpus_total = 1, .submit = T + 100, .start = T + 100, .end = T + 700});
        test::add_gpu(n2, 102, "n2", 3, 2, 10, 1LL << 30, "idle");
        test::add_event(n1, 101, 1, T + 7000, "xid", 74);
        n1.prepare("INSERT INTO recoveries (job_id, restart, node, ts, drained, drain_reason, requeued, outcome) "
                   "VALUES (101, 0, 'n1', ?, 1, 'acme: nccl_timeout', 0, 'drained')")
            .bind(1, T + 7231)
            .run();
        n1.prepare("INSERT INTO health_checks (node, ts, job_id, passed, detail) VALUES ('n1', ?, 103, 0, 'GPU 1 lost')")
            .bind(1, T + 8000)
            .run();
    }
    Run run(std::vector<std::string> args, bool root = true) {
        args.insert(args.begin(), {"--spool-dir", dir.path().string()});
        gpuacct::Environment env;
        env.now = T + 86400;
        env.is_root = root;
        env.user = "bob";
        std::ostringstream out, err;
        const int status = gpuacct::run(args, env, out, err);
        return {status, out.str(), err.str()};
    }
};

}  // namespace

TEST_CASE("-P --format prints sacct's parsable2 style: '|' between fields, none at the end") {
    Cluster c;
    const auto r = c.run({"-S", "2026-11-01", "-P", "--format=JobID,JobName,State,ExitCode,AllocGPUS,GPUIDs,Reason"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out ==
          "JobID|JobName|State|ExitCode|AllocGPUS|GPUIDs|Reason\n"
          "101|llama-pretrain|FAILED|1:0|2|n1:0,1|nccl_timeout\n"
          "102|mmlu|COMPLETED|0:0|1|n2:3|\n");
}

TEST_CASE("-n -p drops the header and keeps sacct's trailing '|'") {
    Cluster c;
    const auto r = c.run({"-j", "102", "-n", "-p", "-o", "jobid,user,verdict"});
    CHECK(r.out == "102|bob|idle|\n");
}

TEST_CASE("the table pads to sacct's widths, truncates with '+', honours %WIDTH and %-WIDTH") {
    Cluster c;
    const auto r = c.run({"-j", "101", "--format=JobID,JobName,GPUUtil,GPUUtilMax%5,Verdict%-4"});
    CHECK(r.out ==
          "JobID           JobName GPUUtil GPUUt Verd \n"
          "------------ ---------- ------- ----- ---- \n"
          "101          llama-pre+    90.0 100.0 ok   \n");
}

TEST_CASE("default view shows GPU use, GPU-hours, verdict and reason") {
    Cluster c;
    const auto r = c.run({"-S", "2026-11-01", "-E", "2026-11-02", "-P"});
    // CPUEff and MaxRSS (seff's) come from slurmdbd: a spool has none.
    CHECK(r.out ==
          "JobID|JobName|User|Type|State|AllocGPUS|Elapsed|GPUUtil|GPUUtilMax|GPUMemMax|GPUHours|CPUEff|MaxRSS|Verdict|Reason\n"
          "101|llama-pretrain|alice|pretrain|FAILED|2|02:00:00|90.0|100.0|60G|4.00|||ok|nccl_timeout\n"
          "102|mmlu|bob|eval|COMPLETED|1|00:10:00|2.0|10.0|1G|0.17|||idle|\n");
}

TEST_CASE("--json names its source; --source is checked before anything is read") {
    Cluster c;
    const auto r = c.run({"-S", "2026-11-01", "-E", "2026-11-02", "--json"});
    CHECK(r.status == 0);
    CHECK(nlohmann::json::parse(r.out)["source"] == "spool");
    const auto bad = c.run({"--source", "sacct", "-j", "101"});
    CHECK(bad.status == 1);
    CHECK(bad.out.empty());
    CHECK(bad.err.find("gpuacct: error: ") == 0);
    const auto both = c.run({"--source", "slurmdbd", "-j", "101"});  // run() gives --spool-dir
    CHECK(both.status == 1);
    CHECK(both.err == "gpuacct: error: --spool-dir reads node spools, --source slurmdbd does not: give one\n");
    // Without slurm.conf (the tests' environment) slurmdbd cannot be asked: one line, exit 1.
    gpuacct::Environment env;
    env.now = T + 86400;
    std::ostringstream out, err;
    CHECK(gpuacct::run({"--source", "slurmdbd", "-j", "101"}, env, out, err) == 1);
    CHECK(out.str().empty());
    CHECK(err.str() == "gpuacct: error: --source slurmdbd: no slurm.conf found (set SLURM_CONF): use --source spool\n");
}

TEST_CASE("filters: -u, -s, --type, and a non-root user sees only their own jobs") {
    Cluster c;
    CHECK(c.run({"-S", "1101", "-n", "-P", "-o", "JobID", "-u", "alice"}).out == "101\n");
    CHECK(c.run({"-S", "1101", "-n", "-P", "-o", "JobID", "-s", "CD"}).out == "102\n");
    CHECK(c.run({"-S", "1101", "-n", "-P", "-o", "JobID", "--type", "pretrain"}).out == "101\n");
    CHECK(c.run({"-S", "1101", "-n", "-P", "-o", "JobID"}, false).out == "102\n");
    CHECK(c.run({"-S", "1101", "-n", "-P", "-o", "JobID", "-a"}, false).out == "101\n102\n");
}

TEST_CASE("--failures orders by Table 3 and carries GPU time") {
    Cluster c;
    const auto r = c.run({"--failures", "-S", "2026-11-01", "-P"});
    CHECK(r.out ==
          "Category|Reason|Num|GPUDemand|GPUHours|GPUTimePct|TTFMedian\n"
          "infrastructure|nccl_timeout|1|2.0|4.00|100.00|02:00:00\n");
}

TEST_CASE("--nodes counts XIDs and attributes infrastructure failures to the node that diagnosed them") {
    Cluster c;
    const auto r = c.run({"--nodes", "-S", "2026-11-01", "-P", "-o", "NodeName,XIDs,Jobs,Failures,InfraFail,Drains,LastHealth"});
    CHECK(r.out ==
          "NodeName|XIDs|Jobs|Failures|InfraFail|Drains|LastHealth\n"
          "n1|1|1|1|1|1|FAIL: GPU 1 lost\n"
          "n2|0|1|0|0|0|\n");
}

TEST_CASE("--summary characterizes the period by type, state and GPU count") {
    Cluster c;
    const auto r = c.run({"--summary", "-S", "2026-11-01", "-P", "-o", "Group,Value,Jobs,GPUHours"});
    CHECK(r.out.find("all|all|2|4.17\n") != std::string::npos);
    CHECK(r.out.find("type|eval|1|0.17\n") != std::string::npos);
    CHECK(r.out.find("state|FAILED|1|4.00\n") != std::string::npos);
    CHECK(r.out.find("gpus|2-4|1|4.00\n") != std::string::npos);
}

TEST_CASE("--json has typed values and the same numbers as the table") {
    Cluster c;
    const auto r = c.run({"-j", "101", "--json"});
    const auto json = nlohmann::json::parse(r.out);
    CHECK(json["view"] == "jobs");
    const auto& row = json["rows"][0];
    CHECK(row["JobID"] == 101);
    CHECK(row["GPUUtil"] == 90.0);
    CHECK(row["GPUMemMax"] == (60LL << 30));
    CHECK(row["Elapsed"] == 7200);
    CHECK(row["Reason"] == "nccl_timeout");
    CHECK(row["Start"] == static_cast<long long>(T + 30));
    CHECK(json["period"]["start"].is_null());
}

TEST_CASE("bad input: one line naming the thing, exit 1, nothing on stdout") {
    Cluster c;
    auto refused = [&](std::vector<std::string> args, const std::string& expected) {
        const auto r = c.run(std::move(args));
        CHECK(r.status == 1);
        CHECK(r.out.empty());
        INFO(r.err);
        CHECK(r.err.find(expected) != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    };
    refused({"--format=JobID,Foo"}, "gpuacct: error: Invalid field requested: \"Foo\" (gpuacct --helpformat lists the fields)");
    refused({"--failures", "-o", "JobID"}, "(gpuacct --failures --helpformat lists the fields)");
    refused({"-S", "yesterday"}, "gpuacct: error: Invalid time for --starttime: \"yesterday\"");
    refused({"-s", "DONE"}, "gpuacct: error: Invalid state: \"DONE\"");
    refused({"-j", "12x"}, "gpuacct: error: Invalid job id: \"12x\"");
    refused({"--type", "training"}, "gpuacct: error: Invalid job type: \"training\"");
    refused({"--bogus"}, "gpuacct: error: ");
    refused({"--nodes", "--summary"}, "gpuacct: error: ");
    refused({"-S", "now", "-E", "now-1days"}, "requested is after end time");
    refused({"--spool-dir", "/nonexistent/acme"}, "cannot read telemetry directory /nonexistent/acme");
    refused({"--detail"}, "gpuacct: error: --detail shows the jobs given with -j: add -j JOBID[,JOBID...]");
    refused({"--live", "abc", "-j", "1"}, "gpuacct: error: --live: want a number from 0.5 to 3600, got 'abc'");
}

TEST_CASE("--help reads as a person's: types and defaults, no CLI11 checks or Excludes glued on") {
    Cluster c;
    const auto r = c.run({"--help"});
    CHECK(r.status == 0);
    CHECK(r.out.find("--live FLOAT [2]") != std::string::npos);
    CHECK(r.out.find("Excludes") == std::string::npos);
    CHECK(r.out.find("a number from") == std::string::npos);
    // CLI11 2.6 wraps the description: compare its words, not its line breaks.
    std::string words;
    for (char ch : r.out)
        if (!(std::isspace(static_cast<unsigned char>(ch)) && (words.empty() || words.back() == ' '))) words += std::isspace(static_cast<unsigned char>(ch)) ? ' ' : ch;
    CHECK(words.find("from Slurm's accounting (slurmdbd) or the acme node spools") != std::string::npos);
}

TEST_CASE("--version prints the one version line on stdout, also beside a subcommand") {
    Cluster c;
    for (const std::vector<std::string>& args : {std::vector<std::string>{"--version"}, {"report", "--version"}}) {
        const auto r = c.run(args);
        CHECK(r.status == 0);
        CHECK(r.out == acme::version_line("gpuacct") + "\n");
        CHECK(r.err.empty());
    }
}

TEST_CASE("a corrupt node file is reported on stderr and the rest is shown") {
    Cluster c;
    std::ofstream(c.dir.file("n9.db")) << "garbage, not a database file at all; long enough to have a header";
    const auto r = c.run({"-S", "1101", "-n", "-P", "-o", "JobID"});
    CHECK(r.status == 0);
    CHECK(r.out == "101\n102\n");
    CHECK(r.err.find("gpuacct: warning: skipped n9.db: ") == 0);
}

TEST_CASE("--helpformat lists the view's fields") {
    Cluster c;
    const auto r = c.run({"--failures", "-e"});
    CHECK(r.out.find("Category") == 0);
    CHECK(r.out.find("TTFMedian") != std::string::npos);
    CHECK(c.run({"-e"}).out.find("GPUUtilMax") != std::string::npos);
}

TEST_CASE("report --html writes one page with the data embedded and nothing fetched") {
    Cluster c;
    const std::string page = c.dir.file("report.html");
    const auto r = c.run({"-S", "2026-11-01", "report", "--html", page});
    CHECK(r.status == 0);
    std::ifstream in(page);
    const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(html.find("id=\"gpuacct-data\"") != std::string::npos);
    CHECK(html.find("nccl_timeout") != std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
    CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));
    CHECK(html.find("https://") == std::string::npos);
}

TEST_CASE("--prometheus: a URL that does not parse is a usage error; the flag wins over ACME_PROMETHEUS_URL") {
    Cluster c;
    const auto bad = c.run({"--prometheus", "foo", "-j", "101"});
    CHECK(bad.status == 1);
    CHECK(bad.out.empty());
    CHECK(bad.err ==
          "gpuacct: error: --prometheus \"foo\": not an http:// URL: give http://HOST:PORT of the site's Prometheus\n");
    CHECK(c.run({"--prometheus", "https://prom:9090", "-j", "101"}).err.find("https is not supported") != std::string::npos);
    gpuacct::Environment env;
    env.now = T + 86400;
    env.prometheus_url = "prom:9090";
    std::ostringstream out, err;
    CHECK(gpuacct::run({"--spool-dir", c.dir.path().string(), "-j", "101"}, env, out, err) == 1);
    CHECK(out.str().empty());
    CHECK(err.str().starts_with("gpuacct: error: ACME_PROMETHEUS_URL \"prom:9090\": "));
    // An empty flag asks no Prometheus, whatever the environment says.
    std::ostringstream out2, err2;
    CHECK(gpuacct::run({"--spool-dir", c.dir.path().string(), "--prometheus", "", "-j", "101", "-n", "-P", "-o", "JobID"}, env,
                       out2, err2) == 0);
    CHECK(out2.str() == "101\n");
    // The node spools have their own numbers: Prometheus is for slurmdbd's running jobs only
    // (port 1: were it asked, a warning would say so).
    const auto spool = c.run({"--prometheus", "http://127.0.0.1:1", "-j", "101", "-n", "-P", "-o", "JobID,GPUUtil"});
    CHECK(spool.status == 0);
    CHECK(spool.out == "101|90.0\n");
    CHECK(spool.err.empty());
}
