// Benchmark: how well and how fast the engine diagnoses. First the labelled corpus
// (tests/data/diagnosis): category and reason accuracy, the category confusion matrix (rows
// expected, columns got), infrastructure precision and recall; the targets (category >= 0.95,
// reason >= 0.90, infrastructure precision >= 0.99 and recall >= 0.95) are printed beside them.
// Beside it, the first-sight score of each batch of cases (tests/data/first-sight/batch-NN.tsv:
// what the rules said of the batch before any rule was written for it) and what they say of the
// same cases now; the targets are judged on the latest batch's first sight, the honest figure
// for logs nobody tuned a rule to.
// `diagnose --first-sight NN --commit HASH` prints batch NN's record with the current rules
// (tests/data/first-sight/README.md says when to write one) and exits.
// Then the learned fallback, time-split (common/diagnose/time_split.hpp): each batch from 06 on
// scored as the recorded rules' answer, else the answer of a model trained only on the cases
// before it, at a threshold calibrated on earlier batches, per batch and pooled over the design
// batches (06-09, looked at while choosing the model) and the held-out ones (10 on).
// ACME_BENCH_TRIALS=1 lists each no-rule case with the model's best reason and probability;
// ACME_BENCH_TIME_SPLIT_ONLY=1 stops after that section. Then the fallback over the corpus, held
// out by source repository.
// Then speed: a log tail, side by side with grep -E running every rule pattern over the same
// text. Prints figures and ratios; never fails (the unit accuracy test asserts the floors).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/diagnose/engine.hpp"
#include "common/diagnose/corpus.hpp"
#include "common/diagnose/time_split.hpp"

#ifndef ACME_RULES_DIR
#error "build with -DACME_RULES_DIR=\"<tree>/rules\""
#endif
#ifndef ACME_CORPUS_DIR
#error "build with -DACME_CORPUS_DIR=\"<tree>/tests/data/diagnosis\""
#endif
#ifndef ACME_FIRST_SIGHT_DIR
#error "build with -DACME_FIRST_SIGHT_DIR=\"<tree>/tests/data/first-sight\""
#endif

namespace {

using Clock = std::chrono::steady_clock;

// The time-split figure: batches from kFirstTimeSplit on are scored; the fallback's design was
// chosen looking at those up to kLastDesignSplit only. The precision its threshold is calibrated to.
constexpr std::string_view kFirstTimeSplit = "06";
constexpr std::string_view kLastDesignSplit = "09";
constexpr double kFallbackPrecision = 0.8;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// What a pretraining log is mostly made of, with a failure buried in it every `error_every`
// lines: the engine must read all of it, not stop at the first keyword.
std::string synthetic_log(std::size_t bytes, std::size_t error_every) {
    static const char* kErrors[] = {
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
        "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600050 milliseconds before timing out.\n",
        "UserWarning: TypedStorage is deprecated. It will be removed in the future.\n",
        "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/NVLink\n",
    };
    std::string log;
    log.reserve(bytes + 256);
    for (std::size_t i = 0; log.size() < bytes; ++i) {
        if (error_every && i % error_every == error_every - 1) {
            log += kErrors[(i / error_every) % 4];
            continue;
        }
        log += fmt::format(" iteration {:8}/ 1000000 | consumed samples: {:12} | elapsed time per iteration (ms): 1834.2 | "
                           "learning rate: 2.999E-04 | lm loss: {:.6E} | loss scale: 65536.0 | grad norm: 0.812 |\n",
                           i, i * 512, 3.2 - static_cast<double>(i % 1000) * 1e-4);
    }
    return log;
}

// RE2 and GNU grep -E differ in a few spellings; translate those the shipped rules use.
std::string to_ere(std::string pattern) {
    auto replace = [&](const std::string& from, const std::string& to) {
        for (std::size_t pos = 0; (pos = pattern.find(from, pos)) != std::string::npos; pos += to.size())
            pattern.replace(pos, from.size(), to);
    };
    replace("(?i)", "");  // grep -E has no inline flags: a little stricter, not slower
    replace("(?i:", "(");
    replace("(?:", "(");  // nor non-capturing groups
    replace("\\d", "[0-9]");
    return pattern;
}

std::size_t count_lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

void add(acme::diagnose::corpus::Score& into, const acme::diagnose::corpus::Score& s) {
    into.total += s.total;
    into.reason_right += s.reason_right;
    into.category_right += s.category_right;
    for (std::size_t r = 0; r < s.confusion.size(); ++r)
        for (std::size_t c = 0; c < s.confusion[r].size(); ++c) into.confusion[r][c] += s.confusion[r][c];
}

std::string figures(const acme::diagnose::corpus::Score& s) {
    return fmt::format("category {:.3f}, reason {:.3f}, infrastructure precision {:.3f}, recall {:.3f} ({} cases)",
                       s.category_accuracy(), s.reason_accuracy(), s.infrastructure_precision(),
                       s.infrastructure_recall(), s.total);
}

}  // namespace

int main(int argc, char** argv) {
    using namespace acme::diagnose;
    Engine engine = Engine::from_dir(ACME_RULES_DIR);
    std::vector<corpus::Case> cases = corpus::load(ACME_CORPUS_DIR);

    if (argc == 5 && std::string(argv[1]) == "--first-sight" && std::string(argv[3]) == "--commit") {
        if (corpus::of_batch(cases, argv[2]).empty()) {
            fmt::print(stderr, "diagnose: no case has batch = \"{}\"\n", argv[2]);
            return 2;
        }
        fmt::print("{}", corpus::first_sight_tsv(engine, cases, argv[2], argv[4]));
        return 0;
    }
    if (argc != 1) {
        fmt::print(stderr, "usage: diagnose [--first-sight BATCH --commit HASH]\n");
        return 2;
    }

    // 0. Quality over the labelled corpus, then each batch's first sight beside its score now.
    corpus::Score score = corpus::score(engine, cases);
    fmt::print("{}", corpus::report(score));
    fmt::print("corpus now: {}\n", figures(score));
    std::vector<std::filesystem::path> records;
    if (std::filesystem::is_directory(ACME_FIRST_SIGHT_DIR))
        for (const auto& entry : std::filesystem::directory_iterator(ACME_FIRST_SIGHT_DIR))
            if (entry.path().extension() == ".tsv") records.push_back(entry.path());
    std::sort(records.begin(), records.end());
    std::optional<corpus::FirstSight> latest;
    std::vector<corpus::FirstSight> sights;
    for (const auto& path : records) {
        corpus::FirstSight record = corpus::read_first_sight(path);
        sights.push_back(record);
        corpus::Score now = corpus::score(engine, corpus::of_batch(cases, record.batch));
        fmt::print("batch {} first sight (rules at {}): {}\n", record.batch, record.commit.substr(0, 12),
                   figures(record.score));
        fmt::print("batch {} now:                          {}\n", record.batch, figures(now));
        latest = std::move(record);
    }
    const corpus::Score& judged = latest ? latest->score : score;
    if (latest) fmt::print("\nlatest batch {} at first sight:\n{}", latest->batch, corpus::report(latest->score));
    fmt::print("targets on {}: category {:.3f} (>= 0.95), reason {:.3f} (>= 0.90), infrastructure precision {:.3f} "
               "(>= 0.99), recall {:.3f} (>= 0.95)\n\n",
               latest ? fmt::format("batch {} at first sight", latest->batch) : std::string("the corpus"),
               judged.category_accuracy(), judged.reason_accuracy(), judged.infrastructure_precision(),
               judged.infrastructure_recall());

    // 0a. The learned fallback as it would have met each batch (common/diagnose/time_split.hpp):
    // batch k scored as the recorded rules' answer, else the answer of a model trained only on
    // the cases before batch k, at a threshold calibrated on the earlier batches' no-rule cases
    // (each met by the model trained before it), never on batch k. Its design was chosen looking
    // at batches 06-09 only; 10 and later are the held-out figure.
    {
        auto started = Clock::now();
        auto splits = corpus::time_splits(cases, sights);
        std::vector<corpus::FallbackTrial> earlier;
        struct Pool {
            corpus::Score without, with;
            int answered = 0, right = 0, asked = 0;
        } design, held_out;
        std::string lines;
        for (std::size_t i = 0; i < splits.size(); ++i) {
            double threshold = corpus::calibrated_threshold(earlier, kFallbackPrecision);
            if (splits[i].batch >= kFirstTimeSplit) {
                auto s = corpus::score_split(sights[i], splits[i], threshold);
                Pool& pool = splits[i].batch <= kLastDesignSplit ? design : held_out;
                add(pool.without, s.without);
                add(pool.with, s.with);
                pool.answered += s.answered;
                pool.right += s.right;
                pool.asked += static_cast<int>(splits[i].trials.size());
                lines += fmt::format("  batch {} (trained on {} cases, threshold {:.2f} from {} earlier no-rule cases): "
                                     "fallback answered {} of {} no-rule cases, {} right\n"
                                     "    first sight:            {}\n    first sight + fallback: {}\n",
                                     splits[i].batch, splits[i].trained_on, threshold, earlier.size(), s.answered,
                                     splits[i].trials.size(), s.right, figures(s.without), figures(s.with));
                if (std::getenv("ACME_BENCH_TRIALS"))
                    for (const auto& t : splits[i].trials)
                        lines += fmt::format("      {} {:<70} best {:<24} p={:.2f}{}\n", t.best == t.expected ? "+" : "-",
                                             t.where, t.best, t.probability, t.probability >= threshold ? " ANSWER" : "");
            }
            earlier.insert(earlier.end(), splits[i].trials.begin(), splits[i].trials.end());
        }
        fmt::print("learned fallback, time-split ({} splits, {:.0f} s; precision target {:.2f}):\n{}", splits.size(),
                   seconds_since(started), kFallbackPrecision, lines);
        for (const auto& [name, pool] : {std::pair<const char*, const Pool&>{"design batches", design},
                                         std::pair<const char*, const Pool&>{"held-out batches", held_out}}) {
            fmt::print("  pooled {}: fallback answered {} of {} no-rule cases, {} right\n"
                       "    first sight:            {}\n    first sight + fallback: {}\n",
                       name, pool.answered, pool.asked, pool.right, figures(pool.without), figures(pool.with));
        }
        fmt::print("\n");
        if (std::getenv("ACME_BENCH_TIME_SPLIT_ONLY")) return 0;
    }

    // 0b. The learned fallback over the whole corpus, held out by source repository: the
    // repositories in 10 folds; each fold's cases scored by the engine (rules first, the model
    // where no rule decides) with a model trained on the other folds. The rules alone are the
    // corpus figure. (One model per repository, as before, cost a training per repository: over
    // a thousand.)
    {
        constexpr std::size_t kFolds = 10;
        auto started = Clock::now();
        std::vector<std::vector<std::size_t>> folds(kFolds);
        std::vector<FallbackExample> all;
        std::set<std::string> repositories;
        for (std::size_t i = 0; i < cases.size(); ++i) {
            std::string group = corpus::source_group(cases[i]);
            repositories.insert(group);
            folds[std::hash<std::string>{}(group) % kFolds].push_back(i);
            all.push_back({cases[i].expected, cases[i].text, group, fallback_features(cases[i].text)});
        }
        corpus::Score combined;
        int answered = 0, answered_right = 0, decided = 0, decided_right = 0;
        for (const auto& members : folds) {
            if (members.empty()) continue;
            std::vector<FallbackExample> rest;
            std::vector<bool> held_out(cases.size(), false);
            for (std::size_t i : members) held_out[i] = true;
            for (std::size_t i = 0; i < cases.size(); ++i)
                if (!held_out[i]) rest.push_back(all[i]);
            auto model = std::make_shared<const FallbackModel>(FallbackModel::train(rest));
            Engine with = engine.with_fallback(model);
            std::vector<corpus::Case> held;
            for (std::size_t i : members) {
                held.push_back(cases[i]);
                auto p = model->predict(cases[i].text);
                if (p.reason != "unknown") {
                    ++answered;
                    answered_right += p.reason == cases[i].expected;
                }
            }
            add(combined, corpus::score(with, held));
            for (const auto& c : held) {
                JobEnd job = c.job;
                job.log = c.text;
                auto d = with.diagnose(job);
                if (d.rule == "fallback") {
                    ++decided;
                    decided_right += d.reason == c.expected;
                }
            }
        }
        fmt::print("learned fallback, held out by source repository ({} repositories in {} folds, threshold {:.2f}, {:.0f} s):\n",
                   repositories.size(), kFolds, FallbackModel::kDefaultThreshold, seconds_since(started));
        fmt::print("  alone: answers {} of {} cases, {:.1f} % of them right\n", answered, cases.size(),
                   answered ? 100.0 * answered_right / answered : 0.0);
        fmt::print("  rules + fallback: {} (the fallback decided {} cases where no rule did, {} right)\n", figures(combined),
                   decided, decided_right);
        fmt::print("  rules alone:      {}\n\n", figures(score));
    }

    // 1. A 256 KiB tail, as the epilog reads it: median over repeated runs.
    std::string tail = synthetic_log(256 * 1024, 400);
    JobEnd job;
    job.log = tail;
    job.job_exit = ExitStatus{1, 0};
    std::vector<double> runs;
    Diagnosis d;
    for (int i = 0; i < 101; ++i) {
        auto start = Clock::now();
        d = engine.diagnose(job);
        runs.push_back(seconds_since(start));
    }
    std::sort(runs.begin(), runs.end());
    double median_ms = runs[runs.size() / 2] * 1e3;
    fmt::print("diagnose 256 KiB tail ({} lines, {} rules): median {:.3f} ms (target < 5 ms: {:.1f}x headroom), cause {}\n",
               count_lines(tail), engine.rules().log.size(), median_ms, 5.0 / median_ms, d.reason);

    // 2. A 100 MiB log, engine against grep -E with every rule pattern over the same file.
    std::size_t mib = 100;
    if (const char* env = std::getenv("ACME_BENCH_MIB")) mib = std::max(1, std::atoi(env));
    auto dir = std::filesystem::temp_directory_path() / fmt::format("acme-bench-{}", getpid());
    std::filesystem::create_directories(dir);
    std::string big = synthetic_log(mib << 20, 20000);
    std::size_t lines = count_lines(big);
    {
        std::ofstream(dir / "log") << big;
        std::ofstream patterns(dir / "patterns");
        for (const auto& rule : engine.rules().log) patterns << to_ere(rule.pattern) << '\n';
    }

    job.log = big;
    auto start = Clock::now();
    d = engine.diagnose(job);
    double engine_s = seconds_since(start);

    std::string command = fmt::format("LC_ALL=C grep -E -c -f '{}' '{}' > '{}'", (dir / "patterns").string(),
                                      (dir / "log").string(), (dir / "grep.out").string());
    start = Clock::now();
    int status = std::system(command.c_str());
    double grep_s = seconds_since(start);
    std::string grep_count;
    std::ifstream(dir / "grep.out") >> grep_count;
    std::filesystem::remove_all(dir);

    double engine_rate = static_cast<double>(lines) / engine_s;
    double grep_rate = static_cast<double>(lines) / grep_s;
    fmt::print("diagnose {} MiB log ({} lines): engine {:.2f} s = {:.2f} M lines/s, cause {}\n", mib, lines, engine_s,
               engine_rate / 1e6, d.reason);
    if (status != 0 && grep_count.empty()) {
        fmt::print("grep -E -f (all {} rule patterns) failed with status {}: no ratio\n", engine.rules().log.size(), status);
        return 0;
    }
    fmt::print("grep -E -c -f <all {} rule patterns>: {:.2f} s = {:.2f} M lines/s ({} matching lines)\n",
               engine.rules().log.size(), grep_s, grep_rate / 1e6, grep_count);
    fmt::print("engine / grep -E throughput ratio: {:.2f}x\n", engine_rate / grep_rate);
    return 0;
}
