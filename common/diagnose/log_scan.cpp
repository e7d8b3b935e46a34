#include "common/diagnose/log_scan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/diagnose/pattern.hpp"
#include "common/util/re2_text.hpp"

namespace acme::diagnose {

Lines::Lines(std::string_view text) : text_(text) {
    starts_.reserve(text.size() / 64 + 1);
    starts_.push_back(0);
    for (std::size_t pos = text.find('\n'); pos != std::string_view::npos; pos = text.find('\n', pos + 1))
        if (pos + 1 < text.size()) starts_.push_back(pos + 1);
}

std::size_t Lines::line_of(std::size_t offset) const noexcept {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    return static_cast<std::size_t>(it - starts_.begin());
}

std::size_t Lines::end_of(std::size_t number) const noexcept {
    return number < starts_.size() ? starts_[number] : text_.size();
}

std::string_view Lines::line(std::size_t number) const noexcept {
    if (number == 0 || number > starts_.size()) return {};
    std::size_t start = starts_[number - 1];
    std::size_t end = end_of(number);
    if (end > start && text_[end - 1] == '\n') --end;
    return text_.substr(start, end - start);
}

std::string_view Lines::span(std::size_t first, std::size_t last) const noexcept {
    first = std::clamp<std::size_t>(first, 1, starts_.size());
    last = std::clamp<std::size_t>(last, first, starts_.size());
    std::size_t start = starts_[first - 1];
    return text_.substr(start, end_of(last) - start);
}

namespace {

std::unique_ptr<RE2> compile_or_throw(const LogRule& rule, const std::string& pattern) {
    std::string error;
    auto re = compile_pattern(pattern, error);
    if (!re) throw RuleError(fmt::format("{}: rule \"{}\": bad pattern ({}): fix the regular expression",
                                         rule.origin, rule.id, error));
    return re;
}

// Lines a person would read first in a failed job's tail. Case-insensitive words, not rules:
// this only picks what to show and compare when no rule decided.
constexpr std::string_view kErrorLine =
    R"((?i)error|exception|traceback|fail|fatal|abort|killed|segmentation fault|core dumped|denied|refused|timed out|not found)";

}  // namespace

LogScanner::LogScanner(std::span<const LogRule> rules)
    : set_(std::make_unique<RE2::Set>(pattern_options(), RE2::UNANCHORED)) {
    compiled_.reserve(rules.size());
    for (const auto& rule : rules) {
        Compiled c;
        c.pattern = compile_or_throw(rule, rule.pattern);
        if (!rule.unless.empty()) c.unless = compile_or_throw(rule, rule.unless);
        if (!rule.near.empty()) c.near = compile_or_throw(rule, rule.near);
        c.within = rule.within;
        compiled_.push_back(std::move(c));
        std::string error;
        if (set_->Add(pattern_source(rule.pattern), &error) < 0)
            throw RuleError(fmt::format("{}: rule \"{}\": bad pattern ({}): fix the regular expression",
                                        rule.origin, rule.id, error));
    }
    if (!rules.empty() && !set_->Compile())
        throw RuleError("rules: the patterns together are too large to compile: remove or simplify rules");
}

LogScanner::~LogScanner() = default;

std::vector<LogHit> LogScanner::scan(std::string_view text, const Lines& lines, std::size_t per_rule) const {
    std::vector<LogHit> hits;
    if (compiled_.empty() || text.empty()) return hits;

    std::vector<int> candidates;
    RE2::Set::ErrorInfo info{};
    if (!set_->Match(util::re2_text(text), &candidates, &info) && info.kind != RE2::Set::kNoError) {
        // The set's DFA ran out of memory on this text: search every rule on its own instead.
        candidates.resize(compiled_.size());
        for (std::size_t i = 0; i < compiled_.size(); ++i) candidates[i] = static_cast<int>(i);
    }
    std::sort(candidates.begin(), candidates.end());

    for (int index : candidates) {
        const Compiled& rule = compiled_[static_cast<std::size_t>(index)];
        std::size_t accepted = 0;
        std::size_t pos = 0;
        re2::StringPiece match;
        while (accepted < per_rule && pos < text.size() &&
               rule.pattern->Match(util::re2_text(text), pos, text.size(), RE2::UNANCHORED, &match, 1)) {
            std::size_t offset = static_cast<std::size_t>(match.data() - text.data());
            std::size_t number = lines.line_of(offset);
            std::string_view line = lines.line(number);
            pos = lines.end_of(number);
            if (rule.unless && RE2::PartialMatch(util::re2_text(line), *rule.unless)) continue;
            if (rule.near) {
                std::size_t w = static_cast<std::size_t>(rule.within);
                std::string_view around = lines.span(number > w ? number - w : 1, number + w);
                if (!RE2::PartialMatch(util::re2_text(around), *rule.near)) continue;
            }
            hits.push_back({static_cast<std::size_t>(index), number,
                            offset - static_cast<std::size_t>(line.data() - text.data())});
            ++accepted;
        }
    }
    return hits;
}

std::vector<ErrorLine> error_lines(std::string_view text, const Lines& lines, std::size_t limit) {
    static const RE2 error_line(pattern_source(kErrorLine), pattern_options());
    // Walk backwards from the end: only the last few matter and the tail may be long.
    std::vector<ErrorLine> out;
    if (text.empty()) return out;
    // A log with no error words at all stops after this many lines instead of reading all of it.
    constexpr std::size_t kLookBack = 20000;
    std::size_t stop = lines.count() > kLookBack ? lines.count() - kLookBack : 0;
    for (std::size_t number = lines.count(); number > stop && out.size() < limit; --number) {
        std::string_view line = lines.line(number);
        re2::StringPiece word;
        if (error_line.Match(util::re2_text(line), 0, line.size(), RE2::UNANCHORED, &word, 1))
            out.push_back({number, static_cast<std::size_t>(word.data() - line.data())});
    }
    std::reverse(out.begin(), out.end());
    return out;
}

}  // namespace acme::diagnose
