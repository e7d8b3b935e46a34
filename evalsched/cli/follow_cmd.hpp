// evalsched follow and evalsched follows: the request a follow sends (checked here first, as the
// user, so a missing directory or a bad suite fails before the daemon is asked) and the list
// of follows with what each did with every complete checkpoint.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace acme::evalsched {

struct FollowArgs {
    std::string dir, suite_path, name;
    long long every = 0;
    bool keep_up = false;
    int priority = 0;
    double params_b = 0;
};

// The POST /v1/follows body; throws std::runtime_error (or SuiteError) with one line.
nlohmann::json follow_body(const FollowArgs& args);

// "follow 3 started: ..." from the daemon's answer.
std::string follow_started(const nlohmann::json& answer);

// GET /v1/follows as lines: one per follow, then one per checkpoint it decided on.
std::string render_follows(const nlohmann::json& follows);

}  // namespace acme::evalsched
