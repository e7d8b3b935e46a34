// Suite files (suites/*.toml, man evalsched-suite(5)): which datasets to score a checkpoint
// on, the command that runs each one, and what it costs. Parsing is strict: a typo in a key
// would otherwise silently drop a setting for every checkpoint of a run, so every problem is
// refused with file:line and what to do, before anything reaches Slurm.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "evalsched/core/cost_model.hpp"

namespace acme::evalsched {

// A refused suite. what() is one line: "<file>:<line>: <problem>: <what to do>".
class SuiteError : public std::runtime_error {
public:
    SuiteError(std::string file, int line, const std::string& message);
    const std::string& file() const noexcept { return file_; }
    int line() const noexcept { return line_; }

private:
    std::string file_;
    int line_;
};

struct Dataset {
    std::string name;
    TaskKind kind = TaskKind::generation;
    std::string command;                        // template, see command_template.hpp
    std::optional<std::string> metric_command;  // CPU job after inference; none: scored in-trial
    int gpus = 1;
    std::optional<long> samples;                // test-split size; unknown if absent
    std::optional<double> prior_s;              // the suite author's run-time estimate, 7B-class
    bool shard = false;                         // may be split into {shard}/{num_shards}
    int line = 0;                               // where [[dataset]] starts, for messages
    // Suite groups (evalsched-suite(5) GROUPS): the group this dataset is a leaf task of, whose
    // settings it inherited; empty for a dataset the suite lists itself.
    std::string group;
};

// Suite groups: how a group's score is made from its leaves' scores, lm-eval's rule for the
// group (aggregate_metric_list in its group yaml): weight_by_size is the mean weighted by each
// leaf's sample count (mmlu, mmlu_pro, bbh, cmmlu, ceval-valid, leaderboard_musr), mean the plain
// mean of the leaves (weight_by_size: false).
enum class GroupAggregate { weight_by_size, mean };
std::string_view to_string(GroupAggregate a);

// A [[dataset]] with `leaves`: an lm-eval group run as its leaf tasks. The leaves stand in the
// suite's datasets in its place (lm_eval --samples selects documents of leaf tasks only, so a
// group cannot be sharded, its leaves can); the group itself is scored by one CPU metric job
// (group_metric_command) after every leaf's trials.
struct Group {
    std::string name;
    TaskKind kind = TaskKind::generation;
    std::vector<std::string> leaves;            // in the suite's order
    std::vector<long> leaf_samples;             // per leaf, 0 where unknown
    GroupAggregate aggregate = GroupAggregate::weight_by_size;
    std::optional<long> samples;                // the leaves' sum, when every leaf's is known
    int line = 0;
};

// The weights, config and tokenizer a harness loads; never optimizer or scheduler state, RNG
// state, training arguments, nor DeepSpeed's global_step*/ (often larger than the weights).
inline const std::vector<std::string> kDefaultStage = {
    "*.json", "*.safetensors", "*.bin", "*.pth", "*.pt", "*.gguf", "*.model", "*.tiktoken", "*.txt", "*.py", "tokenizer*",
    "!optimizer*", "!*/optimizer*", "!scheduler*", "!*/scheduler*", "!rng_state*", "!*/rng_state*", "!training_args*",
    "!global_step*", "!*/global_step*"};

// Serving (issue 18, pilots that serve; evalsched-suite(5)): in mode = pilots, a suite that
// names a serve_command loads the model once per pilot (a vLLM-style server as the pilot's first
// step, on the staged checkpoint) and runs every dataset as client_command against it. In
// mode = trials these keys are ignored: each trial runs its dataset's own command.
struct Serving {
    std::string serve_command;    // template: {checkpoint} {gpus} {port}
    std::string client_command;   // template: command's placeholders and {base_url}
    std::string probe = "/health";  // HTTP GET on the node, 2xx once the model is loaded
    double ready_timeout_s = 600;   // from the server step's start (staging included)
    int line = 0;
};

struct Suite {
    std::string name;
    std::string file;
    // Runs several short datasets after one model load (lm-eval --tasks a,b,c). Without it,
    // evalsched never bundles: each dataset keeps its own command.
    std::optional<std::string> bundle_command;
    std::vector<Dataset> datasets;
    // The environment every trial and metric command of the suite runs in, on top of the one
    // the user submitted from: variables set first (env = {NAME = "value"}), then a shell line
    // (setup = "source /opt/conda/bin/activate lm") whose failure fails the command.
    std::vector<std::pair<std::string, std::string>> env;
    std::string setup;
    // What a trial copies of the checkpoint into node-local memory (stage = [...]): globs on
    // each file's path inside the checkpoint ('*' crosses '/'), '!' before one excludes; a file
    // is copied when an include matches it and no exclude does. Empty: kDefaultStage.
    std::vector<std::string> stage;
    // Suite groups: the groups whose leaves are among `datasets`, and the command that scores a
    // group from its leaves' outputs ({dataset} {output} {leaves} {leaf_samples} {aggregate}).
    std::vector<Group> groups;
    std::optional<std::string> group_metric_command;
    // Serving keys (serve_command, client_command, serve_probe, serve_timeout), parsed by
    // parse_serving in suite.cpp.
    std::optional<Serving> serving;

    const Dataset* find(std::string_view name) const;
    // `command` preceded by the suite's env and setup (unchanged when it sets neither).
    std::string wrap(std::string_view command) const;
};

// The suite a pilot that serves runs (mode = pilots with serving): every dataset's command is
// client_command, its {base_url} the step's "$EVALSCHED_BASE_URL" (the pilot's server,
// known once it runs), and no bundle_command: the model is loaded once per pilot, so bundling
// would only cost parallelism. Unchanged when the suite does not serve.
Suite serving_suite(const Suite& suite);

// `file` names the source in messages. Throws SuiteError.
Suite parse_suite(std::string_view text, const std::string& file);
// Reads and parses a file; an unreadable file is a SuiteError at line 0.
Suite load_suite(const std::string& path);

}  // namespace acme::evalsched
