// The simulated world one policy runs in: an event queue, the Slurm model with its background
// jobs, shared storage, a CPU partition for metric jobs, the ground truth of what each dataset
// really costs, and the scorecards being filled. Policies act only through it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "evalsched/core/cost_model.hpp"
#include "evalsched/core/suite.hpp"
#include "evalsched/sim/acme_trace.hpp"
#include "evalsched/sim/slurm_model.hpp"
#include "evalsched/sim/storage.hpp"

namespace acme::evalsched::sim {

struct Scenario {
    int nodes = 4;
    int gpus_per_node = 8;
    ModelSpec model{7, 14e9};
    double nic_bytes_per_s = 25e9 / 8;     // 25 Gb/s per node (the paper's Seren nodes)
    double storage_bytes_per_s = 100e9;    // all-NVMe parallel file system, aggregate
    double background_load = 0.5;          // offered GPU load of the other jobs
    double warmup_s = 86400;               // background runs this long before t = 0
    double default_time_s = 4 * 3600;      // the partition's DefaultTime: --time when none is given
    double eval_nice_s = 3600;             // eval jobs rank as if submitted this much later
    double cpu_slots = 256;                // metric jobs running at once in the CPU partition
    double cpu_submit_latency_s = 5;
    int checkpoints = 1;                   // continuous mode: > 1
    double checkpoint_interval_s = 1800;
    // Earlier evaluations of this pretraining run whose trials evalsched's priors learned from
    // (0: the suite's priors and the cost model alone). Those runs were of earlier checkpoints,
    // so each one strays from today's truth by history_drift (log sd) besides run noise.
    int history_runs = 4;
    double history_drift = 0.15;
    // The daemon's real loop (issue 18): Slurm's backfill runs every bf_interval_s (0: at every
    // event, an oracle) and only there applies --time-min and publishes planned starts; each
    // eval job pays launch_cost_s (submit to command running plus end to GPUs free, measured
    // on the minicluster: prolog, health gate, sampler, epilog); evalschedd reacts to a job
    // end replan_latency_s later.
    double bf_interval_s = 30;
    double launch_cost_s = 2.7;
    double replan_latency_s = 0.5;
    // Loading the weights inside a trial: bytes / load_bytes_per_s when > 0, else the cost
    // model's framework init + PCIe copy.
    double load_bytes_per_s = 0;
    // Ground-truth inference seconds of each whole dataset on one GPU (--durations), replacing
    // the cost model and its hidden spread; no preprocessing, no run noise.
    std::map<std::string, double> durations;
    // Alignment with the cluster bench (tests/bench/evalsched-cluster), which runs a real suite's
    // times x 0.18: time_scale scales the simulator's own fixed seconds that no other flag sets
    // (OpenCompass's randint(0, 10) s launch jitter, the CPU partition's submit latency, metric
    // jobs' run times), so they weigh what they weigh on the bench; opencompass_subsets off
    // lists every dataset whole to OpenCompass (the bench's stand-in does not expand mmlu & co.);
    // sequential_gpus: the sequential job's GPUs (0: every GPU of its node, data parallel).
    double time_scale = 1;
    bool opencompass_subsets = true;
    int sequential_gpus = 0;
    double truth_spread = 0.35;            // how far real per-dataset cost strays from the guess (log sd)
    double run_noise = 0.08;               // run-to-run noise (log sd)
    std::uint64_t seed = 1;
};

// What a dataset really costs in this world: the cost model's guess times a hidden factor per
// dataset (prompt and answer lengths no sample count reveals), times noise per run.
class Truth {
public:
    Truth(const Suite& suite, const Scenario& scenario, const CostModel& cost);
    double mean_run_s(const std::string& dataset) const;      // inference on one GPU, no load
    // Reading the dataset (a fixed cost) and tokenizing the `fraction` of its samples a shard
    // holds (a shard tokenizes only its slice, as OpenCompass's test_range and a sliced
    // lm-eval task do).
    double preprocess_s(const std::string& dataset, double fraction = 1.0) const;
    double metric_s(const std::string& dataset) const;
    double sample_run_s(const std::string& dataset, double fraction, int gpus, std::mt19937_64& rng) const;
    // From a trial's command start to its first sample: loading the weights.
    double startup_s(double checkpoint_bytes) const;
    const CostModel& cost() const { return cost_; }

private:
    struct Row {
        double run, preprocess, metric;
        TaskKind kind;
    };
    std::map<std::string, Row, std::less<>> rows_;
    CostModel cost_;
    double noise_;
    bool measured_ = false;    // durations from a file: no preprocessing
    double load_bps_ = 0;
};

struct CheckpointArrival {
    std::string name;
    double at = 0;
};

struct Stats {
    double load_gpu_s = 0;        // GPU-seconds spent loading weights (staging waits included)
    double gpu_busy_s = 0;        // GPU-seconds held by eval jobs
    int timeouts = 0;
    int gave_up = 0;              // OpenCompass tasks past their retries (the user reruns -r)
    int splits = 0;               // trials re-sharded before they started (tail-aware)
    int gpu_jobs = 0;
    std::map<std::string, int> pieces_done;  // "<ckpt>/<dataset>#i/n" -> completions
};

class World {
public:
    World(const Suite& suite, const Scenario& scenario, bool with_background);

    double now() const { return now_; }
    void at(double t, std::function<void()> fn);
    SlurmModel& slurm() { return slurm_; }
    Storage& storage() { return storage_; }
    const Truth& truth() const { return truth_; }
    const Suite& suite() const { return suite_; }
    const Scenario& scenario() const { return scenario_; }
    std::mt19937_64& rng() { return rng_; }
    Stats& stats() { return stats_; }
    const Stats& stats() const { return stats_; }

    int submit_gpu_job(JobSpec spec);
    // The job's script exits now (a pilot with nothing left to take): its GPUs are freed and
    // its on_end runs, before its limit.
    void end_gpu_job(int job);
    // A CPU job of `seconds` in the CPU partition; `done` runs when it ends.
    void submit_cpu_job(double seconds, std::function<void()> done);

    // Scorecards: one per checkpoint, complete when every dataset has its score.
    void open_scorecard(const CheckpointArrival& ckpt);
    void score(const std::string& checkpoint, const std::string& dataset);
    // Every expected scorecard opened and complete.
    bool all_scored() const;
    void expect_scorecards(int n) { expected_cards_ = n; }
    std::vector<double> scorecard_latencies() const;  // completion - arrival, per checkpoint
    double last_completion() const;

    // GPUs not held by background jobs, over time: the most any evaluation policy could have
    // used in this world. Per world, because evaluation jobs that hold GPUs delay background
    // jobs (nothing is preempted), so each policy leaves the background a different path.
    const std::vector<std::pair<double, int>>& eval_capacity_timeline() const { return timeline_; }

    // Runs events until every scorecard is complete (or, with none open, until `until`).
    void run(double until);

private:
    struct Event {
        double t;
        std::uint64_t seq;
        std::function<void()> fn;
        bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
    };
    void schedule_pass(bool backfill);
    void backfill_tick();
    void start_cpu_jobs();

    Suite suite_;
    Scenario scenario_;
    Truth truth_;
    SlurmModel slurm_;
    Storage storage_;
    std::mt19937_64 rng_;
    Stats stats_;
    double now_ = 0;
    std::uint64_t seq_ = 0;
    bool dirty_ = false;
    bool backfill_due_ = false;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
    std::vector<std::pair<double, std::function<void()>>> cpu_queue_;
    int cpu_running_ = 0;
    struct Card {
        double arrival;
        std::map<std::string, bool> scored;
        int left;
        double completed = -1;
    };
    std::map<std::string, Card> cards_;
    int expected_cards_ = 0;
    std::vector<std::pair<double, int>> timeline_;
};

}  // namespace acme::evalsched::sim
