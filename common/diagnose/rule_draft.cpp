#include "common/diagnose/rule_draft.hpp"

#include <cctype>

#include <fmt/format.h>
#include <re2/re2.h>

#include "common/diagnose/engine.hpp"
#include "common/diagnose/redact.hpp"

namespace acme::diagnose {
namespace {

// A TOML basic string: what a literal string ('...') cannot hold is escaped.
std::string toml_string(std::string_view s) {
    if (s.find('\'') == std::string_view::npos && s.find_first_of("\n\r") == std::string_view::npos) {
        bool plain = true;
        for (char c : s) plain = plain && (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
        if (plain) return fmt::format("'{}'", s);
    }
    std::string out = "\"";
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || u == 0x7f) {
            out += fmt::format("\\u{:04x}", u);
        } else {
            out += c;
        }
    }
    return out + "\"";
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// A comment line: no line breaks, printable.
std::string comment(std::string_view s) {
    std::string out;
    for (char c : s) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
    return out;
}

}  // namespace

std::string evidence_pattern(std::string_view raw) {
    std::string line = redact(raw);
    // What comes before the message varies by run: timestamps, dmesg's [uptime], [rank N]:.
    static const RE2 prefix(R"(^\s*(?:\[[^\]]{0,40}\]:?\s*|\d{4}-\d\d-\d\d[T ][0-9:.,]+Z?\s*|\d{1,2}:\d\d:\d\d(?:[.,]\d+)?\s*|[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d \S+ \S+: )*)");
    re2::StringPiece in(line);
    if (RE2::Consume(&in, prefix) && !in.empty()) line = std::string(in.data(), in.size());
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t')) line.pop_back();
    // A long line's tail is mostly detail (paths, values) that changes: the first 160 bytes,
    // cut at a word boundary, name the failure.
    if (line.size() > 160) {
        std::size_t cut = 160;
        while (cut > 80 && is_word(line[cut - 1]) && is_word(line[cut])) --cut;
        line.resize(cut);
    }
    std::string out;
    std::size_t i = 0;
    while (i < line.size()) {
        if (line.compare(i, 10, "[REDACTED:") == 0) {
            const std::size_t end = line.find(']', i);
            if (end != std::string::npos) {
                out += R"(\S+)";
                i = end + 1;
                continue;
            }
        }
        const bool word_start = i == 0 || !is_word(line[i - 1]);
        if (word_start && line.compare(i, 2, "0x") == 0 && i + 2 < line.size() && is_hex(line[i + 2])) {
            i += 2;
            while (i < line.size() && is_hex(line[i])) ++i;
            out += "0x[0-9a-fA-F]+";
            continue;
        }
        if (word_start && is_hex(line[i])) {
            // A run of 8+ hex digits with at least one digit: an id, an address, a hash.
            std::size_t j = i;
            bool digit = false;
            for (; j < line.size() && is_hex(line[j]); ++j)
                if (is_digit(line[j])) digit = true;
            if (j - i >= 8 && digit && (j == line.size() || !is_word(line[j]))) {
                out += "[0-9a-fA-F]+";
                i = j;
                continue;
            }
        }
        if (is_digit(line[i])) {
            while (i < line.size() && is_digit(line[i])) ++i;
            out += R"(\d+)";
            continue;
        }
        // Only RE2's metacharacters are escaped, so the draft stays readable.
        if (std::string_view("\\.^$|?*+()[]{}").find(line[i]) != std::string_view::npos) out += '\\';
        out += line[i];
        ++i;
    }
    return out;
}

RuleDraft draft_rule(const ReasonInfo& reason, std::string_view evidence_line, std::string_view id, std::string_view why) {
    RuleDraft d;
    const std::string pattern = evidence_pattern(evidence_line);
    d.toml = fmt::format(
        "# Draft rule ({}): review it before use.\n"
        "# Evidence: {}\n"
        "# The pattern is that line escaped, with numbers, hex ids and secrets generalised; make it\n"
        "# as narrow as the failure (precision first: a rule for an infrastructure reason drains\n"
        "# nodes and requeues jobs), then put it in a rules.d file such as 50-site.toml and check\n"
        "# it with `faultdiag --rules DIR LOG`.\n"
        "[[rule]]\n"
        "id = {}\n"
        "reason = \"{}\"\n"
        "pattern = {}\n"
        "priority = 500\n"
        "confidence = 0.7\n",
        comment(why), comment(redact(evidence_line.substr(0, 400))), toml_string(id), reason.name, toml_string(pattern));
    try {
        Engine engine(parse_rules(d.toml, "draft"));
        const std::string log = std::string(evidence_line) + "\n";
        JobEnd job;
        job.log = log;
        const auto result = engine.diagnose(job);
        d.matches = result.reason == reason.name;
        if (!d.matches) d.problem = "the draft's pattern does not match its own evidence line";
    } catch (const std::exception& e) {
        d.problem = fmt::format("the draft is not a valid rule: {}", e.what());
    }
    return d;
}

}  // namespace acme::diagnose
