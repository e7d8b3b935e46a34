// acme-eval-opencompass: runs one OpenCompass dataset config (or one shard of it) on the staged
// checkpoint and turns OpenCompass's results files into the suite contract's result.json (man
// acme-eval-adapters(1), evalsched-suite(5)).
//
//   acme-eval-opencompass run --checkpoint DIR --dataset FAMILY.CONFIG --out DIR [--infer-only]
//                             [--shard I --num-shards N --samples N] [--gpus G] [--model hf|vllm|lmdeploy] [-- ARGS...]
//   acme-eval-opencompass score --dataset FAMILY.CONFIG --out DIR
//
// The dataset FAMILY.CONFIG names opencompass/configs/datasets/FAMILY/CONFIG.py and its list
// FAMILY_datasets (gsm8k.gsm8k_gen: gsm8k_datasets); FAMILY.CONFIG.VAR (or FAMILY.CONFIG:VAR)
// names a list of another name (CLUE_C3.CLUE_C3_gen.C3_datasets, SVAMP.svamp_gen.svamp_datasets).
// The adapter writes an OpenCompass config
// (models + datasets; a shard sets the dataset reader's test_range = '[begin:end]', the same
// selection opencompass's SizePartitioner uses) and runs `opencompass CONFIG -w WORK -m infer|all`
// with a fixed work dir, so the metric job can run `-m eval -r <timestamp>` on the predictions the
// GPU trial wrote (opencompass/cli/main.py: --mode, --reuse, --work-dir, --max-num-workers).
// OpenCompass exits 0 when a task fails, so the adapter checks every abbr of the config
// OpenCompass dumped and every sample itself (opencompass_output.hpp check_complete).
// OpenCompass runs in the trial's own output directory: NumWorkerPartitioner rewrites
// .cache/dataset_size.json in the cwd in place (opencompass/partitioners/num_worker.py,
// dataset_size_path), and the runner writes tmp/<pid>_params.py there
// (opencompass/runners/local.py), so trials sharing a cwd would race on them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (fmt 11 keeps it here only)
#include <nlohmann/json.hpp>

#include "common/util/version.hpp"
#include "evalsched/adapters/harness_files.hpp"
#include "evalsched/adapters/opencompass_output.hpp"

namespace {

using namespace acme::adapters;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kModelAbbr = "evalsched";  // results/<model_abbr>/: fixed, so the files are found
constexpr std::size_t kMaxFile = 512u << 20;

struct RunOptions {
    std::string checkpoint, dataset, out, model = "hf", hf_type = "base", opencompass = "opencompass";
    int shard = 0, num_shards = 1, gpus = 1, batch_size = 8, max_out_len = 256;
    long samples = 0;
    bool infer_only = false;
    std::vector<std::string> extra;
};

std::string py_str(std::string_view s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\\' || c == '\'') out += '\\';
        out += c;
    }
    return out + "'";
}

// FAMILY.CONFIG[.VAR|:VAR] -> (module, list variable). All are Python identifiers ('-' never appears).
std::pair<std::string, std::string> dataset_module(const std::string& dataset) {
    static const std::regex ok(R"(([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)(?:[.:]([A-Za-z_][A-Za-z0-9_]*))?)");
    std::smatch m;
    if (!std::regex_match(dataset, m, ok))
        throw AdapterError(fmt::format("dataset {} is not FAMILY.CONFIG or FAMILY.CONFIG.VAR (e.g. gsm8k.gsm8k_gen for opencompass/configs/datasets/gsm8k/gsm8k_gen.py, "
                                       "CLUE_C3.CLUE_C3_gen.C3_datasets for a list not named FAMILY_datasets): name the dataset so in the suite",
                                       dataset));
    return {fmt::format("opencompass.configs.datasets.{}.{}", m[1].str(), m[2].str()), m[3].matched ? m[3].str() : m[1].str() + "_datasets"};
}

std::string config_text(const RunOptions& o, const Range& range) {
    const auto [module, var] = dataset_module(o.dataset);
    std::string model;
    if (o.model == "hf")
        model = fmt::format("dict(type={}, abbr='{}', path={}, max_out_len={}, batch_size={}, run_cfg=dict(num_gpus={}))",
                            o.hf_type == "chat" ? "HuggingFacewithChatTemplate" : "HuggingFaceBaseModel", kModelAbbr, py_str(o.checkpoint),
                            o.max_out_len, o.batch_size, o.gpus);
    else if (o.model == "vllm")
        model = fmt::format("dict(type=VLLM, abbr='{}', path={}, model_kwargs=dict(tensor_parallel_size={}), max_out_len={}, batch_size={}, "
                            "run_cfg=dict(num_gpus={}))",
                            kModelAbbr, py_str(o.checkpoint), o.gpus, o.max_out_len, o.batch_size * 4, o.gpus);
    else
        model = fmt::format("dict(type=TurboMindModel, abbr='{}', path={}, engine_config=dict(tp={}), max_out_len={}, batch_size={}, "
                            "run_cfg=dict(num_gpus={}))",
                            kModelAbbr, py_str(o.checkpoint), o.gpus, o.max_out_len, o.batch_size * 4, o.gpus);
    const char* model_class = o.model == "hf" ? (o.hf_type == "chat" ? "HuggingFacewithChatTemplate" : "HuggingFaceBaseModel")
                              : o.model == "vllm" ? "VLLM" : "TurboMindModel";
    std::string text = fmt::format(
        "# Written by acme-eval-opencompass for evalsched: {} on the staged checkpoint.\n"
        "from mmengine.config import read_base\n"
        "with read_base():\n"
        "    from {} import {}\n"
        "from opencompass.models import {}\n\n"
        "models = [{}]\n",
        o.dataset, module, var, model_class, model);
    if (o.num_shards == 1) return text + fmt::format("datasets = {}\n", var);
    return text + fmt::format(
                      "assert len({0}) == 1, '{1} has several subsets: only a single-subset dataset can be sharded; set shard = false for it'\n"
                      "datasets = [dict(d, abbr=d['abbr'] + '_shard{2}of{3}', reader_cfg=dict(d['reader_cfg'], test_range='[{4}:{5}]')) for d in {0}]\n",
                      var, o.dataset, o.shard, o.num_shards, range.begin, range.end);
}

// Predictions of one abbr: <abbr>.json, or the size partitioner's pieces <abbr>_0.json, ...;
// -1 when there are none.
long predictions_of(const std::string& preds, const std::string& abbr) {
    long n = -1;
    for (const auto& p : find_files(preds, abbr + ".json")) n = std::max(n, 0L) + opencompass::count_predictions(read_file(p, kMaxFile), p);
    for (const auto& p : find_files(preds, abbr + "_[0-9]*.json"))
        if (std::regex_match(fs::path(p).stem().string().substr(abbr.size()), std::regex("_[0-9]+")))
            n = std::max(n, 0L) + opencompass::count_predictions(read_file(p, kMaxFile), p);
    return n;
}

// The abbrs OpenCompass resolved the run's config to (its dumped configs/<ts>_<pid>.py).
std::vector<std::string> expected_abbrs(const std::string& run_dir) {
    const auto dumps = find_files(run_dir + "/configs", "*.py");
    if (dumps.empty()) throw AdapterError(fmt::format("OpenCompass left no dumped config under {}/configs: see its output above", run_dir));
    return opencompass::dumped_dataset_abbrs(read_file(dumps.back(), kMaxFile), dumps.back());
}

// Every subset's scores and sample counts of one run directory, after checking that every abbr
// has predictions (and results, with `results`) and that they number `samples` (> 0).
std::vector<opencompass::Subset> read_run(const std::string& dataset, const std::string& run_dir, long samples, bool results) {
    const std::string res = fmt::format("{}/results/{}", run_dir, kModelAbbr), preds = fmt::format("{}/predictions/{}", run_dir, kModelAbbr);
    std::vector<opencompass::Found> found;
    for (const auto& abbr : expected_abbrs(run_dir))
        found.push_back({abbr, predictions_of(preds, abbr), fs::is_regular_file(fmt::format("{}/{}.json", res, abbr))});
    opencompass::check_complete(dataset, run_dir, found, samples, results);
    std::vector<opencompass::Subset> out;
    if (!results) return out;
    for (const auto& f : found) {
        const std::string file = fmt::format("{}/{}.json", res, f.abbr);
        out.push_back({f.abbr, opencompass::parse_result(read_file(file, kMaxFile), file), f.predictions});
    }
    return out;
}

// The rows of the summary OpenCompass wrote for a run after evaluating (none before: infer only).
std::vector<opencompass::SummaryRow> summary_of(const std::string& run_dir) {
    const auto files = find_files(run_dir + "/summary", "*.csv");
    if (files.empty()) return {};
    return opencompass::parse_summary(read_file(files.back(), kMaxFile));
}

// What evalsched report shows beside the scores: each metric's version and mode from the runs'
// summaries, where every subset agrees.
nlohmann::json details_of(const Result& r, const std::vector<std::vector<opencompass::Subset>>& runs,
                          const std::vector<opencompass::SummaryRow>& rows) {
    std::vector<std::string> abbrs;
    for (const auto& run : runs)
        for (const auto& s : run) abbrs.push_back(s.abbr);
    return opencompass::summary_details(r, rows, abbrs);
}

// OpenCompass in the trial's own directory (see the top of this file). A relative
// COMPASS_DATA_CACHE (opencompass/utils/datasets.py get_data_path) keeps meaning what it meant.
void enter_own_dir(const std::string& dir) {
    if (const char* cache = std::getenv("COMPASS_DATA_CACHE"); cache && *cache && cache[0] != '/')
        ::setenv("COMPASS_DATA_CACHE", fs::absolute(cache).c_str(), 1);
    fs::current_path(dir);
}

int run(RunOptions o) {
    Range range{0, o.samples};
    if (o.num_shards > 1) {
        if (o.samples <= 0)
            throw AdapterError(fmt::format("shard {} of {} of {} needs the dataset's size: pass --samples {{samples}} and set samples = N for it",
                                           o.shard, o.num_shards, o.dataset));
        range = shard_range(o.samples, o.shard, o.num_shards);
    }
    const std::string text = config_text(o, range);
    fs::create_directories(o.out);
    o.out = fs::absolute(o.out).string();
    const std::string config = o.out + "/evalsched_opencompass.py";
    std::ofstream(config) << text;
    const opencompass::PartRecord part{o.dataset, o.shard, o.num_shards, range.begin, range.end, o.samples};
    std::ofstream(o.out + "/evalsched-part.json") << opencompass::part_record_json(part);
    std::vector<std::string> argv{o.opencompass, config, "-w", o.out + "/opencompass", "-m", o.infer_only ? "infer" : "all", "--max-num-workers", "1"};
    argv.insert(argv.end(), o.extra.begin(), o.extra.end());
    std::fprintf(stderr, "acme-eval-opencompass: running %s\n", fmt::format("{}", fmt::join(argv, " ")).c_str());
    enter_own_dir(o.out);
    if (const int rc = run_harness(argv); rc != 0) return rc;
    const std::string run_dir = opencompass::newest_run(o.out + "/opencompass");
    // The metric job scores; every subset's predictions must be there for it.
    std::vector<opencompass::Subset> subsets = read_run(o.dataset, run_dir, range.size(), !o.infer_only);
    if (o.infer_only) return 0;
    Result r = opencompass::combine({subsets});
    r.details = details_of(r, {subsets}, summary_of(run_dir));
    r.sources = {run_dir};
    write_result(o.out, r);
    return 0;
}

// The metric job: `-m eval -r <timestamp>` in every part's work dir (CPU: the evaluators), then
// every part's subsets into one result.json.
int score(const std::string& dataset, std::string out, const std::string& prog, bool eval) {
    out = fs::absolute(out).string();
    std::vector<std::string> parts;
    for (const auto& d : subdirs(out))
        if (fs::path(d).filename().string().starts_with("shard-")) parts.push_back(d);
    if (parts.empty()) parts.push_back(out);
    std::vector<std::vector<opencompass::Subset>> runs;
    std::vector<std::pair<long, long>> ranges;
    std::vector<opencompass::SummaryRow> summary;
    long total = -1;
    Result sources;
    for (const auto& part : parts) {
        const std::string run_dir = opencompass::newest_run(part + "/opencompass");
        long expected = 0;
        if (const std::string f = part + "/evalsched-part.json"; parts.size() > 1 || fs::exists(f)) {
            const opencompass::PartRecord rec = opencompass::parse_part_record(read_file(f, 4096), f);
            ranges.emplace_back(rec.begin, rec.end);
            total = rec.samples;
            expected = rec.end - rec.begin;
        }
        if (eval) {
            std::vector<std::string> argv{prog, part + "/evalsched_opencompass.py", "-w", part + "/opencompass", "-m", "eval", "-r",
                                          fs::path(run_dir).filename().string(), "--max-num-workers", "1"};
            enter_own_dir(part);
            if (const int rc = run_harness(argv); rc != 0) return rc;
        }
        runs.push_back(read_run(dataset, run_dir, expected, true));
        for (auto& row : summary_of(run_dir)) summary.push_back(std::move(row));
        sources.sources.push_back(run_dir);
    }
    if (parts.size() > 1) {
        std::sort(ranges.begin(), ranges.end());
        long at = 0;
        for (const auto& [b, e] : ranges) {
            if (b != at) throw AdapterError(fmt::format("the shards of {} under {} do not cover samples {} to {}", dataset, out, at, b));
            at = e;
        }
        if (at != total) throw AdapterError(fmt::format("the shards of {} under {} cover {} of {} samples", dataset, out, at, total));
    }
    Result r = opencompass::combine(runs);
    r.details = details_of(r, runs, summary);
    r.sources = sources.sources;
    for (const auto& u : r.unsupported) std::fprintf(stderr, "acme-eval-opencompass: %s\n", u.c_str());
    write_result(out, r);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"acme-eval-opencompass: one OpenCompass dataset or shard, scored into evalsched's result.json"};
    app.require_subcommand(1);
    app.set_version_flag("--version", acme::version_line("acme-eval-opencompass"), "print the version and exit");
    app.failure_message([](const CLI::App*, const CLI::Error& e) { return std::string("acme-eval-opencompass: ") + e.what() + ": see --help\n"; });
    RunOptions o;
    auto* run_cmd = app.add_subcommand("run", "run OpenCompass on one dataset config (or a shard of it)");
    run_cmd->add_option("--checkpoint", o.checkpoint, "the staged checkpoint ({checkpoint})")->required();
    run_cmd->add_option("--dataset", o.dataset, "FAMILY.CONFIG[.VAR], e.g. gsm8k.gsm8k_gen ({dataset})")->required();
    run_cmd->add_option("--out", o.out, "output directory ({output})")->required();
    run_cmd->add_flag("--infer-only", o.infer_only, "predictions only (-m infer): a metric job scores them");
    run_cmd->add_option("--model", o.model, "hf, vllm or lmdeploy")->check(CLI::IsMember({"hf", "vllm", "lmdeploy"}));
    run_cmd->add_option("--hf-type", o.hf_type, "base or chat (hf)")->check(CLI::IsMember({"base", "chat"}));
    run_cmd->add_option("--shard", o.shard, "shard index ({shard})");
    run_cmd->add_option("--num-shards", o.num_shards, "number of shards ({num_shards})")->check(CLI::Range(1, 100000));
    run_cmd->add_option("--samples", o.samples, "the dataset's size ({samples}); needed to shard")->check(CLI::Range(0L, 100000000L));
    run_cmd->add_option("--gpus", o.gpus, "GPUs of the trial ({gpus})")->check(CLI::Range(1, 64));
    run_cmd->add_option("--batch-size", o.batch_size, "the model's batch_size")->check(CLI::Range(1, 4096));
    run_cmd->add_option("--max-out-len", o.max_out_len, "the model's max_out_len")->check(CLI::Range(1, 1000000));
    run_cmd->add_option("--opencompass", o.opencompass, "the harness command (default opencompass, from PATH)");
    run_cmd->add_option("extra", o.extra, "after --: passed to opencompass as they are");
    std::string dataset, out, prog = "opencompass";
    bool no_eval = false;
    auto* score_cmd = app.add_subcommand("score", "the metric job: evaluate every shard's predictions and combine them");
    score_cmd->add_option("--dataset", dataset, "FAMILY.CONFIG[.VAR] ({dataset})")->required();
    score_cmd->add_option("--out", out, "the dataset's output directory ({output})")->required();
    score_cmd->add_option("--opencompass", prog, "the harness command (default opencompass)");
    score_cmd->add_flag("--no-eval", no_eval, "only read results the trials' -m all runs wrote");
    CLI11_PARSE(app, argc, argv);
    try {
        if (*run_cmd) return run(o);
        return score(dataset, out, prog, !no_eval);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "acme-eval-opencompass: %s\n", e.what());
    }
    return 1;
}
