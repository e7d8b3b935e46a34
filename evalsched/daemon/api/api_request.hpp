// The API's requests: the arguments a route's path carries (the table of routes is
// routes/table.cpp), and the JSON body of a submission,
// checked down to every field before anything is stored. Pure (no sockets, no Slurm), so the
// fuzz target runs the same code the daemon does. Every refusal is one line naming the field
// and what to send instead; the daemon answers it with 400.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "evalsched/core/suite.hpp"

namespace acme::evalsched {

class RequestError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The arguments a route's path carries: {id} (an evaluation or follow id) or {name} (a run,
// an evaluation id, a dataset).
struct PathArgs {
    std::int64_t id = 0;
    std::string arg;
};

// Matches `path` (no query string) against one route's pattern: literal segments, "{id}" (a
// positive integer) and "{name}" ([A-Za-z0-9._-], or empty). A placeholder that ends the pattern
// takes the rest of the path, slashes included, so a bad argument gets its own 400 rather than
// a 404. nullopt: not this pattern's shape. RequestError: this shape, a bad argument; its text
// is `bad_argument` with "{}" standing for the argument as printable() quotes it.
std::optional<PathArgs> match_path(std::string_view pattern, std::string_view path, std::string_view bad_argument);

struct SubmitRequest {
    std::string checkpoint_path;   // absolute, as the user sees it on shared storage
    std::string name;              // the training run ("run7"); default: the parent directory's name
    std::string checkpoint;        // its label ("step-12000"); default: the path's last component
    std::string suite_file;        // for messages
    Suite suite;                   // parsed from the body's suite text
    std::string suite_text;        // as sent: stored, so pilots can serve and re-shard (v13)
    bool served = false;           // set by the route: mode = pilots and the suite serves
    int priority = 0;
    double params_b = 0;           // 0: estimated from checkpoint_bytes (bf16)
    double checkpoint_bytes = 0;
    // The submitter's environment ("NAME=value", evalsched submit's capture), carried variables
    // only; empty from a client that sends none: trials then get a minimal PATH.
    std::vector<std::string> environment;
};

// Throws RequestError (bad JSON, a missing or mistyped field) or SuiteError (the suite text).
SubmitRequest parse_submit(std::string_view body);

// Run and checkpoint names go into paths and Slurm job names: [A-Za-z0-9._-], 1-64 chars, not
// starting with '.'.
bool valid_name(std::string_view name);

// A client's text as one of our messages may quote it: control characters (C0, DEL and C1)
// written \xNN, at most `max` bytes of it, then how long it really was. A
// message stays one bounded line whatever the request held (issue 16).
std::string printable(std::string_view text, std::size_t max = 80);

}  // namespace acme::evalsched
