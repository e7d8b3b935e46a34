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

    const Dataset* find(std::string_view name) const;
    // `command` preceded by the suite's env and setup (unchanged when it sets neither).
    std::string wrap(std::string_view command) const;
};

// `file` names the source in messages. Throws SuiteError.
Suite parse_suite(std::string_view text, const std::string& file);
// Reads and parses a file; an unreadable file is a SuiteError at line 0.
Suite load_suite(const std::string& path);

}  // namespace acme::evalsched
