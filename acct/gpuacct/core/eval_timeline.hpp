// Evaluation trial attempts from evalschedd's state file, for the report's timeline: which
// trial ran when, on which node, how it ended.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace acme::acct {

struct TrialAttempt {
    std::string evaluation;  // "run7/step-12000"
    std::string trial;       // the trial's key
    std::string node, state;
    std::optional<long long> job_id;
    int gpus = 0;
    double submitted = 0, ended = 0;
};

// Read-only. Throws std::runtime_error (one line) when the file is not an evalschedd store.
std::vector<TrialAttempt> read_trial_attempts(const std::string& path);

}  // namespace acme::acct
