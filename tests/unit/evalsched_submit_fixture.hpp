// A test's evaluation in a fresh evalsched store: the suite text submitted by alice (uid 1001)
// for /ckpt/run7/step-100 at t=1000, through the API's parser and the daemon's create path,
// so the rows are what a real submission writes.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "evalsched/daemon/state.hpp"

namespace acme::evalsched::test {

inline std::int64_t submit_suite(acme::store::Database& db, const std::string& suite) {
    const auto req = parse_submit(nlohmann::json{{"checkpoint", "/ckpt/run7/step-100"}, {"suite", suite}}.dump());
    return create_evaluation(
        db, req, Caller{1001, 1001, "alice", false}, "/results",
        [&](const std::string& out) { return make_trials(req.suite, Checkpoint{"run7/step-100", "\"$S\"", out, ModelSpec{}}, PriorBook{}); },
        1000);
}

}  // namespace acme::evalsched::test
