// `evalsched watch ID`: what it prints after each look at the evaluation.
//  - on a terminal: a block (progress bar and counts, the ETA, what runs where, trouble) redrawn
//    in place, each line cut to the width so the redraw never wraps;
//  - otherwise (a job log, a pipe): only what changed, one timestamped line each: the progress
//    line when its counts, the state or the kind of forecast change (the forecast's clock time
//    moves every scheduling round, so it alone changes nothing), a dataset's new state, trouble
//    when it begins and when it ends;
//  - --json: one JSON object per change ("progress", "dataset", "trouble", "resolved", "end");
//    a failed dataset's event carries "evidence" and "log" where the daemon kept them.
//  A failed dataset shows, on lines of their own and never cut, the line of its log that decided
//  the failure and the log's path (render.hpp failure_lines).
// Pure: the evaluation's JSON and the time in, text out.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace acme::evalsched {

class Watcher {
public:
    enum class Mode { terminal, lines, json };
    Watcher(Mode mode, std::size_t width) : mode_(mode), width_(width) {}
    // What to write now for this look (possibly nothing).
    std::string update(const nlohmann::json& evaluation, double now);
    // What to write when the watch ends (the last newline on a terminal).
    std::string finish() const;

private:
    std::string terminal(const nlohmann::json& e, double now);
    std::string lines(const nlohmann::json& e, double now);
    std::string events(const nlohmann::json& e, double now);

    Mode mode_;
    std::size_t width_;
    std::size_t drawn_ = 0;                          // lines of the block on screen
    std::string last_progress_;
    std::map<std::string, std::string> datasets_;    // dataset -> "state\x1fdetail" last shown
    std::set<std::string> trouble_;                  // trouble lines shown and not yet resolved
    bool started_ = false;
};

// "[########............]": done / total of `width` characters.
std::string progress_bar(long done, long total, int width);

}  // namespace acme::evalsched
