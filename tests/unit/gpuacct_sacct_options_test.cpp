// gpuacct's sacct options (issue 17) and the jobstats-style job view, on a temporary spool as
// a user runs the command; the job view's notes and config, and the -k/-K parser, as pure code.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "acct/gpuacct/cli.hpp"
#include "acct/gpuacct/core/job_detail.hpp"
#include "acct/gpuacct/core/sacct_filters.hpp"
#include "acct/gpuacct/core/yaml.hpp"
#include "tests/unit/acct_spool_fixture.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;

namespace {

constexpr double T = 1793491200;  // 2026-11-01T00:00:00Z

struct Run {
    int status;
    std::string out, err;
};

struct Spools {
    test::TempDir dir;
    std::string config;
    Spools() {
        setenv("TZ", "UTC", 1);
        tzset();
        auto n1 = store::open_spool(store::spool_path(dir.path().string(), "n1"));
        auto n2 = store::open_spool(store::spool_path(dir.path().string(), "n2"));
        test::add_job(n1, {.id = 101, .node = "n1", .gpus = "0,1", .name = "llama-pretrain", .state = "FAILED",
                           .gpus_total = 2, .submit = T, .start = T + 30, .end = T + 7230, .exit_code = "1:0"});
        test::add_gpu(n1, 101, "n1", 0, 91.25, 100, 60LL << 30, "ok");
        test::add_gpu(n1, 101, "n1", 1, 1.5, 3, 2LL << 30, "idle");
        test::add_event(n1, 101, 1, T + 7000, "xid", 79);
        // GPM where the sampler read it (Hopper): two samples of GPU 0.
        for (int i = 0; i < 2; ++i)
            n1.prepare("INSERT INTO gpu_samples (job_id, gpu, ts, util_gpu, gpm_sm_util, gpm_tensor_util, gpm_dram_bw_util) "
                       "VALUES (101, 0, ?, 90, ?, 40, 20)")
                .bind_all(T + 100 + i, 60.0 + 10 * i)
                .run();
        test::add_job(n2, {.id = 102, .node = "n2", .gpus = "3", .user = "bob", .name = "mmlu", .type = "eval",
                           .gpus_total = 1, .submit = T + 100, .start = T + 100, .end = T + 700});
        test::add_gpu(n2, 102, "n2", 3, 2, 10, 1LL << 30, "idle");
    }
    Run run(std::vector<std::string> args) {
        args.insert(args.begin(), {"--spool-dir", dir.path().string()});
        gpuacct::Environment env;
        env.now = T + 86400;
        env.config_path = config;
        env.config_given = !config.empty();
        std::ostringstream out, err;
        const int status = gpuacct::run(args, env, out, err);
        return {status, out.str(), err.str()};
    }
};

// A job that ran `elapsed` seconds from T on `gpus` GPUs and ended in `state`.
acme::acct::JobDetail ended_job(std::int64_t id, const char* state, double elapsed, int gpus) {
    acme::acct::JobDetail d;
    d.job_id = id;
    d.state = state;
    d.start = T;
    d.end = T + elapsed;
    d.elapsed_s = elapsed;
    d.alloc_gpus = gpus;
    return d;
}

}  // namespace

TEST_CASE("-N and --name select jobs as sacct does: any node of the list (ranges too), exact names") {
    Spools s;
    CHECK(s.run({"-S", "2026-11-01", "-X", "-P", "-n", "-o", "JobID", "-N", "n2"}).out == "102\n");
    CHECK(s.run({"-S", "2026-11-01", "-X", "-P", "-n", "-o", "JobID", "-N", "n[1-2]"}).out == "101\n102\n");
    CHECK(s.run({"-S", "2026-11-01", "-X", "-P", "-n", "-o", "JobID", "-N", "n9"}).out.empty());
    CHECK(s.run({"-S", "2026-11-01", "-X", "-P", "-n", "-o", "JobID", "--name", "mmlu,other"}).out == "102\n");
    CHECK(s.run({"-S", "2026-11-01", "-X", "-P", "-n", "-o", "JobID", "--name", "mml"}).out.empty());
}

TEST_CASE("-b, -o ALL, --delimiter and -V follow sacct") {
    Spools s;
    CHECK(s.run({"-j", "102", "-X", "-b", "-P"}).out == "JobID|State|ExitCode\n102|COMPLETED|0:0\n");
    // -o wins over -b, as in sacct.
    CHECK(s.run({"-j", "102", "-X", "-b", "-P", "-n", "-o", "User"}).out == "bob\n");
    const auto all = s.run({"-j", "102", "-X", "-P", "-o", "ALL"});
    CHECK(all.status == 0);
    const auto header = all.out.substr(0, all.out.find('\n'));
    CHECK(header.find("JobID|JobName|User|UID|") == 0);
    CHECK(header.find("|MemEff") != std::string::npos);
    CHECK(s.run({"-j", "102", "-X", "-P", "-n", "-o", "JobID,User,State", "--delimiter", ";;"}).out == "102;;bob;;COMPLETED\n");
    CHECK(s.run({"-j", "102", "-X", "-p", "-n", "-o", "JobID,User", "--delimiter", ","}).out == "102,bob,\n");
    // Without -p/-P the delimiter is ignored, as sacct says.
    CHECK(s.run({"-j", "102", "-X", "-n", "-o", "JobID%5", "--delimiter", ","}).out == "  102 \n");
    const auto v = s.run({"-V"});
    CHECK(v.status == 0);
    CHECK(v.out.find("gpuacct ") == 0);
}

TEST_CASE("--units and --noconvert print memory as sacct's convert_num_unit does") {
    Spools s;
    CHECK(s.run({"-j", "101", "-X", "-P", "-n", "-o", "GPUMemMax"}).out == "60G\n");
    CHECK(s.run({"-j", "101", "-X", "-P", "-n", "-o", "GPUMemMax", "--units", "M"}).out == "61440M\n");
    CHECK(s.run({"-j", "101", "-X", "-P", "-n", "-o", "GPUMemMax", "--units", "t"}).out == "0.06T\n");
    // GPU memory is recorded in MiB: --noconvert keeps it there; --units wins over it.
    CHECK(s.run({"-j", "101", "-X", "-P", "-n", "-o", "GPUMemMax", "--noconvert"}).out == "61440M\n");
    CHECK(s.run({"-j", "101", "-X", "-P", "-n", "-o", "GPUMemMax", "--noconvert", "--units", "G"}).out == "60G\n");
    const auto bad = s.run({"-j", "101", "--units", "X"});
    CHECK(bad.status == 1);
    CHECK(bad.out.empty());
}

TEST_CASE("-T cuts start and end to the period; Elapsed follows") {
    Spools s;
    // Job 101 ran 00:00:30 to 02:00:30.
    const auto r = s.run({"-S", "2026-11-01T01:00:00", "-E", "2026-11-01T01:30:00", "-T", "-X", "-P", "-n", "-N", "n1",
                          "-o", "JobID,Start,End,Elapsed"});
    CHECK(r.out == "101|2026-11-01T01:00:00|2026-11-01T01:30:00|00:30:00\n");
}

TEST_CASE("options that need slurmdbd's fields say so on the spools; -M and -L are accepted") {
    Spools s;
    for (auto opt : {"-q", "-g", "-k", "-x"}) {
        const auto r = s.run({"-j", "101", opt, opt == std::string("-g") ? "0" : "1"});
        CHECK(r.status == 1);
        CHECK(r.out.empty());
        CHECK(r.err.find("need Slurm's accounting (slurmdbd)") != std::string::npos);
    }
    CHECK(s.run({"-j", "101", "-X", "-P", "-n", "-o", "JobID", "-L"}).out == "101\n");
    CHECK(s.run({"-j", "101", "-k", "1-2:x"}).err.find("Invalid time limit") != std::string::npos);
    CHECK(s.run({"-j", "101", "-D", "-X", "-P", "-n", "-o", "JobID"}).out == "101\n");
}

TEST_CASE("--yaml is --json's document as YAML") {
    Spools s;
    const auto r = s.run({"-j", "102", "-X", "--yaml", "-o", "JobID,User"});
    CHECK(r.status == 0);
    CHECK(r.out.find("---\n") == 0);
    CHECK(r.out.find("\"rows\":\n  -\n    \"JobID\": 102\n    \"User\": \"bob\"\n") != std::string::npos);
    CHECK(acct::to_yaml(nlohmann::json::parse(R"({"a":[],"b":{"c":null,"d":"x: y"}})")) ==
          "---\n\"a\": []\n\"b\":\n  \"c\": null\n  \"d\": \"x: y\"\n");
}

TEST_CASE("--detail: per node and GPU lines, GPM where recorded, XIDs, notes in words") {
    Spools s;
    const auto r = s.run({"-j", "101", "--detail"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("Job ID: 101") != std::string::npos);
    CHECK(r.out.find("  n1\n    GPU 0: util 91.2% mean, 100.0% max; memory 60.0GiB/80.0GiB (75.0%)") != std::string::npos);
    CHECK(r.out.find("GPM: SM 65.0%, tensor 40.0%, DRAM bandwidth 20.0%") != std::string::npos);
    CHECK(r.out.find("    GPU 1: util 1.5% mean, 3.0% max; memory 2.0GiB/80.0GiB (2.5%)") != std::string::npos);
    CHECK(r.out.find("XID 79") != std::string::npos);
    CHECK(r.out.find("Time Limit: unknown") != std::string::npos);
    CHECK(r.out.find("1 of the job's 2 GPUs with data never went above 5% utilisation (n1 GPU 1)") != std::string::npos);
    // -j -l: sacct's long listing, then the same view under it.
    const auto l = s.run({"-j", "101", "-l", "-X"});
    CHECK(l.out.find("JobID ") == 0);
    CHECK(l.out.substr(0, l.out.find('\n')).find(" Partition ") != std::string::npos);
    if (getenv("SHOW")) MESSAGE(l.out);
    CHECK(l.out.find("GPU Job Statistics") != std::string::npos);
    CHECK(s.run({"-j", "101", "-l", "-X", "-P"}).out.find("GPU Job Statistics") == std::string::npos);
    const auto none = s.run({"-j", "999", "--detail"});
    CHECK(none.status == 1);
    CHECK(none.out.empty());
}

TEST_CASE("--detail thresholds come from gpuacct.toml's [detail]; a bad file is one line") {
    Spools s;
    s.config = (s.dir.path() / "gpuacct.toml").string();
    std::ofstream(s.config) << "[detail]\nidle_util_max = 0.5\nlow_util_mean = 2\n";
    const auto r = s.run({"-j", "101", "--detail"});
    CHECK(r.status == 0);
    CHECK(r.out.find("never went above") == std::string::npos);
    CHECK(r.out.find("below 2% on average on n1 GPU 1") != std::string::npos);
    std::ofstream(s.config) << "[detail]\nidle = 3\n";
    const auto bad = s.run({"-j", "101", "--detail"});
    CHECK(bad.status == 1);
    CHECK(bad.out.empty());
    CHECK(bad.err.find("[detail]: unknown key \"idle\"") != std::string::npos);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}

TEST_CASE("efficiency notes: memory far below the GPU's, short use of the time limit, too short to judge") {
    acct::JobDetail d;
    d.job_id = 7;
    d.start = T;
    d.end = T + 1800;
    d.elapsed_s = 1800;
    d.time_limit_s = 86400;
    d.alloc_gpus = 1;
    acct::DetailGpu g;
    g.node = "n1";
    g.samples = 10;
    g.util_avg = 80;
    g.util_max = 95;
    g.mem_max = 4LL << 30;
    g.mem_total = 80LL << 30;
    d.gpus.push_back(g);
    const auto notes = acct::efficiency_notes(d, {});
    REQUIRE(notes.size() == 2);
    CHECK(notes[0].find("at most 5% of the 80.0GiB of memory on each GPU") != std::string::npos);
    CHECK(notes[1].find("ran 00:30:00 of its 1-00:00:00 time limit (2%)") != std::string::npos);
    CHECK(notes[1].find("--time=01:00:00") != std::string::npos);
    d.elapsed_s = 30;
    CHECK(acct::efficiency_notes(d, {}).empty());
    CHECK(acct::render_detail(d, {}).find("too briefly to judge") != std::string::npos);
}

TEST_CASE("the job view of a failed job: a Failure block with the cause, its evidence lines and the recovery taken") {
    auto d = ended_job(3, "FAILED", 20, 1);
    d.failure = acct::DetailFailure{"n1", "script", "out_of_memory", "fix_code", "torch-oom", 0.95, 0,
                                    {"line 2: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"}};
    auto text = acct::render_detail(d, {});
    CHECK(text.find("Failure") != std::string::npos);
    CHECK(text.find("  cause:    out_of_memory (script), confidence 0.95, rule torch-oom, diagnosed on n1\n") != std::string::npos);
    CHECK(text.find("  evidence: line 2: torch.OutOfMemoryError: CUDA out of memory.") != std::string::npos);
    CHECK(text.find("  action:   fix_code\n") != std::string::npos);
    CHECK(text.find("  recovery: none taken\n") != std::string::npos);
    d.failure->evidence.push_back("Xid 79 on GPU 0 (gpu_event)");
    d.recovery = {"node n1 drained: acme: gpu_lost (xid 79)", "requeued 1 time"};
    text = acct::render_detail(d, {});
    CHECK(text.find("            Xid 79 on GPU 0 (gpu_event)\n") != std::string::npos);
    CHECK(text.find("  recovery: node n1 drained: acme: gpu_lost (xid 79)\n            requeued 1 time\n") != std::string::npos);
    d.failure.reset();
    d.recovery.clear();
    CHECK(acct::render_detail(d, {}).find("Failure") == std::string::npos);
}

TEST_CASE("the job view lists the sampler's held-but-idle alerts and cancel, and nothing without them") {
    auto d = ended_job(4, "CANCELLED", 600, 2);
    CHECK(acct::render_detail(d, {}).find("Held-but-idle") == std::string::npos);
    d.idle = {{"n1", 1, T + 120, 120, false}, {"n1", 1, T + 300, 300, true}};
    const auto text = acct::render_detail(d, {});
    CHECK(text.find("  Held-but-idle GPUs (gputrace idle_alert, idle_cancel)\n") != std::string::npos);
    CHECK(text.find(" n1 GPU 1: idle 120 s, alerted (idle_alert)\n") != std::string::npos);
    CHECK(text.find(" n1 GPU 1: idle 300 s, job cancelled (idle_cancel)\n") != std::string::npos);
}

TEST_CASE("-k/-K: Slurm's time formats and slurmdbd's matching rule") {
    std::string error;
    CHECK(acct::parse_time_limit("90", error) == 90u);
    CHECK(acct::parse_time_limit("1:30", error) == 2u);  // MM:SS, seconds round up
    CHECK(acct::parse_time_limit("2:00:00", error) == 120u);
    CHECK(acct::parse_time_limit("1-2", error) == 1560u);
    CHECK(acct::parse_time_limit("1-0:30", error) == 1470u);
    CHECK(acct::parse_time_limit("UNLIMITED", error) == acct::kUnlimited);
    CHECK(!acct::parse_time_limit("abc", error));
    CHECK(error.find("Invalid time limit: \"abc\"") == 0);
    CHECK(acct::time_limit_matches(10u, false, 10u, std::nullopt));
    CHECK(!acct::time_limit_matches(11u, false, 10u, std::nullopt));
    CHECK(acct::time_limit_matches(11u, false, 10u, 20u));
    CHECK(!acct::time_limit_matches(21u, false, 10u, 20u));
    CHECK(acct::time_limit_matches(21u, false, std::nullopt, 20u));  // -K alone: no restriction
    CHECK(acct::time_limit_matches(std::nullopt, true, acct::kUnlimited, std::nullopt));
}
