#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "evalsched/core/priors.hpp"
#include "evalsched/core/suite.hpp"
#include "evalsched/sim/durations.hpp"
#include "evalsched/sim/policy.hpp"
#include "evalsched/sim/acme_trace.hpp"
#include "evalsched/sim/experiment.hpp"
#include "evalsched/sim/slurm_model.hpp"

using namespace acme::evalsched;
using namespace acme::evalsched::sim;

namespace {

constexpr const char* kSuite = R"(
[suite]
command = "infer {checkpoint} {dataset} {shard} {num_shards} {output}"
bundle_command = "lm_eval {checkpoint} --tasks {datasets} --out {output}"
metric_command = "score {dataset} {output}"
shard = true

[[dataset]]
name = "gsm8k"
kind = "generation"
samples = 1319

[[dataset]]
name = "math"
kind = "generation"
samples = 5000

[[dataset]]
name = "mmlu"
kind = "multiple_choice"
samples = 14042

[[dataset]]
name = "humaneval"
kind = "code_execution"
samples = 164

[[dataset]]
name = "copa"
kind = "multiple_choice"
samples = 100

[[dataset]]
name = "cb"
kind = "multiple_choice"
samples = 56

[[dataset]]
name = "mt_bench"
kind = "judge"
samples = 80
shard = false
)";

Scenario small(int nodes, double load, int checkpoints = 1) {
    Scenario sc;
    sc.nodes = nodes;
    sc.background_load = load;
    sc.warmup_s = 6 * 3600;
    sc.checkpoints = checkpoints;
    sc.seed = 7;
    return sc;
}

}  // namespace

TEST_CASE("every policy runs every dataset of every checkpoint exactly once, background or not") {
    const Suite suite = parse_suite(kSuite, "t.toml");
    for (double load : {0.0, 0.5}) {
        const auto r = run_scenario(suite, small(2, load, 3), {"sequential", "opencompass", "evalsched"});
        REQUIRE(r.policies.size() == 3);
        for (const auto& p : r.policies) {
            CHECK_MESSAGE(p.conservation_error == "", p.policy);
            CHECK(p.latencies_s.size() == 3);
            for (double l : p.latencies_s) CHECK(l > 0);
        }
    }
}

TEST_CASE("no policy beats the lower bound of the world it ran in") {
    const Suite suite = parse_suite(kSuite, "t.toml");
    for (int seed = 1; seed <= 4; ++seed) {
        Scenario sc = small(1 + seed % 2, 0.5);
        sc.seed = static_cast<std::uint64_t>(seed);
        const auto r = run_scenario(suite, sc, {"sequential", "opencompass", "evalsched"});
        for (const auto& p : r.policies) {
            CHECK(p.lower_bound_s > 0);
            CHECK_MESSAGE(p.makespan_s >= p.lower_bound_s * 0.98, p.policy, " seed ", seed);  // 2 %: run-time noise
        }
    }
}

TEST_CASE("a run is a function of its seed") {
    const Suite suite = parse_suite(kSuite, "t.toml");
    const auto a = run_scenario(suite, small(2, 0.5), {"opencompass", "evalsched"});
    const auto b = run_scenario(suite, small(2, 0.5), {"opencompass", "evalsched"});
    for (std::size_t i = 0; i < a.policies.size(); ++i) CHECK(a.policies[i].makespan_s == b.policies[i].makespan_s);
    CHECK(a.policies[1].lower_bound_s == b.policies[1].lower_bound_s);
}

TEST_CASE("evalsched stages the checkpoint at most once per node; opencompass reads it per task") {
    const Suite suite = parse_suite(kSuite, "t.toml");
    Scenario sc = small(2, 0.0);
    const auto r = run_scenario(suite, sc, {"opencompass", "evalsched"});
    CHECK(r.find("evalsched")->shared_bytes <= sc.nodes * sc.model.checkpoint_bytes);
    CHECK(r.find("opencompass")->shared_bytes == r.find("opencompass")->gpu_jobs * sc.model.checkpoint_bytes);
}

TEST_CASE("the Slurm model backfills a short job under a reservation but not a long one") {
    SlurmModel slurm(1, 8);
    JobSpec running;
    running.gpus_per_node = 4;
    running.time_limit = 1000;
    running.on_start = [](double, int) { return 1000.0; };
    slurm.submit(running);
    slurm.schedule(0);
    JobSpec wide;  // needs the whole node: reserved for t = 1000
    wide.gpus_per_node = 8;
    wide.time_limit = 500;
    wide.priority_time = 1;
    slurm.submit(wide);
    JobSpec long_eval, short_eval;
    long_eval.eval = short_eval.eval = true;
    long_eval.priority_time = short_eval.priority_time = 2;
    long_eval.time_limit = 4 * 3600;  // no --time: the partition's DefaultTime
    short_eval.time_limit = 600;
    const int long_id = slurm.submit(long_eval);
    const int short_id = slurm.submit(short_eval);
    const auto started = slurm.schedule(10);
    REQUIRE(started.size() == 1);
    CHECK(started[0].job == short_id);
    CHECK(started[0].job != long_id);
    const auto w = slurm.windows(10);
    REQUIRE(w.size() == 1);
    CHECK(w[0].window_s == doctest::Approx(990));
    CHECK(w[0].free_gpus == 3);
}

TEST_CASE("background GPU counts follow Seren: mostly one GPU, never wider than the cluster") {
    std::mt19937_64 rng(1);
    int ones = 0;
    for (int i = 0; i < 10000; ++i) {
        const int g = sample_gpus(rng, 8);
        CHECK(g <= 8);
        ones += g == 1;
    }
    // 54.04 % of Seren's GPU jobs use one GPU; conditioned on <= 8 GPUs: 54.04 / 96.75.
    CHECK(ones / 10000.0 == doctest::Approx(0.5586).epsilon(0.05));
    std::vector<double> d;
    for (int i = 0; i < 10001; ++i) d.push_back(sample_duration(rng, 3 * 86400));
    std::nth_element(d.begin(), d.begin() + 5000, d.end());
    CHECK(d[5000] == doctest::Approx(134).epsilon(0.15));  // the trace's median, log-interpolated
}

TEST_CASE("pilots: every trial runs exactly once, tail splits included, in continuous mode and under load") {
    const Suite suite = parse_suite(kSuite, "t.toml");
    for (int seed = 1; seed <= 3; ++seed) {
        Scenario sc = small(2, 0.5, 3);
        sc.seed = static_cast<std::uint64_t>(seed);
        const auto r = run_scenario(suite, sc, {"evalsched", "evalsched-trials"});
        for (const auto& p : r.policies) {
            CHECK_MESSAGE(p.conservation_error == "", p.policy, " seed ", seed);
            CHECK(p.shared_bytes <= sc.checkpoints * sc.nodes * sc.model.checkpoint_bytes);
        }
        // A pilot loads once for several trials: fewer jobs than one per trial.
        CHECK(r.find("evalsched")->gpu_jobs < r.find("evalsched-trials")->gpu_jobs);
    }
}

TEST_CASE("the Slurm model's backfill grants a --time-min job exactly its --time-min, as Slurm 22.05 does") {
    SlurmModel slurm(1, 8);
    JobSpec running;
    running.gpus_per_node = 4;
    running.time_limit = 1000;
    running.on_start = [](double, int) { return 1000.0; };
    slurm.submit(running);
    slurm.schedule(0);
    JobSpec wide;  // the whole node from t = 1000
    wide.gpus_per_node = 8;
    wide.time_limit = 500;
    wide.priority_time = 1;
    slurm.submit(wide);
    JobSpec pilot;
    pilot.eval = true;
    pilot.priority_time = 2;
    pilot.time_min = 300;
    pilot.time_limit = 7200;
    double granted = 0;
    int seen_id = 0;
    pilot.on_granted = [&](double, int, int id, double limit) {
        granted = limit;
        seen_id = id;
        return limit;
    };
    const int id = slurm.submit(pilot);
    JobSpec too_long = pilot;  // its --time-min alone does not fit
    too_long.time_min = 1200;
    too_long.on_granted = nullptr;
    const int long_id = slurm.submit(too_long);
    const auto started = slurm.schedule(10);
    REQUIRE(started.size() == 1);
    CHECK(started[0].job == id);
    CHECK(started[0].job != long_id);
    CHECK(seen_id == id);
    // Not the 16 minutes before the reservation: what the minicluster's slurmctld grants.
    CHECK(granted == 300);
    CHECK(started[0].end == doctest::Approx(310));
    CHECK_FALSE(started[0].timed_out);
}

// --- issue 18: the daemon's real loop -----------------------------------------------------

namespace {

// The node of the reservation tests: 4 GPUs busy until t = 1000, an 8-GPU job reserved there.
void reserve_node(SlurmModel& slurm) {
    JobSpec running;
    running.gpus_per_node = 4;
    running.time_limit = 1000;
    running.on_start = [](double, int) { return 1000.0; };
    slurm.submit(running);
    slurm.schedule(0, false);
    JobSpec wide;
    wide.gpus_per_node = 8;
    wide.time_limit = 500;
    wide.priority_time = 1;
    slurm.submit(wide);
}

}  // namespace

TEST_CASE("a backfill start happens only at a backfill pass; the main scheduler stops at the blocked job") {
    SlurmModel slurm(1, 8);
    reserve_node(slurm);
    JobSpec short_eval;
    short_eval.eval = true;
    short_eval.priority_time = 2;
    short_eval.time_limit = 600;
    const int id = slurm.submit(short_eval);
    CHECK(slurm.schedule(10, false).empty());  // a job end or submit: the wide job blocks it
    CHECK(slurm.windows(10)[0].window_s == std::numeric_limits<double>::infinity());  // nothing published yet
    const auto started = slurm.schedule(30, true);
    REQUIRE(started.size() == 1);
    CHECK(started[0].job == id);
    CHECK(slurm.windows(30)[0].window_s == doctest::Approx(970));
}

TEST_CASE("the main scheduler starts a --time-min job at its full --time; only backfill shrinks it") {
    SlurmModel slurm(1, 8);
    JobSpec pilot;
    pilot.eval = true;
    pilot.time_min = 300;
    pilot.time_limit = 7200;
    double granted = 0;
    pilot.on_granted = [&](double, int, int, double limit) {
        granted = limit;
        return 100.0;
    };
    slurm.submit(pilot);
    REQUIRE(slurm.schedule(0, false).size() == 1);
    CHECK(granted == 7200);
}

TEST_CASE("the launch cost delays an eval job's command and holds its GPUs; background jobs carry their own") {
    SlurmModel slurm(1, 8);
    slurm.set_launch_cost(2.7);
    JobSpec eval, background;
    eval.eval = true;
    eval.time_limit = 600;
    double command_at = -1;
    eval.on_start = [&](double now, int) {
        command_at = now;
        return 100.0;
    };
    background.time_limit = 600;
    background.priority_time = 1;
    background.on_start = [](double, int) { return 50.0; };
    const int eval_id = slurm.submit(eval);
    slurm.submit(background);
    const auto started = slurm.schedule(10, false);
    REQUIRE(started.size() == 2);
    for (const auto& s : started) CHECK(s.end == doctest::Approx(s.job == eval_id ? 112.7 : 60.0));
    CHECK(command_at == doctest::Approx(12.7));
}

TEST_CASE("with a bf_interval a pending evaluation waits for the next pass; with backfill at every event it does not") {
    const Suite suite = parse_suite(kSuite, "t.toml");
    Scenario sc = small(2, 0.5);
    sc.seed = 3;
    sc.launch_cost_s = 0;
    sc.replan_latency_s = 0;
    sc.bf_interval_s = 0;
    const double oracle = run_scenario(suite, sc, {"evalsched-trials"}).policies[0].makespan_s;
    sc.bf_interval_s = 120;
    const double slow = run_scenario(suite, sc, {"evalsched-trials"}).policies[0].makespan_s;
    CHECK(slow > oracle);
}

TEST_CASE("on an idle cluster every job's launch cost lengthens the makespan, trials more than pilots") {
    const Suite suite = parse_suite(kSuite, "t.toml");
    Scenario sc = small(2, 0.0);
    sc.launch_cost_s = 0;
    const auto free = run_scenario(suite, sc, {"evalsched-trials", "evalsched"});
    sc.launch_cost_s = 60;
    const auto costly = run_scenario(suite, sc, {"evalsched-trials", "evalsched"});
    for (const char* p : {"evalsched-trials", "evalsched"}) {
        CHECK_MESSAGE(costly.find(p)->makespan_s >= free.find(p)->makespan_s + 60, p);
        CHECK(costly.find(p)->conservation_error == "");
    }
}

TEST_CASE("history 0 leaves the suite's priors alone; history H adds H earlier evaluations") {
    const Suite suite = parse_suite(kSuite, "t.toml");
    for (int h : {0, 3}) {
        Scenario sc = small(1, 0.0);
        sc.history_runs = h;
        World w(suite, sc, false);
        PriorBook book;
        seed_history(book, w);
        for (const auto& d : suite.datasets) {
            const Estimate e = book.run_estimate(d, sc.model, d.gpus);
            if (h == 0) {
                CHECK(e.source != PriorSource::history);
            } else {
                CHECK(e.source == PriorSource::history);
                CHECK(e.runs == h);
                // Earlier checkpoints, not today's truth.
                CHECK(e.median_s != doctest::Approx(w.truth().mean_run_s(d.name) + w.truth().preprocess_s(d.name)).epsilon(1e-6));
            }
        }
    }
}

TEST_CASE("--durations replaces the cost model: the file's seconds, split evenly over shards, no preprocessing") {
    const Suite suite = parse_suite(kSuite, "t.toml");
    std::string text = "# dataset\tseconds\n";
    for (const auto& d : suite.datasets) text += d.name + "\t" + std::to_string(10 + d.name.size()) + "\n";
    Scenario sc = small(1, 0.0);
    sc.durations = parse_durations(text, "t.durations");
    const Truth truth(suite, sc, CostModel{});
    std::mt19937_64 rng(1);
    for (const auto& d : suite.datasets) {
        CHECK(truth.mean_run_s(d.name) == doctest::Approx(10.0 + static_cast<double>(d.name.size())));
        CHECK(truth.sample_run_s(d.name, 0.25, 1, rng) == doctest::Approx((10.0 + static_cast<double>(d.name.size())) / 4));
        CHECK(truth.preprocess_s(d.name, 0.5) == 0);
    }
    sc.load_bytes_per_s = 1e9;
    CHECK(Truth(suite, sc, CostModel{}).startup_s(14e9) == doctest::Approx(14));
    const auto r = run_scenario(suite, sc, {"evalsched", "evalsched-trials", "opencompass", "opencompass-time", "sequential"});
    for (const auto& p : r.policies) CHECK_MESSAGE(p.conservation_error == "", p.policy);
}

TEST_CASE("a bad durations file is refused with one line naming the file and the line") {
    auto refused = [](const std::string& text) {
        try {
            parse_durations(text, "d.tsv");
        } catch (const std::invalid_argument& e) {
            const std::string what = e.what();
            return what.rfind("d.tsv line ", 0) == 0 && what.find('\n') == std::string::npos;
        }
        return false;
    };
    CHECK(refused("gsm8k 12\n"));
    CHECK(refused("gsm8k\t-1\n"));
    CHECK(refused("gsm8k\t0\n"));
    CHECK(refused("gsm8k\tnan\n"));
    CHECK(refused("gsm8k\t12s\n"));
    CHECK(refused("\t12\n"));
    CHECK(refused("gsm8k\t1\ngsm8k\t2\n"));
    CHECK(parse_durations("# c\n\ngsm8k\t1.5\r\n", "d.tsv").at("gsm8k") == 1.5);
}

TEST_CASE("OpenCompass at its defaults and with --time: every dataset once, 32 tasks, loads per task") {
    const Suite suite = parse_suite(kSuite, "t.toml");
    Scenario sc = small(2, 0.5);
    const auto r = run_scenario(suite, sc, {"opencompass", "opencompass-time"});
    for (const auto& p : r.policies) {
        CHECK_MESSAGE(p.conservation_error == "", p.policy);
        // NumWorkerPartitioner(32): 32 tasks (more jobs only when a task timed out and retried).
        CHECK(p.gpu_jobs >= 32);
        CHECK(p.shared_bytes == p.gpu_jobs * sc.model.checkpoint_bytes);
    }
    CHECK(r.find("opencompass")->parameters.find("NumWorkerPartitioner(num_worker=32") != std::string::npos);
    CHECK(r.find("opencompass-time")->parameters.find("extra_command --time") != std::string::npos);
}
