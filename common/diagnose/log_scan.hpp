// Finds where the log rules match in a log tail. All patterns run at once as one RE2::Set
// (one linear pass says which rules match at all); only those rules are then searched for
// their lines. This is what keeps a 256 KiB tail within a few milliseconds.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>
#include <re2/set.h>

#include "common/diagnose/rules.hpp"

namespace acme::diagnose {

// The log split at '\n'; lines are numbered from 1.
class Lines {
public:
    explicit Lines(std::string_view text);
    std::size_t count() const noexcept { return starts_.size(); }
    std::size_t line_of(std::size_t offset) const noexcept;  // 1-based
    std::string_view line(std::size_t number) const noexcept;
    // From the start of line `first` to the end of line `last` (both clamped).
    std::string_view span(std::size_t first, std::size_t last) const noexcept;
    std::size_t end_of(std::size_t number) const noexcept;  // offset just past the line's '\n'

private:
    std::string_view text_;
    std::vector<std::size_t> starts_;
};

struct LogHit {
    std::size_t rule = 0;    // index into RuleSet::log
    std::size_t line = 0;    // 1-based
    std::size_t column = 0;  // byte offset of the match within the line
};

class LogScanner {
public:
    // Compiles every log rule; throws RuleError if the set as a whole cannot be built.
    explicit LogScanner(std::span<const LogRule> rules);
    LogScanner(const LogScanner&) = delete;
    LogScanner& operator=(const LogScanner&) = delete;
    ~LogScanner();

    // Up to `per_rule` accepted hits for each rule, each rule's in line order.
    std::vector<LogHit> scan(std::string_view text, const Lines& lines, std::size_t per_rule = 8) const;

private:
    struct Compiled {
        std::unique_ptr<RE2> pattern;
        std::unique_ptr<RE2> unless;
        std::unique_ptr<RE2> near;
        int within = 0;
    };
    std::vector<Compiled> compiled_;
    std::unique_ptr<RE2::Set> set_;
};

struct ErrorLine {
    std::size_t line = 0;    // 1-based
    std::size_t column = 0;  // byte offset of the error word within the line
};

// The last `limit` lines that look like errors, as a person skimming the tail would pick them:
// what an unknown diagnosis shows and what history compares. Independent of the rules.
std::vector<ErrorLine> error_lines(std::string_view text, const Lines& lines, std::size_t limit);

}  // namespace acme::diagnose
