// acme-eval-lmeval: runs one dataset (or one shard of it, or a bundle of datasets) through
// lm-evaluation-harness and turns its output files into the suite contract's result.json
// (man acme-eval-adapters(1), evalsched-suite(5)).
//
//   acme-eval-lmeval run --checkpoint DIR --tasks T[,T...] --out DIR [--model hf|vllm|local-completions]
//                        [--shard I --num-shards N --samples N] [--gpus G] [-- LM_EVAL_ARGS...]
//   acme-eval-lmeval score --task T --out DIR
//   acme-eval-lmeval aggregate --group G --leaves A,B --leaf-samples N,M --aggregate weight_by_size|mean --out DIR
//
// The flags it passes are lm_eval's own (lm_eval/_cli/run.py; lm_eval/__main__.py before the
// subcommands): --model, --model_args, --tasks, --batch_size, --output_path, --log_samples,
// --samples (a JSON file {task: [indices]}, the harness's own sample selection, lm-eval >= 0.4.9),
// --num_fewshot, --device. The files it reads are listed in lmeval_output.hpp. Before running it
// asks lm_eval's own Python for the installed version and refuses one older than 0.4.9.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (fmt 11 keeps it here only)
#include <nlohmann/json.hpp>

#include "common/util/version.hpp"
#include "evalsched/adapters/harness_files.hpp"
#include "evalsched/adapters/lmeval_output.hpp"

namespace {

using namespace acme::adapters;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::size_t kMaxResults = 64u << 20;   // results_*.json: configs of every subtask
constexpr std::size_t kMaxSamples = 2048u << 20;  // samples_*.jsonl: every prompt and answer

struct RunOptions {
    std::string checkpoint, tasks, out, model = "hf", base_url, served_model, batch_size = "auto", model_args, lm_eval = "lm_eval";
    int shard = 0, num_shards = 1, gpus = 1, num_fewshot = -1;
    long samples = 0;
    std::vector<std::string> extra;
};

std::string model_args(const RunOptions& o) {
    std::string a;
    if (o.model == "hf") {
        a = fmt::format("pretrained={},dtype=auto", o.checkpoint);
        if (o.gpus > 1) a += ",parallelize=True";
    } else if (o.model == "vllm") {
        a = fmt::format("pretrained={},dtype=auto,tensor_parallel_size={},gpu_memory_utilization=0.85", o.checkpoint, o.gpus);
    } else {  // local-completions: the served model answers, the staged checkpoint tokenizes
        if (o.base_url.empty()) throw AdapterError("--model local-completions needs --base-url {base_url} (the server, http://HOST:PORT)");
        a = fmt::format("model={},base_url={},tokenizer={},num_concurrent=8,max_retries=3", o.served_model.empty() ? o.checkpoint : o.served_model,
                        lmeval::completions_url(o.base_url), o.checkpoint);
    }
    if (!o.model_args.empty()) a += "," + o.model_args;
    return a;
}

// The newest results_<date_id>.json under dir (date_ids sort by time).
std::string newest_results(const std::string& dir) {
    std::string best;
    for (const auto& f : find_files(dir, "results_*.json"))
        if (best.empty() || lmeval::date_id_of(f) > lmeval::date_id_of(best)) best = f;
    if (best.empty()) throw AdapterError(fmt::format("lm_eval wrote no results_*.json under {}: see its output above", dir));
    return best;
}

// samples_<leaf>_<date_id>.jsonl next to the results file.
std::string samples_file(const std::string& results_file, const std::string& leaf) {
    const std::string dir = fs::path(results_file).parent_path().string();
    return fmt::format("{}/samples_{}_{}.jsonl", dir, leaf, lmeval::date_id_of(results_file));
}

long effective_samples(const json& results, const std::vector<std::string>& leaves) {
    long n = 0;
    for (const auto& l : leaves) n += lmeval::effective_samples(results, l).value_or(0);
    return n;
}

// The first line of `path` when it names an interpreter ("#!/venv/bin/python3", "#!/usr/bin/env
// python3"), split at blanks; python3 otherwise (a wrapper: the environment's own Python).
std::vector<std::string> interpreter_of(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    if (!line.starts_with("#!")) return {"python3"};
    std::istringstream words(line.substr(2));
    std::vector<std::string> out;
    for (std::string w; words >> w;) out.push_back(w);
    return out.empty() ? std::vector<std::string>{"python3"} : out;
}

// The first line argv prints on stdout (its stderr goes to the trial's log); empty when it
// cannot run or fails.
std::string first_line_of(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) return {};
    const pid_t pid = fork();
    if (pid < 0) return {};
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        execvp(args[0], args.data());
        _exit(127);
    }
    ::close(fd[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        if (out.size() < 4096) out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
    return out.substr(0, out.find('\n'));
}

// lm_eval has no --version flag in any release: its version is the installed distribution's,
// which lm_eval/__init__.py itself reads with importlib.metadata (since 0.4.12; pip records it
// for every release). Asked of the interpreter lm_eval's script runs under. A harness that is
// not found is left to run_harness, which says so.
void check_harness_version(const std::string& lm_eval) {
    std::string path = lm_eval;
    if (lm_eval.find('/') == std::string::npos) {
        path.clear();
        const char* env = std::getenv("PATH");
        for (const auto& dir : split_list(env ? env : "", ':'))
            if (access((dir + "/" + lm_eval).c_str(), X_OK) == 0) {
                path = dir + "/" + lm_eval;
                break;
            }
    }
    if (path.empty() || access(path.c_str(), X_OK) != 0) return;
    std::vector<std::string> argv = interpreter_of(path);
    argv.insert(argv.end(), {"-c", "import importlib.metadata as m\ntry:\n print(m.version('lm_eval'))\nexcept Exception:\n pass"});
    lmeval::check_version(first_line_of(argv), path);
}

Result result_from(const std::string& file, const json& results, const std::string& task) {
    Result r;
    r.harness = "lm-evaluation-harness";
    r.scores = lmeval::task_scores(results, task, file);
    r.details = lmeval::task_details(results, task);
    if (const long n = effective_samples(results, lmeval::leaves(results, task))) r.samples = n;
    r.sources = {file};
    return r;
}

int run(const RunOptions& o) {
    const std::vector<std::string> tasks = split_list(o.tasks);
    if (tasks.empty()) throw AdapterError("--tasks is empty: give one lm-eval task, or several comma-separated");
    if (o.num_shards > 1 && tasks.size() > 1) throw AdapterError("a bundle of tasks cannot be sharded: give one task with --shard");
    check_harness_version(o.lm_eval);
    const bool bundle = tasks.size() > 1;
    const std::string output_path = bundle ? fmt::format("{}/.lm_eval-{}", o.out, tasks.front()) : o.out;
    std::vector<std::string> argv{o.lm_eval, "--model", o.model, "--model_args", model_args(o), "--tasks", o.tasks, "--batch_size", o.batch_size,
                                  "--output_path", output_path, "--log_samples"};
    if (o.model == "hf" && o.gpus == 1) argv.insert(argv.end(), {"--device", "cuda:0"});
    if (o.num_fewshot >= 0) argv.insert(argv.end(), {"--num_fewshot", std::to_string(o.num_fewshot)});
    Range range{0, o.samples};
    if (o.num_shards > 1) {
        if (o.samples <= 0)
            throw AdapterError(fmt::format("shard {} of {} of {} needs the dataset's size: pass --samples {{samples}} and set samples = N "
                                           "for the dataset in the suite",
                                           o.shard, o.num_shards, o.tasks));
        range = shard_range(o.samples, o.shard, o.num_shards);
        // A file, not the JSON itself: a shard of 50,000 indices is larger than one argument may
        // be (MAX_ARG_STRLEN); lm_eval reads --samples from a file when it names one.
        json idx = json::array();
        for (long i = range.begin; i < range.end; ++i) idx.push_back(i);
        fs::create_directories(o.out);
        std::ofstream(o.out + "/evalsched-samples.json") << json{{tasks.front(), idx}}.dump() << "\n";
        argv.insert(argv.end(), {"--samples", o.out + "/evalsched-samples.json"});
    }
    argv.insert(argv.end(), o.extra.begin(), o.extra.end());
    fs::create_directories(output_path);
    if (o.num_shards > 1) {
        std::ofstream(o.out + "/evalsched-shard.json")
            << json{{"task", tasks.front()}, {"shard", o.shard}, {"num_shards", o.num_shards}, {"begin", range.begin}, {"end", range.end}, {"samples", o.samples}}.dump()
            << "\n";
    }
    std::fprintf(stderr, "acme-eval-lmeval: running %s\n", fmt::format("{}", fmt::join(argv, " ")).c_str());
    if (const int rc = run_harness(argv); rc != 0) return rc;

    const std::string file = newest_results(output_path);
    const json results = lmeval::parse_results(read_file(file, kMaxResults), file);
    if (!bundle) {
        write_result(o.out, result_from(file, results, tasks.front()));
        return 0;
    }
    // A bundle: each task gets its own directory, as evalsched expects ({output}/<task>), with
    // its scores and the harness's files it came from (its metric job may read them again).
    for (const auto& t : tasks) {
        const std::string dir = fmt::format("{}/{}/{}", o.out, t, fs::path(file).parent_path().filename().string());
        fs::create_directories(dir);
        fs::copy_file(file, dir + "/" + fs::path(file).filename().string(), fs::copy_options::overwrite_existing);
        for (const auto& leaf : lmeval::leaves(results, t)) {
            const std::string s = samples_file(file, leaf);
            if (fs::exists(s)) fs::copy_file(s, dir + "/" + fs::path(s).filename().string(), fs::copy_options::overwrite_existing);
        }
        write_result(fmt::format("{}/{}", o.out, t), result_from(file, results, t));
    }
    return 0;
}

// A task's scores from its output directory: every shard's samples (or the single run's results).
Result task_result(const std::string& task, const std::string& out) {
    std::vector<std::string> parts;
    for (const auto& d : subdirs(out))
        if (fs::path(d).filename().string().starts_with("shard-")) parts.push_back(d);
    if (parts.empty()) {
        const std::string file = newest_results(out);
        const json results = lmeval::parse_results(read_file(file, kMaxResults), file);
        return result_from(file, results, task);
    }
    lmeval::Aggregate agg;
    std::vector<std::pair<long, long>> ranges;
    long total = -1;
    Result r;
    r.harness = "lm-evaluation-harness";
    std::set<std::string> approximate;
    for (const auto& part : parts) {
        const std::string shard_file = part + "/evalsched-shard.json";
        const lmeval::ShardRecord s = lmeval::parse_shard_record(read_file(shard_file, 4096), shard_file);
        ranges.emplace_back(s.begin, s.end);
        if (total >= 0 && total != s.samples) throw AdapterError(fmt::format("{} disagrees on the dataset's size", shard_file));
        total = s.samples;
        const std::string file = newest_results(part);
        const json results = lmeval::parse_results(read_file(file, kMaxResults), file);
        for (const auto& leaf : lmeval::leaves(results, task)) {
            const std::string sf = samples_file(file, leaf);
            lmeval::add_samples(agg, read_file(sf, kMaxSamples), leaf, lmeval::aggregations(results, leaf), sf);
            r.sources.push_back(sf);
            // The first shard draws the whole run's exemplars; any later one does not.
            if (s.begin > 0)
                if (std::string why = lmeval::fewshot_dependence(results, leaf); !why.empty()) approximate.insert(why);
        }
    }
    // Coverage: the shards' ranges (of mixed N after re-sharding) tile the dataset exactly once.
    std::sort(ranges.begin(), ranges.end());
    long at = 0;
    for (const auto& [b, e] : ranges) {
        if (b != at) throw AdapterError(fmt::format("the shards of {} under {} do not cover samples {} to {}: a shard is missing or overlaps", task, out, at, b));
        at = e;
    }
    if (at != total) throw AdapterError(fmt::format("the shards of {} under {} cover {} of {} samples", task, out, at, total));
    for (const auto& [name, mean] : agg.metrics) r.scores[name] = mean.value();
    r.unsupported.assign(agg.unsupported.begin(), agg.unsupported.end());
    for (const auto& u : r.unsupported) std::fprintf(stderr, "acme-eval-lmeval: %s: not aggregated across shards\n", u.c_str());
    r.approximate.assign(approximate.begin(), approximate.end());
    for (const auto& a : r.approximate)
        std::fprintf(stderr, "acme-eval-lmeval: %s: the recombined scores are not the unsharded run's (set shard = false for them)\n", a.c_str());
    if (r.scores.empty()) throw AdapterError(fmt::format("no per-sample metric of {} can be aggregated across shards: set shard = false for it", task));
    r.samples = agg.samples();
    return r;
}

// The metric job: one task's result.json.
int score(const std::string& task, const std::string& out) {
    write_result(out, task_result(task, out));
    return 0;
}

// Suite groups: the group's metric job. Each leaf is scored from its own outputs, the
// directories beside the group's ({output} is <root>/<group>, a leaf's <root>/<leaf>), as its
// own metric job scores it, and the leaves' scores combine by the group's rule. A leaf's weight
// is the number of documents lm_eval scored (n-samples), else the suite's count.
struct GroupOptions {
    std::string group, leaves, leaf_samples, aggregate = "weight_by_size", out;
};

int aggregate(const GroupOptions& o) {
    const std::vector<std::string> names = split_list(o.leaves);
    const std::vector<std::string> counts = split_list(o.leaf_samples);
    if (names.empty()) throw AdapterError("--leaves is empty: give the group's leaf tasks, comma-separated ({leaves})");
    if (!o.leaf_samples.empty() && counts.size() != names.size())
        throw AdapterError(fmt::format("--leaf-samples gives {} counts for {} leaves: pass {{leaf_samples}} as the suite renders it", counts.size(), names.size()));
    const std::string root = fs::path(o.out).parent_path().string();
    std::vector<LeafScores> leaves;
    Result g;
    g.harness = "lm-evaluation-harness";
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string dir = fmt::format("{}/{}", root, names[i]);
        if (!fs::is_directory(dir)) throw AdapterError(fmt::format("leaf {} of {} has no output in {}: did its trial run?", names[i], o.group, dir));
        const Result r = task_result(names[i], dir);
        long n = r.samples.value_or(0);
        if (n <= 0 && !counts.empty()) {
            try {
                n = std::stol(counts[i]);
            } catch (const std::exception&) {
                throw AdapterError(fmt::format("--leaf-samples item '{}' is not a count", counts[i]));
            }
        }
        leaves.push_back({names[i], r.scores, n});
        for (const auto& u : r.unsupported) g.unsupported.push_back(fmt::format("{}: {}", names[i], u));
        g.approximate.insert(g.approximate.end(), r.approximate.begin(), r.approximate.end());
        g.sources.insert(g.sources.end(), r.sources.begin(), r.sources.end());
    }
    g.scores = group_scores(leaves, o.aggregate == "weight_by_size", &g.unsupported);
    long total = 0;
    for (const auto& l : leaves) total += l.samples;
    if (total > 0) g.samples = total;
    write_result(o.out, g);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"acme-eval-lmeval: one dataset, shard or bundle through lm-evaluation-harness, scored into evalsched's result.json"};
    app.require_subcommand(1);
    app.set_version_flag("--version", acme::version_line("acme-eval-lmeval"), "print the version and exit");
    app.failure_message([](const CLI::App*, const CLI::Error& e) { return std::string("acme-eval-lmeval: ") + e.what() + ": see --help\n"; });
    RunOptions o;
    auto* run_cmd = app.add_subcommand("run", "run lm_eval on one task (or a shard, or a bundle) and write result.json");
    run_cmd->add_option("--checkpoint", o.checkpoint, "the staged checkpoint ({checkpoint})")->required();
    run_cmd->add_option("--tasks,--task", o.tasks, "lm-eval task (or group); several comma-separated for a bundle")->required();
    run_cmd->add_option("--out", o.out, "output directory ({output})")->required();
    run_cmd->add_option("--model", o.model, "hf, vllm or local-completions")->check(CLI::IsMember({"hf", "vllm", "local-completions"}));
    run_cmd->add_option("--base-url", o.base_url, "local-completions: the server ({base_url}, http://HOST:PORT; /v1/completions is appended) or its completions URL");
    run_cmd->add_option("--served-model", o.served_model, "local-completions: the model name the server knows (default: the checkpoint path)");
    run_cmd->add_option("--shard", o.shard, "shard index ({shard})");
    run_cmd->add_option("--num-shards", o.num_shards, "number of shards ({num_shards})")->check(CLI::Range(1, 100000));
    run_cmd->add_option("--samples", o.samples, "the dataset's size ({samples}); needed to shard")->check(CLI::Range(0L, 100000000L));
    run_cmd->add_option("--gpus", o.gpus, "GPUs of the trial ({gpus})")->check(CLI::Range(1, 64));
    run_cmd->add_option("--batch-size", o.batch_size, "lm_eval --batch_size (default auto)");
    run_cmd->add_option("--num-fewshot", o.num_fewshot, "lm_eval --num_fewshot");
    run_cmd->add_option("--model-args", o.model_args, "more lm_eval --model_args, appended (k=v,...)");
    run_cmd->add_option("--lm-eval", o.lm_eval, "the harness command (default lm_eval, from PATH)");
    run_cmd->add_option("extra", o.extra, "after --: passed to lm_eval as they are");
    std::string task, out;
    auto* score_cmd = app.add_subcommand("score", "the metric job: every shard's per-sample metrics into one result.json");
    score_cmd->add_option("--task", task, "the lm-eval task ({dataset})")->required();
    score_cmd->add_option("--out", out, "the dataset's output directory ({output})")->required();
    GroupOptions go;
    auto* group_cmd = app.add_subcommand("aggregate", "a suite group's metric job: its leaves' scores combined into the group's result.json");
    group_cmd->add_option("--group", go.group, "the group ({dataset})")->required();
    group_cmd->add_option("--leaves", go.leaves, "its leaf tasks, comma-separated ({leaves})")->required();
    group_cmd->add_option("--leaf-samples", go.leaf_samples, "their sample counts, 0 where unknown ({leaf_samples})");
    group_cmd->add_option("--aggregate", go.aggregate, "weight_by_size or mean ({aggregate})")->check(CLI::IsMember({"weight_by_size", "mean"}));
    group_cmd->add_option("--out", go.out, "the group's output directory ({output}); the leaves' are beside it")->required();
    CLI11_PARSE(app, argc, argv);
    try {
        if (*run_cmd) return run(o);
        if (*group_cmd) return aggregate(go);
        return score(task, out);
    } catch (const AdapterError& e) {
        std::fprintf(stderr, "acme-eval-lmeval: %s\n", e.what());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "acme-eval-lmeval: %s\n", e.what());
    }
    return 1;
}
