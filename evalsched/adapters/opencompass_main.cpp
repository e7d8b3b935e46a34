// acme-eval-opencompass: runs one OpenCompass dataset config (or one shard of it) on the staged
// checkpoint and turns OpenCompass's results files into the suite contract's result.json (man
// acme-eval-adapters(1), evalsched-suite(5)).
//
//   acme-eval-opencompass run --checkpoint DIR --dataset FAMILY.CONFIG --out DIR [--infer-only]
//                             [--shard I --num-shards N --samples N] [--gpus G] [--model hf|vllm|lmdeploy] [-- ARGS...]
//   acme-eval-opencompass score --dataset FAMILY.CONFIG --out DIR
//
// The dataset FAMILY.CONFIG names opencompass/configs/datasets/FAMILY/CONFIG.py and its list
// FAMILY_datasets (gsm8k.gsm8k_gen: gsm8k_datasets). The adapter writes an OpenCompass config
// (models + datasets; a shard sets the dataset reader's test_range = '[begin:end]', the same
// selection opencompass's SizePartitioner uses) and runs `opencompass CONFIG -w WORK -m infer|all`
// with a fixed work dir, so the metric job can run `-m eval -r <timestamp>` on the predictions the
// GPU trial wrote (opencompass/cli/main.py: --mode, --reuse, --work-dir, --max-num-workers).
#include <cstdio>
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

// FAMILY.CONFIG -> (module, list variable). Both are Python identifiers (and '-' never appears).
std::pair<std::string, std::string> dataset_module(const std::string& dataset) {
    static const std::regex ok(R"(([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*))");
    std::smatch m;
    if (!std::regex_match(dataset, m, ok))
        throw AdapterError(fmt::format("dataset {} is not FAMILY.CONFIG (e.g. gsm8k.gsm8k_gen for opencompass/configs/datasets/gsm8k/gsm8k_gen.py): "
                                       "name the dataset so in the suite",
                                       dataset));
    return {fmt::format("opencompass.configs.datasets.{}.{}", m[1].str(), m[2].str()), m[1].str() + "_datasets"};
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

// Every subset's scores and sample counts of one run directory.
std::vector<opencompass::Subset> read_run(const std::string& run_dir) {
    std::vector<opencompass::Subset> out;
    const std::string results = fmt::format("{}/results/{}", run_dir, kModelAbbr), preds = fmt::format("{}/predictions/{}", run_dir, kModelAbbr);
    for (const auto& f : find_files(results, "*.json")) {
        opencompass::Subset s;
        s.abbr = fs::path(f).stem().string();
        s.scores = opencompass::parse_result(read_file(f, kMaxFile), f);
        // <abbr>.json, or the size partitioner's pieces <abbr>_0.json, <abbr>_1.json, ...
        for (const auto& p : find_files(preds, s.abbr + ".json")) s.samples += opencompass::count_predictions(read_file(p, kMaxFile), p);
        for (const auto& p : find_files(preds, s.abbr + "_[0-9]*.json"))
            if (std::regex_match(fs::path(p).stem().string().substr(s.abbr.size()), std::regex("_[0-9]+")))
                s.samples += opencompass::count_predictions(read_file(p, kMaxFile), p);
        out.push_back(std::move(s));
    }
    if (out.empty()) throw AdapterError(fmt::format("OpenCompass wrote no results under {}: see its output above", results));
    return out;
}

int run(const RunOptions& o) {
    Range range{0, o.samples};
    if (o.num_shards > 1) {
        if (o.samples <= 0)
            throw AdapterError(fmt::format("shard {} of {} of {} needs the dataset's size: pass --samples {{samples}} and set samples = N for it",
                                           o.shard, o.num_shards, o.dataset));
        range = shard_range(o.samples, o.shard, o.num_shards);
    }
    fs::create_directories(o.out);
    const std::string config = o.out + "/evalsched_opencompass.py";
    std::ofstream(config) << config_text(o, range);
    if (o.num_shards > 1)
        std::ofstream(o.out + "/evalsched-shard.json")
            << json{{"dataset", o.dataset}, {"shard", o.shard}, {"num_shards", o.num_shards}, {"begin", range.begin}, {"end", range.end}, {"samples", o.samples}}.dump()
            << "\n";
    std::vector<std::string> argv{o.opencompass, config, "-w", o.out + "/opencompass", "-m", o.infer_only ? "infer" : "all", "--max-num-workers", "1"};
    argv.insert(argv.end(), o.extra.begin(), o.extra.end());
    std::fprintf(stderr, "acme-eval-opencompass: running %s\n", fmt::format("{}", fmt::join(argv, " ")).c_str());
    if (const int rc = run_harness(argv); rc != 0) return rc;
    if (o.infer_only) {
        // The metric job scores; the predictions must be there for it.
        const std::string ts = opencompass::newest_run(o.out + "/opencompass");
        if (find_files(fmt::format("{}/predictions/{}", ts, kModelAbbr), "*.json").empty())
            throw AdapterError(fmt::format("OpenCompass wrote no predictions under {}/predictions/{}", ts, kModelAbbr));
        return 0;
    }
    Result r = opencompass::combine({read_run(opencompass::newest_run(o.out + "/opencompass"))});
    r.sources = {opencompass::newest_run(o.out + "/opencompass")};
    write_result(o.out, r);
    return 0;
}

// The metric job: `-m eval -r <timestamp>` in every part's work dir (CPU: the evaluators), then
// every part's subsets into one result.json.
int score(const std::string& dataset, const std::string& out, const std::string& prog, bool eval) {
    std::vector<std::string> parts;
    for (const auto& d : subdirs(out))
        if (fs::path(d).filename().string().starts_with("shard-")) parts.push_back(d);
    if (parts.empty()) parts.push_back(out);
    std::vector<std::vector<opencompass::Subset>> runs;
    std::vector<std::pair<long, long>> ranges;
    long total = -1;
    Result sources;
    for (const auto& part : parts) {
        const std::string run_dir = opencompass::newest_run(part + "/opencompass");
        if (eval) {
            std::vector<std::string> argv{prog, part + "/evalsched_opencompass.py", "-w", part + "/opencompass", "-m", "eval", "-r",
                                          fs::path(run_dir).filename().string(), "--max-num-workers", "1"};
            if (const int rc = run_harness(argv); rc != 0) return rc;
        }
        runs.push_back(read_run(run_dir));
        sources.sources.push_back(run_dir);
        if (parts.size() > 1) {
            const std::string f = part + "/evalsched-shard.json";
            const json s = json::parse(read_file(f, 4096), nullptr, false);
            if (s.is_discarded() || !s.is_object() || !s["begin"].is_number_integer() || !s["end"].is_number_integer() || !s["samples"].is_number_integer())
                throw AdapterError(fmt::format("{} is not the adapter's shard record: rerun the trial", f));
            ranges.emplace_back(s["begin"].get<long>(), s["end"].get<long>());
            total = s["samples"].get<long>();
        }
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
    run_cmd->add_option("--dataset", o.dataset, "FAMILY.CONFIG, e.g. gsm8k.gsm8k_gen ({dataset})")->required();
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
    score_cmd->add_option("--dataset", dataset, "FAMILY.CONFIG ({dataset})")->required();
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
