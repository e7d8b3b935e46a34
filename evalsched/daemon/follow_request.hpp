// evalsched follow's two inputs from outside the daemon, parsed without touching anything
// (pure, so the fuzz target runs this code): the POST /v1/follows body a client sends, and the
// lines evalsched-ckpt-scan writes (it runs as the follow's user, in the user's directory).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "evalsched/core/follow_plan.hpp"
#include "evalsched/daemon/api/api_request.hpp"

namespace acme::evalsched {

// POST /v1/follows: {"dir", "suite", "suite_file", "name", "priority", "params_b", "every",
// "keep_up", "environment"}. The fields submit knows are checked by parse_submit itself.
struct FollowRequest {
    std::string dir;         // absolute, no trailing '/'
    SubmitRequest submit;    // name (default: dir's last component), suite, priority, params_b, environment
    std::string suite_text;
    FollowOptions options;
};
// Throws RequestError or SuiteError, one line naming the field.
FollowRequest parse_follow(std::string_view body);

// One line of evalsched-ckpt-scan: STEP TAB RULE TAB WEIGHT_BYTES TAB PARAMETERS TAB PATH.
struct ScannedCheckpoint {
    FollowedCheckpoint checkpoint;
    double weight_bytes = 0;
    double parameters = 0;  // 0: unknown
};
// Lines that do not parse, whose path is not directly under dir, or repeat a path already
// listed are left out; the order is the helper's (by step).
std::vector<ScannedCheckpoint> parse_scan_output(std::string_view text, const std::string& dir);

}  // namespace acme::evalsched
