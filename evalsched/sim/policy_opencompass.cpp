// OpenCompass as its code runs it on Slurm (open-compass/opencompass @ a5acc4bb, see
// shared/reference/eval-scheduling.md section 1):
//  - infer: SizePartitioner at its code defaults: cost = factor x samples, factor =
//    gen_task_coef (20) for generation templates, the number of labels for PPL templates, x10
//    for bbh*, gsm8k*, math*, strategyqa*, *professional_law ...; a dataset costing more than
//    max_task_size (40000) is cut into even slices of about max_task_size // factor samples;
//    strategy 'heuristic' sorts chunks by cost, descending, and packs consecutive chunks into a
//    task until the next would pass max_task_size (next-fit decreasing).
//  - SlurmRunner: max_num_workers (default 32) concurrent `srun --gres=gpu:1 -N1`, each after
//    sleep(randint(0, 10)); no --time, so the job gets
//    the partition's DefaultTime; retry 2; every task builds the model and loads the weights
//    from shared storage.
//  - eval: after every infer task has finished, NaivePartitioner makes one CPU task per
//    dataset, run through the same runner (srun without GPUs).
#include <algorithm>
#include <cmath>
#include <fnmatch.h>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "evalsched/sim/policy.hpp"

namespace acme::evalsched::sim {
namespace {

constexpr int kMaxTaskSize = 40000;
constexpr int kGenTaskCoef = 20;
constexpr int kRetry = 2;
// SlurmRunner's max_num_workers default. A fixed count, whatever the cluster: that is the knob
// users complain about (issue #427), and what a config that does not set it gets.
constexpr int kMaxNumWorkers = 32;

// Labels of the PPL templates OpenCompass's configs use for these datasets (the answer
// options scored); 4 for anything not listed, the most common case (A-D).
int ppl_labels(const std::string& name) {
    static const std::map<std::string, int, std::less<>> labels = {
        {"winogrande", 2}, {"piqa", 2}, {"siqa", 3}, {"boolq", 2}, {"commonsenseqa", 5}, {"storycloze", 2},
        {"copa", 2}, {"rte", 2}, {"wic", 2}, {"wsc", 2}, {"cb", 3}, {"multirc", 2}, {"anli_r1", 3},
        {"anli_r2", 3}, {"anli_r3", 3}, {"crows_pairs", 2}, {"toxigen", 2}, {"mathqa", 5}, {"pubmedqa", 3},
        {"musr", 2}, {"lambada_openai", 1}, {"record", 1}, {"truthfulqa_mc", 4}};
    auto it = labels.find(name);
    return it == labels.end() ? 4 : it->second;
}

int cost_factor(const Dataset& d) {
    int factor = d.kind == TaskKind::multiple_choice ? ppl_labels(d.name) : kGenTaskCoef;
    for (const char* p : {"bbh*", "gsm8k*", "math*", "strategyqa*", "agieval-jec*", "agieval-gaokao-mathcloze", "agieval-math", "*professional_law"})
        if (fnmatch(p, d.name.c_str(), 0) == 0) {
            factor *= 10;
            break;
        }
    return factor;
}

struct Chunk {
    std::string dataset;
    int index = 0, count = 1;
    double fraction = 1;
    long cost = 0;
};
using Task = std::vector<Chunk>;

std::vector<Task> size_partition(const Suite& suite) {
    std::vector<Chunk> chunks;
    for (const auto& d : suite.datasets) {
        const long size = d.samples.value_or(1000);
        const long factor = cost_factor(d);
        const long cost = factor * size;
        if (cost > kMaxTaskSize) {
            // split_dataset: step = max_task_size // factor, evened out over the parts.
            long step = std::max<long>(kMaxTaskSize / factor, 1);
            const long parts = (size + step - 1) / step;
            step = (size + parts - 1) / parts;
            const long n = (size + step - 1) / step;
            for (long i = 0; i < n; ++i) {
                const long len = std::min(step, size - i * step);
                chunks.push_back({d.name, static_cast<int>(i), static_cast<int>(n), static_cast<double>(len) / size, factor * len});
            }
        } else {
            chunks.push_back({d.name, 0, 1, 1.0, cost});
        }
    }
    std::stable_sort(chunks.begin(), chunks.end(), [](const Chunk& a, const Chunk& b) { return a.cost > b.cost; });
    std::vector<Task> tasks;
    Task current;
    long size = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        size += chunks[i].cost;
        current.push_back(chunks[i]);
        if (i + 1 == chunks.size() || size + chunks[i + 1].cost > kMaxTaskSize) {
            tasks.push_back(std::move(current));
            current.clear();
            size = 0;
        }
    }
    return tasks;
}

class OpenCompass : public Policy {
public:
    std::string name() const override { return "opencompass"; }

    std::string parameters(const Scenario& sc) const override {
        return fmt::format("SizePartitioner(max_task_size={}, gen_task_coef={}, strategy=heuristic) + SlurmRunner(max_num_workers={}, "
                           "retry={}, num_gpus=1, no --time -> DefaultTime {}h); weights from shared storage per task; "
                           "eval stage (NaivePartitioner, CPU) after all infer tasks",
                           kMaxTaskSize, kGenTaskCoef, kMaxNumWorkers, kRetry, sc.default_time_s / 3600);
    }

    void on_checkpoint(World& w, const CheckpointArrival& ckpt) override {
        w.open_scorecard(ckpt);
        auto run = std::make_shared<Run>();
        run->ckpt = ckpt;
        for (auto& t : size_partition(w.suite())) run->queue.push_back(std::move(t));
        run->infer_left = static_cast<int>(run->queue.size());
        for (int i = 0; i < kMaxNumWorkers; ++i) next_task(w, run);
    }

private:
    struct Run {
        CheckpointArrival ckpt;
        std::vector<Task> queue;
        std::size_t next = 0;
        int infer_left = 0;
        std::size_t next_eval = 0;
    };

    // One of max_num_workers worker processes takes the next task (track_parallel_progress).
    void next_task(World& w, const std::shared_ptr<Run>& run) {
        if (run->next >= run->queue.size()) return;
        const Task* task = &run->queue[run->next++];
        launch(w, run, task, 0);
    }

    void launch(World& w, const std::shared_ptr<Run>& run, const Task* task, int attempt) {
        std::uniform_int_distribution<int> jitter(0, 10);  // "to avoid cluster error"
        w.at(w.now() + jitter(w.rng()), [this, &w, run, task, attempt] {
            const Scenario& sc = w.scenario();
            JobSpec job;
            job.eval = true;
            job.gpus_per_node = 1;
            job.time_limit = sc.default_time_s;
            job.priority_time = w.now() + sc.eval_nice_s;
            job.on_start = [&w, task](double now, int node) {
                const double load = w.storage().read(now, node, w.scenario().model.checkpoint_bytes) + w.truth().cost().framework_init_s;
                w.stats().load_gpu_s += load;
                double total = load;
                for (const Chunk& c : *task) total += w.truth().preprocess_s(c.dataset) + w.truth().sample_run_s(c.dataset, c.fraction, 1, w.rng());
                return total;
            };
            job.on_end = [this, &w, run, task, attempt](double, bool timed_out) {
                if (timed_out) {
                    ++w.stats().timeouts;
                    if (attempt < kRetry) {
                        launch(w, run, task, attempt + 1);
                        return;
                    }
                }
                for (const Chunk& c : *task) ++w.stats().pieces_done[piece_key(run->ckpt.name, c.dataset, c.index, c.count)];
                if (--run->infer_left == 0) eval_stage(w, run);
                next_task(w, run);
            };
            w.submit_gpu_job(std::move(job));
        });
    }

    // The eval runner has the same max_num_workers; each worker runs one task at a time.
    void eval_stage(World& w, const std::shared_ptr<Run>& run) {
        for (int i = 0; i < kMaxNumWorkers; ++i) next_eval(w, run);
    }

    void next_eval(World& w, const std::shared_ptr<Run>& run) {
        if (run->next_eval >= w.suite().datasets.size()) return;
        const std::string name = w.suite().datasets[run->next_eval++].name;
        std::uniform_int_distribution<int> jitter(0, 10);
        const double seconds = jitter(w.rng()) + std::max(w.truth().metric_s(name), w.truth().cost().metric_fixed_s);
        w.submit_cpu_job(seconds, [this, &w, run, name] {
            w.score(run->ckpt.name, name);
            next_eval(w, run);
        });
    }
};

}  // namespace

std::unique_ptr<Policy> make_opencompass() { return std::make_unique<OpenCompass>(); }

}  // namespace acme::evalsched::sim
