// OpenCompass as its code runs it on Slurm at its defaults (open-compass/opencompass @ a5acc4bb,
// see shared/reference/eval-scheduling.md section 1):
//  - infer: NumWorkerPartitioner(num_worker = --max-num-workers, min_task_size 16, strategy
//    'heuristic'), what fill_infer_cfg builds when the config has no infer block: every dataset
//    with more than min_task_size samples is cut into num_worker slices of
//    max(ceil(size / num_worker), min_task_size) samples, and the chunks, in config order, are
//    dealt round-robin into num_worker tasks ("intentionally avoid any sort").
//  - SlurmRunner(max_num_workers = --max-num-workers): that many concurrent `srun
//    --gres=gpu:1 -N1`, each after sleep(randint(0, 10)); no --time, so the job gets the
//    partition's DefaultTime; retry 2, a retried task resuming at sample level (GenInferencer's
//    tmp_ file); every task builds the model and loads the weights from shared storage.
//    --max-num-workers 32: the reference's worked example and SlurmRunner's own default (the
//    CLI's default of 1 would make it one task on one GPU).
//  - opencompass-time: the same with `--time` added through SlurmRunner's extra_command, one
//    limit for every task, sized as a user would from an earlier run: 1.5 x its longest task,
//    rounded up to 10 minutes. Such tasks can be backfilled.
//  - eval: after every infer task has finished, NaivePartitioner makes one CPU task per
//    dataset, run through the same runner (srun without GPUs).
#include <algorithm>
#include <cmath>
#include <fnmatch.h>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "evalsched/sim/policy.hpp"

namespace acme::evalsched::sim {
namespace {

constexpr int kMinTaskSize = 16;
constexpr int kRetry = 2;
// --max-num-workers: a fixed count, whatever the cluster: that is the knob users complain about
// (issue #427).
constexpr int kMaxNumWorkers = 32;
constexpr double kUserMargin = 1.5;

// OpenCompass's dataset configs list these benchmarks as one dataset per subset (configs/datasets/
// mmlu: mmlu_all_sets, 57 subjects as 'lukaemon_mmlu_<subject>'; bbh: 27 tasks as 'bbh-<task>';
// cmmlu: 67 subjects 'cmmlu-<subject>'; ceval: 52 subjects 'ceval-<subject>'; mmlu_pro: 14
// categories 'mmlu_pro_<category>'; mgsm: 11 languages 'mgsm_<lang>'). Each subset is its own
// dataset to the partitioner (its own cost, its own chunks), to the infer task (built and
// tokenized on its own) and to the eval stage (one NaivePartitioner task each). MMLU's and
// BBH's sizes are their test splits; for the others, whose per-subset sizes this model does
// not carry, the suite's total is spread evenly over the subsets (each is far below
// max_task_size, so the packing, and the number of tasks, does not depend on the split).
struct Subsets {
    const char* dataset;
    const char* prefix;
    int count;                                            // when sizes is empty: even split
    std::vector<std::pair<const char*, int>> sizes;
};

const std::vector<Subsets>& opencompass_subsets() {
    static const std::vector<Subsets> table = {
        {"mmlu", "lukaemon_mmlu_", 57, {
        {"abstract_algebra", 100}, {"anatomy", 135}, {"astronomy", 152}, {"business_ethics", 100},
        {"clinical_knowledge", 265}, {"college_biology", 144}, {"college_chemistry", 100}, {"college_computer_science", 100},
        {"college_mathematics", 100}, {"college_medicine", 173}, {"college_physics", 102}, {"computer_security", 100},
        {"conceptual_physics", 235}, {"econometrics", 114}, {"electrical_engineering", 145}, {"elementary_mathematics", 378},
        {"formal_logic", 126}, {"global_facts", 100}, {"high_school_biology", 310}, {"high_school_chemistry", 203},
        {"high_school_computer_science", 100}, {"high_school_european_history", 165}, {"high_school_geography", 198}, {"high_school_government_and_politics", 193},
        {"high_school_macroeconomics", 390}, {"high_school_mathematics", 270}, {"high_school_microeconomics", 238}, {"high_school_physics", 151},
        {"high_school_psychology", 545}, {"high_school_statistics", 216}, {"high_school_us_history", 204}, {"high_school_world_history", 237},
        {"human_aging", 223}, {"human_sexuality", 131}, {"international_law", 121}, {"jurisprudence", 108},
        {"logical_fallacies", 163}, {"machine_learning", 112}, {"management", 103}, {"marketing", 234},
        {"medical_genetics", 100}, {"miscellaneous", 783}, {"moral_disputes", 346}, {"moral_scenarios", 895},
        {"nutrition", 306}, {"philosophy", 311}, {"prehistory", 324}, {"professional_accounting", 282},
        {"professional_law", 1534}, {"professional_medicine", 272}, {"professional_psychology", 612}, {"public_relations", 110},
        {"security_studies", 245}, {"sociology", 201}, {"us_foreign_policy", 100}, {"virology", 166},
        {"world_religions", 171},
        }},
        {"bbh", "bbh-", 27, {
        {"boolean_expressions", 250}, {"causal_judgement", 187}, {"date_understanding", 250}, {"disambiguation_qa", 250},
        {"dyck_languages", 250}, {"formal_fallacies", 250}, {"geometric_shapes", 250}, {"hyperbaton", 250},
        {"logical_deduction_five_objects", 250}, {"logical_deduction_seven_objects", 250}, {"logical_deduction_three_objects", 250}, {"movie_recommendation", 250},
        {"multistep_arithmetic_two", 250}, {"navigate", 250}, {"object_counting", 250}, {"penguins_in_a_table", 146},
        {"reasoning_about_colored_objects", 250}, {"ruin_names", 250}, {"salient_translation_error_detection", 250}, {"snarks", 178},
        {"sports_understanding", 250}, {"temporal_sequences", 250}, {"tracking_shuffled_objects_five_objects", 250}, {"tracking_shuffled_objects_seven_objects", 250},
        {"tracking_shuffled_objects_three_objects", 250}, {"web_of_lies", 250}, {"word_sorting", 250},
        }},
        {"cmmlu", "cmmlu-", 67, {}},
        {"ceval", "ceval-", 52, {}},
        {"mmlu_pro", "mmlu_pro_", 14, {}},
        {"mgsm", "mgsm_", 11, {}},
    };
    return table;
}

// One dataset as OpenCompass's configs list it: a suite dataset, or one subset of it.
struct OcDataset {
    std::string abbr;        // what the partitioner and the *x10 patterns see
    const Dataset* parent;
    long samples;
    double fraction;         // of the parent's samples
};

std::vector<OcDataset> opencompass_datasets(const Suite& suite, bool expand_subsets) {
    std::vector<OcDataset> out;
    for (const auto& d : suite.datasets) {
        const long total = d.samples.value_or(1000);
        const auto& table = opencompass_subsets();
        auto it = std::find_if(table.begin(), table.end(), [&](const Subsets& s) { return d.name == s.dataset; });
        if (!expand_subsets || it == table.end()) {
            out.push_back({d.name, &d, total, 1.0});
            continue;
        }
        long listed = 0;
        for (const auto& [n, c] : it->sizes) listed += c;
        if (!it->sizes.empty() && listed == total) {
            for (const auto& [n, c] : it->sizes) out.push_back({std::string(it->prefix) + n, &d, c, static_cast<double>(c) / static_cast<double>(total)});
            continue;
        }
        // Sizes not carried (or a suite whose count differs): even split, remainder first.
        const long k = std::min<long>(it->count, total);
        for (long i = 0; i < k; ++i) {
            const long c = total / k + (i < total % k ? 1 : 0);
            out.push_back({fmt::format("{}{}", it->prefix, i), &d, c, static_cast<double>(c) / static_cast<double>(total)});
        }
    }
    return out;
}

struct Chunk {
    std::string dataset;       // the suite dataset it belongs to
    int index = 0, count = 1;  // piece index / pieces of the suite dataset (conservation)
    double fraction = 1;       // of the suite dataset's samples
    long samples = 0;          // its own (test_range slice): what the task tokenizes
};
using Task = std::vector<Chunk>;

std::vector<Task> num_worker_partition(const std::vector<OcDataset>& datasets, int num_worker) {
    std::vector<Chunk> chunks;
    std::map<std::string, int> pieces;  // suite dataset -> chunks made of it
    for (const OcDataset& d : datasets) {
        const std::string& parent = d.parent->name;
        if (num_worker <= 1 || d.samples <= kMinTaskSize) {
            chunks.push_back({parent, pieces[parent]++, 0, d.fraction, d.samples});
            continue;
        }
        // split_dataset: step = max(ceil(size / num_split), min_task_size), test_range slices.
        const long step = std::max<long>((d.samples + num_worker - 1) / num_worker, kMinTaskSize);
        for (long at = 0; at < d.samples; at += step) {
            const long len = std::min(step, d.samples - at);
            chunks.push_back({parent, pieces[parent]++, 0, d.fraction * static_cast<double>(len) / static_cast<double>(d.samples), len});
        }
    }
    for (auto& c : chunks) c.count = pieces[c.dataset];
    std::vector<Task> buckets(static_cast<std::size_t>(std::max(num_worker, 1)));
    for (std::size_t i = 0; i < chunks.size(); ++i) buckets[i % buckets.size()].push_back(chunks[i]);
    std::vector<Task> tasks;
    for (auto& b : buckets)
        if (!b.empty()) tasks.push_back(std::move(b));
    return tasks;
}

class OpenCompass : public Policy {
public:
    explicit OpenCompass(bool with_time) : with_time_(with_time) {}

    std::string name() const override { return with_time_ ? "opencompass-time" : "opencompass"; }

    std::string parameters(const Scenario& sc) const override {
        return fmt::format("NumWorkerPartitioner(num_worker={}, min_task_size={}, strategy=heuristic) + SlurmRunner(max_num_workers={}, "
                           "retry={}, num_gpus=1, {}); weights from shared storage per task; "
                           "eval stage (NaivePartitioner, CPU, one task per dataset) after all infer tasks; "
                           "{}",
                           kMaxNumWorkers, kMinTaskSize, kMaxNumWorkers, kRetry,
                           with_time_ ? fmt::format("extra_command --time = {:.1f} x the longest task of an earlier run, rounded up to 10 min", kUserMargin)
                                      : fmt::format("no --time -> DefaultTime {:g}h", sc.default_time_s / 3600),
                           sc.opencompass_subsets ? "mmlu/bbh/cmmlu/ceval/mmlu_pro/mgsm as their configs' 57/27/67/52/14/11 subsets"
                                                  : "every dataset whole (--opencompass-subsets off)");
    }

    void on_checkpoint(World& w, const CheckpointArrival& ckpt) override {
        w.open_scorecard(ckpt);
        auto run = std::make_shared<Run>();
        run->ckpt = ckpt;
        run->datasets = opencompass_datasets(w.suite(), w.scenario().opencompass_subsets);
        for (const auto& d : run->datasets) ++run->subsets_left[d.parent->name];
        for (auto& t : num_worker_partition(run->datasets, kMaxNumWorkers)) run->queue.push_back(TaskRun{std::move(t)});
        run->infer_left = static_cast<int>(run->queue.size());
        run->time_limit = with_time_ ? user_time_limit(w, *run) : w.scenario().default_time_s;
        for (int i = 0; i < kMaxNumWorkers; ++i) next_task(w, run);
    }

private:
    struct TaskRun {
        Task chunks;
        double work_s = -1;  // inference + preprocessing, drawn at its first start
        double done_s = 0;   // what earlier attempts finished (kept in GenInferencer's tmp_ file)
    };
    struct Run {
        CheckpointArrival ckpt;
        std::vector<OcDataset> datasets;
        std::map<std::string, int> subsets_left;  // a suite dataset is scored when all its subsets are
        std::vector<TaskRun> queue;
        std::size_t next = 0;
        int infer_left = 0;
        std::size_t next_eval = 0;
        double time_limit = 0;
    };

    // What the user writes into extra_command: an earlier run's longest task (its mean run
    // times and a full-speed load) with a margin, in whole 10 minutes.
    static double user_time_limit(const World& w, const Run& run) {
        const Scenario& sc = w.scenario();
        const double load = sc.model.checkpoint_bytes / std::min(sc.nic_bytes_per_s, sc.storage_bytes_per_s) +
                            w.truth().startup_s(sc.model.checkpoint_bytes) + sc.launch_cost_s;
        double longest = 0;
        for (const TaskRun& t : run.queue) {
            double s = load;
            for (const Chunk& c : t.chunks) s += w.truth().preprocess_s(c.dataset, c.fraction) + w.truth().mean_run_s(c.dataset) * c.fraction;
            longest = std::max(longest, s);
        }
        return std::ceil(kUserMargin * longest / 600) * 600;
    }

    // One of max_num_workers worker processes takes the next task (track_parallel_progress).
    void next_task(World& w, const std::shared_ptr<Run>& run) {
        if (run->next >= run->queue.size()) return;
        TaskRun* task = &run->queue[run->next++];
        launch(w, run, task, 0);
    }

    void launch(World& w, const std::shared_ptr<Run>& run, TaskRun* task, int attempt) {
        std::uniform_int_distribution<int> jitter(0, 10);  // "to avoid cluster error"
        w.at(w.now() + jitter(w.rng()) * w.scenario().time_scale, [this, &w, run, task, attempt] {
            const Scenario& sc = w.scenario();
            JobSpec job;
            job.eval = true;
            job.gpus_per_node = 1;
            job.time_limit = run->time_limit;
            job.priority_time = w.now() + sc.eval_nice_s;
            auto load = std::make_shared<double>(0);
            job.on_start = [&w, task, load](double now, int node) {
                const double bytes = w.scenario().model.checkpoint_bytes;
                *load = w.storage().read(now, node, bytes) + w.truth().startup_s(bytes);
                w.stats().load_gpu_s += *load;
                if (task->work_s < 0) {
                    task->work_s = 0;
                    for (const Chunk& c : task->chunks)
                        task->work_s += w.truth().preprocess_s(c.dataset, c.fraction) + w.truth().sample_run_s(c.dataset, c.fraction, 1, w.rng());
                }
                return *load + task->work_s - task->done_s;
            };
            job.on_end = [this, &w, run, task, attempt, load](double, bool timed_out) {
                if (timed_out) {
                    ++w.stats().timeouts;
                    // The samples it finished are kept; a retry (and, past retry 2, the user's
                    // rerun with -r) does the rest.
                    task->done_s += std::max(0.0, run->time_limit - w.scenario().launch_cost_s - *load);
                    if (attempt >= kRetry) ++w.stats().gave_up;
                    launch(w, run, task, attempt + 1);
                    return;
                }
                for (const Chunk& c : task->chunks) ++w.stats().pieces_done[piece_key(run->ckpt.name, c.dataset, c.index, c.count)];
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
        if (run->next_eval >= run->datasets.size()) return;
        const OcDataset& d = run->datasets[run->next_eval++];
        const std::string name = d.parent->name;
        std::uniform_int_distribution<int> jitter(0, 10);
        const double k = w.scenario().time_scale;
        const double seconds = jitter(w.rng()) * k + std::max(w.truth().metric_s(name) * d.fraction, w.truth().cost().metric_fixed_s * k);
        w.submit_cpu_job(seconds, [this, &w, run, name] {
            if (--run->subsets_left[name] == 0) w.score(run->ckpt.name, name);
            next_eval(w, run);
        });
    }

    bool with_time_;
};

}  // namespace

std::unique_ptr<Policy> make_opencompass(bool with_time) { return std::make_unique<OpenCompass>(with_time); }

}  // namespace acme::evalsched::sim
