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
// ACME_BENCH_TIME_SPLIT_ONLY=1 stops after that section, which ends with the threshold
// acme-fallback-train writes into fallback.model (the same calibration over every record).
// Then the fallback over the corpus, held out by source repository (10 folds of repositories),
// at that threshold, and the tie-breaker (engine.hpp) on against off: the tie margin chosen on
// folds 0-4, folds 5-9 scored once at it; how many corpus cases are ties at each margin.
// ACME_BENCH_DESIGN_FOLDS_ONLY=1 scores folds 0-4 only; ACME_BENCH_SKIP_TIME_SPLIT=1 skips the
// time-split (the fallback then answers at the default 0.9).
// Then speed: a log tail, side by side with grep -E running every rule pattern over the same
// text. Prints figures and ratios; never fails (the unit accuracy test asserts the floors).
#include <algorithm>
#include <array>
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
#include "common/diagnose/held_out.hpp"
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
using acme::diagnose::corpus::kFallbackPrecision;

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
        // The engine as it would have shipped the day before the batch: the tree's rules and the
        // model acme-fallback-train would have built then, from the cases before the batch, at the
        // threshold calibrated on the records of the batches before it. Never the batch's own
        // cases (they are committed before the record, step 1 of the protocol).
        // ACME_FIRST_SIGHT_RULES_ONLY=1: the rules alone, as the records up to batch 18 were.
        std::string batch = argv[2], fallback = "no fallback";
        if (!std::getenv("ACME_FIRST_SIGHT_RULES_ONLY")) {
            std::vector<corpus::FirstSight> earlier;
            for (auto& record : corpus::read_first_sights(ACME_FIRST_SIGHT_DIR))
                if (record.batch < batch) earlier.push_back(std::move(record));
            auto before = corpus::examples_before(cases, batch);
            FallbackModel model = FallbackModel::train(before);
            model.set_threshold(corpus::trained_threshold(cases, earlier));
            fallback = fmt::format("the learned fallback trained on the {} cases before it, threshold {:.2f} from {} records",
                                   before.size(), model.threshold(), earlier.size());
            engine = engine.with_fallback(std::make_shared<const FallbackModel>(std::move(model)));
        }
        fmt::print("# engine\t{}\n", fallback);
        fmt::print("{}", corpus::first_sight_tsv(engine, cases, batch, argv[4]));
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

    // The threshold acme-fallback-train writes into fallback.model: the time-split's, calibrated
    // on every record's no-rule cases (corpus::trained_threshold), as below.
    double shipped_threshold = FallbackModel::kDefaultThreshold;
    std::string shipped_from = ", the default: ACME_BENCH_SKIP_TIME_SPLIT";
    if (const char* given = std::getenv("ACME_BENCH_THRESHOLD")) {  // the trainer's, read off fallback.model
        shipped_threshold = std::atof(given);
        shipped_from = ", ACME_BENCH_THRESHOLD";
    }

    // 0a. The learned fallback as it would have met each batch (common/diagnose/time_split.hpp):
    // batch k scored as the recorded rules' answer, else the answer of a model trained only on
    // the cases before batch k, at a threshold calibrated on the earlier batches' no-rule cases
    // (each met by the model trained before it), never on batch k. Its design was chosen looking
    // at batches 06-09 only; 10 and later are the held-out figure.
    if (!std::getenv("ACME_BENCH_SKIP_TIME_SPLIT")) {
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
        shipped_threshold = corpus::calibrated_threshold(earlier, kFallbackPrecision);
        shipped_from = fmt::format(", the trainer's: from all {} no-rule cases", earlier.size());
        fmt::print("  the threshold acme-fallback-train writes (every record's no-rule cases, {}): {:.2f}\n", earlier.size(),
                   shipped_threshold);
        fmt::print("\n");
        if (std::getenv("ACME_BENCH_TIME_SPLIT_ONLY")) return 0;
    }

    // 0c. The rules held out from the cases they were written for (common/diagnose/held_out.hpp):
    // each log rule split into its wordings; a case scored as if the wordings only its own source
    // repository's cases match (or only its own batch's) did not exist, by the rules alone and with
    // the learned fallback trained without the case's repositories (the folds of 0b) or batch, at the
    // trainer's threshold. ACME_BENCH_HELD_OUT_MISSES=1 lists the misses; ACME_BENCH_HELD_OUT_ONLY=1
    // stops after this section; ACME_BENCH_HELD_OUT_NO_FALLBACK=1 scores the rules alone.
    {
        constexpr std::size_t kFolds = 10;
        auto started = Clock::now();
        held_out::Wordings w = held_out::match(engine.rules(), cases);
        std::vector<std::string> group_of, batch_of;
        for (const auto& c : cases) {
            group_of.push_back(corpus::source_group(c));
            batch_of.push_back(c.batch);
        }
        auto by_group = held_out::owners(w, group_of), by_batch = held_out::owners(w, batch_of);
        Engine split(w.rules);
        std::size_t matched = 0, one_group = 0, one_batch = 0;
        for (std::size_t k = 0; k < w.rules.log.size(); ++k) {
            matched += !w.cases_of[k].empty();
            one_group += !by_group[k].empty();
            one_batch += !by_batch[k].empty();
        }
        bool with_fallback = !std::getenv("ACME_BENCH_HELD_OUT_NO_FALLBACK");
        std::vector<std::vector<std::string>> features;
        double temperature = 0;  // every held-out model borrows the full model's (fallback.hpp)
        if (with_fallback) {
            std::vector<FallbackExample> every;
            for (std::size_t i = 0; i < cases.size(); ++i) {
                features.push_back(fallback_features(cases[i].text));
                every.push_back({cases[i].expected, cases[i].text, group_of[i], features[i]});
            }
            temperature = FallbackModel::train(every).temperature();
        }
        auto model_without = [&](const std::function<bool(std::size_t)>& out) -> std::shared_ptr<const FallbackModel> {
            std::vector<FallbackExample> rest;
            for (std::size_t i = 0; i < cases.size(); ++i)
                if (!out(i)) rest.push_back({cases[i].expected, cases[i].text, group_of[i], features[i]});
            return std::make_shared<const FallbackModel>(FallbackModel::train(rest, temperature));
        };
        auto verdict = [&](corpus::Score& s, const Engine& e, std::size_t i, const std::vector<bool>& without) {
            const corpus::Case& c = cases[i];
            JobEnd job = c.job;
            job.log = c.text;
            Diagnosis d = e.diagnose_without(job, without);
            const ReasonInfo* got = find_reason(d.reason);
            corpus::tally(s, fmt::format("{}/{} [{}]", c.expected, c.log.filename().string(), d.rule.empty() ? "-" : d.rule),
                          *find_reason(c.expected), got ? *got : unknown_reason(),
                          d.evidence.empty() ? "" : d.evidence.front().text, !c.known_miss.empty());
        };
        FallbackKeys keys;
        keys.threshold = shipped_threshold;
        if (const char* overrule = std::getenv("ACME_BENCH_OVERRULE")) keys.overrule = std::atof(overrule);
        // Leave one repository out.
        corpus::Score whole, loro, loro_fb;
        std::vector<std::vector<std::size_t>> folds(kFolds);
        for (std::size_t i = 0; i < cases.size(); ++i) folds[std::hash<std::string>{}(group_of[i]) % kFolds].push_back(i);
        for (std::size_t f = 0; f < kFolds; ++f) {
            std::shared_ptr<const FallbackModel> model;
            if (with_fallback && !folds[f].empty()) {
                std::vector<bool> in_fold(cases.size(), false);
                for (std::size_t i : folds[f]) in_fold[i] = true;
                model = model_without([&](std::size_t i) { return in_fold[i]; });
            }
            Engine fb = split.with_fallback(model, keys);
            for (std::size_t i : folds[f]) {
                verdict(whole, split, i, {});
                auto without = held_out::owned_by(by_group, group_of[i]);
                verdict(loro, split, i, without);
                if (model) verdict(loro_fb, fb, i, without);
            }
        }
        fmt::print("rules held out from their cases ({} log rules in {} wordings; {} match a corpus case, {} of them one "
                   "repository's only, {} one batch's only):\n",
                   engine.rules().log.size(), w.rules.log.size(), matched, one_group, one_batch);
        fmt::print("  all wordings (the corpus figure):     {}\n", figures(whole));
        fmt::print("  leave one repository out, rules:      {}\n", figures(loro));
        if (with_fallback) fmt::print("  leave one repository out, + fallback: {}\n", figures(loro_fb));
        // Leave one batch out, beside the batch's first sight.
        corpus::Score pooled, pooled_fb, pooled_first;
        std::string misses;
        for (const std::string& batch : corpus::batches(cases)) {
            auto without = held_out::owned_by(by_batch, batch);
            std::shared_ptr<const FallbackModel> model;
            if (with_fallback && batch >= "12") model = model_without([&](std::size_t i) { return batch_of[i] == batch; });
            Engine fb = split.with_fallback(model, keys);
            corpus::Score s, s_fb;
            for (std::size_t i = 0; i < cases.size(); ++i) {
                if (batch_of[i] != batch) continue;
                verdict(s, split, i, without);
                if (model) verdict(s_fb, fb, i, without);
            }
            auto first = std::find_if(sights.begin(), sights.end(), [&](const auto& r) { return r.batch == batch; });
            fmt::print("  batch {} first sight:                {}\n", batch,
                       first == sights.end() ? std::string("no record") : figures(first->score));
            fmt::print("  batch {} held out, rules:            {}\n", batch, figures(s));
            if (model) fmt::print("  batch {} held out, + fallback:       {}\n", batch, figures(s_fb));
            if (batch >= "12") {
                add(pooled, s);
                if (model) add(pooled_fb, s_fb);
                if (first != sights.end()) add(pooled_first, first->score);
                for (const auto& m : (model ? s_fb : s).misses) misses += m + "\n";
            }
        }
        fmt::print("  batches 12-: first sight:            {}\n", figures(pooled_first));
        fmt::print("  batches 12-: held out, rules:        {}\n", figures(pooled));
        if (with_fallback) fmt::print("  batches 12-: held out, + fallback:   {}\n", figures(pooled_fb));
        if (std::getenv("ACME_BENCH_HELD_OUT_MISSES")) {
            fmt::print("  leave one repository out, misses{}:\n", with_fallback ? " (+ fallback)" : "");
            for (const auto& m : (with_fallback ? loro_fb : loro).misses) fmt::print("  {}\n", m);
            fmt::print("  leave one batch out, batches 12-, misses:\n{}", misses);
        }
        fmt::print("  ({:.0f} s)\n\n", seconds_since(started));
        if (std::getenv("ACME_BENCH_HELD_OUT_ONLY")) return 0;
    }

    // 0b. The learned fallback over the whole corpus, held out by source repository: the
    // repositories in 10 folds; each fold's cases scored by the engine (rules first, the model
    // where no rule decides) with a model trained on the other folds, at the trainer's threshold.
    // The rules alone are the corpus figure. Then the tie-breaker (engine.hpp): the same engine
    // with it on, at each tie margin; the margin is chosen on the design folds (0-4) only, by the
    // highest reason accuracy (the smallest margin among equals), and the held-out folds (5-9)
    // are scored once, at that margin, on and off.
    {
        constexpr std::size_t kFolds = 10, kDesignFolds = 5;
        constexpr std::array kMargins = {0, 10, 25, 50};
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
        // Per variant (0: tie-breaker off; 1 + m: on at kMargins[m]), per fold.
        struct Tally {
            corpus::Score score;
            int answered = 0, answered_right = 0;  // the model alone, at the threshold
            int fallback = 0, fallback_right = 0;  // rule "fallback": where no rule decided
            int ties = 0, ranking_wrong = 0, reachable = 0;  // ties; the ranking's category wrong; a tied rule's right
            int decided = 0, decided_right = 0, decided_was_right = 0;  // the tie-breaker changed the answer
        };
        constexpr std::size_t kVariants = 1 + kMargins.size();
        std::vector<std::array<Tally, kVariants>> tallies(kFolds);
        bool design_only = std::getenv("ACME_BENCH_DESIGN_FOLDS_ONLY") != nullptr;
        auto score_fold = [&](std::size_t fold) {
            const auto& members = folds[fold];
            if (members.empty()) return;
            std::vector<FallbackExample> rest;
            std::vector<bool> held_out(cases.size(), false);
            for (std::size_t i : members) held_out[i] = true;
            for (std::size_t i = 0; i < cases.size(); ++i)
                if (!held_out[i]) rest.push_back(all[i]);
            auto model = std::make_shared<const FallbackModel>(FallbackModel::train(rest));
            for (std::size_t v = 0; v < kVariants; ++v) {
                FallbackKeys keys;
                keys.threshold = shipped_threshold;
                keys.tie_breaker = v > 0;
                keys.tie_margin = v > 0 ? kMargins[v - 1] : 0;
                Engine with = engine.with_fallback(model, keys);
                Tally& t = tallies[fold][v];
                for (std::size_t i : members) {
                    const corpus::Case& c = cases[i];
                    if (v == 0) {
                        auto p = model->predict(c.text, shipped_threshold);
                        if (p.reason != "unknown") {
                            ++t.answered;
                            t.answered_right += p.reason == c.expected;
                        }
                    }
                    JobEnd job = c.job;
                    job.log = c.text;
                    TieBreak tie;
                    Diagnosis d = with.diagnose(job, nullptr, &tie);
                    const ReasonInfo* expected = find_reason(c.expected);
                    const ReasonInfo* got = find_reason(d.reason);
                    corpus::tally(t.score, fmt::format("{}/{}", c.expected, c.log.filename().string()), *expected,
                                  got ? *got : unknown_reason(), d.evidence.empty() ? "" : d.evidence.front().text,
                                  !c.known_miss.empty());
                    if (d.rule == "fallback") {
                        ++t.fallback;
                        t.fallback_right += d.reason == c.expected;
                    }
                    if (tie.candidates.empty()) continue;
                    ++t.ties;
                    bool ranking_right = tie.candidates.front().category == expected->category;
                    t.ranking_wrong += !ranking_right;
                    t.reachable += !ranking_right && std::any_of(tie.candidates.begin(), tie.candidates.end(), [&](const auto& k) {
                        return k.category == expected->category;
                    });
                    if (tie.decided) {
                        ++t.decided;
                        t.decided_right += got && got->category == expected->category;
                        t.decided_was_right += ranking_right;
                    }
                }
            }
        };
        auto pooled = [&](std::size_t from, std::size_t to, std::size_t v) {
            Tally p;
            for (std::size_t f = from; f < to; ++f) {
                const Tally& t = tallies[f][v];
                add(p.score, t.score);
                p.answered += t.answered;
                p.answered_right += t.answered_right;
                p.fallback += t.fallback;
                p.fallback_right += t.fallback_right;
                p.ties += t.ties;
                p.ranking_wrong += t.ranking_wrong;
                p.reachable += t.reachable;
                p.decided += t.decided;
                p.decided_right += t.decided_right;
                p.decided_was_right += t.decided_was_right;
            }
            return p;
        };
        auto tie_line = [](const Tally& t) {
            return fmt::format("{} ties (the ranking's category wrong in {}, a tied rule's right in {} of those); the "
                               "tie-breaker changed {} answers: {} to the right category, {} of them right before",
                               t.ties, t.ranking_wrong, t.reachable, t.decided, t.decided_right, t.decided_was_right);
        };
        for (std::size_t f = 0; f < kDesignFolds; ++f) score_fold(f);
        fmt::print("learned fallback, held out by source repository ({} repositories in {} folds, threshold {:.2f}{}):\n",
                   repositories.size(), kFolds, shipped_threshold, shipped_from);
        fmt::print("  tie-breaker, design folds 0-{} (looked at to choose the margin):\n", kDesignFolds - 1);
        Tally off = pooled(0, kDesignFolds, 0);
        fmt::print("    off:           {}\n", figures(off.score));
        std::size_t chosen = 1;
        for (std::size_t v = 1; v < kVariants; ++v) {
            Tally on = pooled(0, kDesignFolds, v);
            fmt::print("    on, margin {:<3} {}\n      {}\n", kMargins[v - 1], figures(on.score), tie_line(on));
            if (on.score.reason_right > pooled(0, kDesignFolds, chosen).score.reason_right) chosen = v;
        }
        Tally best = pooled(0, kDesignFolds, chosen);
        fmt::print("    chosen margin {} ({} reason right against {} off){}\n", kMargins[chosen - 1], best.score.reason_right,
                   off.score.reason_right,
                   best.score.reason_right > off.score.reason_right ? "" : ": no better than off");
        if (design_only) {
            fmt::print("  (ACME_BENCH_DESIGN_FOLDS_ONLY: the held-out folds are not scored)\n\n");
        } else {
            for (std::size_t f = kDesignFolds; f < kFolds; ++f) score_fold(f);
            Tally held_off = pooled(kDesignFolds, kFolds, 0), held_on = pooled(kDesignFolds, kFolds, chosen);
            fmt::print("  tie-breaker, held-out folds {}-{}, margin {} (scored once):\n", kDesignFolds, kFolds - 1,
                       kMargins[chosen - 1]);
            fmt::print("    off: {}\n    on:  {}\n      {}\n", figures(held_off.score), figures(held_on.score),
                       tie_line(held_on));
            Tally whole = pooled(0, kFolds, 0), whole_on = pooled(0, kFolds, chosen);
            fmt::print("  ties in the corpus (the shipped rules, all folds):");
            for (std::size_t v = 1; v < kVariants; ++v)
                fmt::print("{} margin {}: {}", v == 1 ? "" : ",", kMargins[v - 1], pooled(0, kFolds, v).ties);
            fmt::print(" of {} cases (a first-sight record keeps only the deciding rule: it cannot show ties)\n",
                       cases.size());
            fmt::print("  shipped: tie_breaker = {}, tie_margin = {}\n", kTieBreakerDefault, kTieMarginDefault);
            fmt::print("  alone: answers {} of {} cases, {:.1f} % of them right\n", whole.answered, cases.size(),
                       whole.answered ? 100.0 * whole.answered_right / whole.answered : 0.0);
            fmt::print("  rules + fallback: {} (the fallback decided {} cases where no rule did, {} right)\n",
                       figures(whole.score), whole.fallback, whole.fallback_right);
            fmt::print("  rules + fallback + tie-breaker at margin {}: {}\n", kMargins[chosen - 1], figures(whole_on.score));
            fmt::print("  rules alone:      {}\n", figures(score));
        }
        fmt::print("  ({:.0f} s)\n\n", seconds_since(started));
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
