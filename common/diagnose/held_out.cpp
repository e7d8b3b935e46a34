#include "common/diagnose/held_out.hpp"

#include <algorithm>
#include <cctype>

#include "common/diagnose/log_scan.hpp"

namespace acme::diagnose::held_out {

std::vector<std::string> split_alternatives(std::string_view pattern) {
    std::vector<std::string> out;
    std::string flags;    // top-level flag groups seen so far: they hold for what follows them
    std::string current;  // the alternative being read, from its start
    int depth = 0;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            current += pattern.substr(i, 2);
            ++i;
            continue;
        }
        if (c == '[') {  // a character class: '|' and parentheses inside are literal
            std::size_t j = i + 1;
            if (j < pattern.size() && pattern[j] == '^') ++j;
            if (j < pattern.size() && pattern[j] == ']') ++j;
            while (j < pattern.size() && pattern[j] != ']') {
                if (pattern[j] == '\\') ++j;
                else if (pattern.substr(j, 2) == "[:") {
                    auto close = pattern.find(":]", j + 2);
                    if (close != std::string_view::npos) j = close + 1;
                }
                ++j;
            }
            current += pattern.substr(i, std::min(j, pattern.size() - 1) - i + 1);
            i = j;
            continue;
        }
        if (c == '(') {
            if (depth == 0 && pattern.substr(i, 2) == "(?") {
                auto close = pattern.find(')', i);
                auto group = pattern.substr(i, close == std::string_view::npos ? 0 : close - i + 1);
                if (!group.empty() && group.find(':') == std::string_view::npos &&
                    std::all_of(group.begin() + 2, group.end() - 1, [](char f) { return std::isalpha(static_cast<unsigned char>(f)) || f == '-'; })) {
                    flags += group;
                    current += group;
                    i = close;
                    continue;
                }
            }
            ++depth;
        } else if (c == ')') {
            --depth;
        } else if (c == '|' && depth == 0) {
            out.push_back(std::move(current));
            current = flags;
            continue;
        }
        current += c;
    }
    out.push_back(std::move(current));
    return out;
}

Wordings match(const RuleSet& rules, const std::vector<corpus::Case>& cases) {
    Wordings w;
    for (std::size_t r = 0; r < rules.log.size(); ++r)
        for (std::string& alternative : split_alternatives(rules.log[r].pattern)) {
            LogRule rule = rules.log[r];
            rule.pattern = std::move(alternative);
            w.rules.log.push_back(std::move(rule));
            w.rule_of.push_back(r);
        }
    w.rules.status = rules.status;
    w.rules.gpu_event = rules.gpu_event;
    w.rules.fallback = rules.fallback;
    w.cases_of.resize(w.rules.log.size());
    w.of_case.resize(cases.size());
    LogScanner scanner(w.rules.log);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        Lines lines(cases[i].text);
        for (const LogHit& hit : scanner.scan(cases[i].text, lines, 1)) w.of_case[i].push_back(hit.rule);
        std::sort(w.of_case[i].begin(), w.of_case[i].end());
        w.of_case[i].erase(std::unique(w.of_case[i].begin(), w.of_case[i].end()), w.of_case[i].end());
        for (std::size_t k : w.of_case[i]) w.cases_of[k].push_back(i);
    }
    return w;
}

std::vector<std::string> owners(const Wordings& w, const std::vector<std::string>& key_of) {
    std::vector<std::string> out(w.rules.log.size());
    for (std::size_t k = 0; k < out.size(); ++k) {
        const auto& matched = w.cases_of[k];
        if (matched.empty()) continue;
        const std::string& first = key_of[matched.front()];
        if (std::all_of(matched.begin(), matched.end(), [&](std::size_t i) { return key_of[i] == first; })) out[k] = first;
    }
    return out;
}

std::vector<bool> owned_by(const std::vector<std::string>& owners, const std::string& key) {
    std::vector<bool> out(owners.size(), false);
    if (key.empty()) return out;
    for (std::size_t k = 0; k < owners.size(); ++k) out[k] = owners[k] == key;
    return out;
}

}  // namespace acme::diagnose::held_out
