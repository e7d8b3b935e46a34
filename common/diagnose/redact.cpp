#include "common/diagnose/redact.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <functional>
#include <memory>

#include <re2/re2.h>

namespace acme::diagnose {
namespace {

using Groups = std::array<re2::StringPiece, 5>;
using Replacer = std::function<std::string(const Groups&)>;

// Replaces every match of `re` in `line` by what `fn` makes of its groups (group 0: the match).
void replace_each(std::string& line, const RE2& re, const Replacer& fn) {
    const int n = std::min(re.NumberOfCapturingGroups() + 1, 5);
    std::string out;
    std::size_t pos = 0;
    Groups g;
    const re2::StringPiece text(line);
    bool any = false;
    while (pos <= line.size() && re.Match(text, pos, line.size(), RE2::UNANCHORED, g.data(), n)) {
        const auto start = static_cast<std::size_t>(g[0].data() - line.data());
        out.append(line, pos, start - pos);
        out += fn(g);
        any = true;
        pos = start + g[0].size();
        if (g[0].empty()) {  // an empty match must still move on
            if (pos < line.size()) out += line[pos];
            ++pos;
        }
    }
    if (!any) return;
    if (pos < line.size()) out.append(line, pos, std::string::npos);
    line = std::move(out);
}

std::string str(re2::StringPiece s) { return std::string(s.data(), s.size()); }

std::string lower_alnum(re2::StringPiece s) {
    std::string out;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool numeric(re2::StringPiece s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == ','; });
}

bool already(re2::StringPiece value) {
    return value.starts_with("[REDACTED") || value.starts_with("\"[REDACTED") || value.starts_with("'[REDACTED");
}

// Does this key (of key=value, "key": value, --key value) name a secret? Counting words
// (max_tokens=512, tokenizer: llama, PWD=/work) are not secrets.
bool secret_key(re2::StringPiece key, re2::StringPiece value) {
    const std::string k = lower_alnum(key);
    if (k.find("tokeniz") != std::string::npos) return false;
    const bool token = k.find("token") != std::string::npos;
    if (token && numeric(value)) return false;
    if (token && (k.ends_with("tokens") || k.ends_with("tokentype") || k.ends_with("tokenid") || k.ends_with("tokenids")))
        return false;
    static constexpr std::array kSecret = {"password", "passwd", "passphrase", "secret", "apikey", "accesskey",
                                           "privatekey", "credential", "sessionid", "cookie", "authkey", "signingkey"};
    for (const char* s : kSecret)
        if (k.find(s) != std::string::npos) return true;
    if (token) return true;
    if (k == "auth" || k.ends_with("authtoken")) return true;
    // db_pwd=..., but not the shell's PWD/OLDPWD (a directory).
    return k.ends_with("pwd") && k != "pwd" && k != "oldpwd";
}

// A bare secret: nothing names it, so only its shape gives it away. A run of 32+ characters
// from base64/base64url's alphabet that mixes upper case, lower case and digits and whose
// characters are close to uniformly spread (Shannon entropy >= 4.2 bits per character; words,
// identifiers and version strings stay well below), with 16+ mixed characters between
// separators ('_', '-' join the words of identifiers). Hex runs (hashes, addresses, GPU and node
// ids, UUIDs) are kept: the diagnosis reads them and a hex secret shows up after a key name.
// '/' ends a run, so paths stay whole path segments.
bool base64_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '_' || c == '-' || c == '=';
}

bool high_entropy(std::string_view run) {
    constexpr std::size_t kMinLength = 32;
    constexpr double kMinBits = 4.2;
    if (run.size() < kMinLength) return false;
    // A C++ symbol mangled by the Itanium ABI (_ZN3c104cuda20CUDACachingAllocator9allocatorE) mixes
    // case and digits like a key but is what an "undefined symbol" version mismatch is read by.
    if (run.size() > 2 && run[0] == '_' && run[1] == 'Z' && std::isalnum(static_cast<unsigned char>(run[2])))
        return false;
    // A cryptocurrency payout address (Bitcoin's base58check: '1' or '3' and 26-35 characters;
    // Monero's: '4' or '8' and 95) is random by construction but public: miners print it as their
    // pool login on every line, and it unlocks nothing. Base58 has no 0, O, I, l or '+_-='.
    const bool base58 = std::all_of(run.begin(), run.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) && c != '0' && c != 'O' && c != 'I' && c != 'l';
    });
    if (base58 && (((run[0] == '1' || run[0] == '3') && run.size() <= 35) || ((run[0] == '4' || run[0] == '8') && run.size() == 95)))
        return false;
    bool upper = false, lower = false, digit = false, non_hex = false;
    std::array<int, 256> count{};
    for (char c : run) {
        const auto u = static_cast<unsigned char>(c);
        upper = upper || std::isupper(u);
        lower = lower || std::islower(u);
        digit = digit || std::isdigit(u);
        non_hex = non_hex || !(std::isxdigit(u) || c == '-');
        ++count[u];
    }
    if (!(upper && lower && digit && non_hex)) return false;
    // Identifiers are words joined by '_' or '-' (test_fusion_True_1e_05_257_64); a random
    // string has a long stretch of mixed characters between its separators, and it changes
    // between upper case, lower case and digits at nearly every other character (about 10 times
    // in 16), where a word with a suffix (Pseudoscalar2DHM, a physics sample's name) changes 3 times.
    bool mixed = false;
    std::size_t seg_start = 0;
    auto kind = [](unsigned char u) { return std::isupper(u) ? 1 : std::islower(u) ? 2 : std::isdigit(u) ? 3 : 0; };
    for (std::size_t i = 0; i <= run.size() && !mixed; ++i) {
        if (i < run.size() && run[i] != '_' && run[i] != '-' && run[i] != '=') continue;
        const std::string_view seg = run.substr(seg_start, i - seg_start);
        seg_start = i + 1;
        if (seg.size() < 16) continue;
        bool seg_upper = false, seg_lower = false, seg_digit = false;
        std::size_t changes = 0;
        for (std::size_t k = 0; k < seg.size(); ++k) {
            const auto u = static_cast<unsigned char>(seg[k]);
            seg_upper = seg_upper || std::isupper(u);
            seg_lower = seg_lower || std::islower(u);
            seg_digit = seg_digit || std::isdigit(u);
            if (k > 0 && kind(u) != kind(static_cast<unsigned char>(seg[k - 1]))) ++changes;
        }
        mixed = seg_upper && seg_lower && seg_digit && 4 * changes >= seg.size();
    }
    if (!mixed) return false;
    double bits = 0;
    for (int n : count)
        if (n > 0) {
            const double p = static_cast<double>(n) / static_cast<double>(run.size());
            bits -= p * std::log2(p);
        }
    return bits >= kMinBits;
}

void redact_high_entropy(std::string& line) {
    std::string out;
    std::size_t i = 0, copied = 0;
    while (i < line.size()) {
        if (!base64_char(line[i])) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < line.size() && base64_char(line[j])) ++j;
        // Trailing '=' is padding; a leading '-' or '=' belongs to a flag or an assignment.
        std::size_t start = i;
        while (start < j && (line[start] == '-' || line[start] == '=')) ++start;
        const std::string_view run(line.data() + start, j - start);
        if (high_entropy(run) && !run.starts_with("REDACTED")) {
            out.append(line, copied, start - copied);
            out += "[REDACTED:random string]";
            copied = j;
        }
        i = j;
    }
    if (copied == 0) return;
    out.append(line, copied, std::string::npos);
    line = std::move(out);
}

struct Patterns {
    RE2 pem_begin{R"((-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----))"};
    RE2 pem_end{R"((-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----))"};
    RE2 url_userinfo{R"(\b([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@)"};
    RE2 header{R"((?i)\b((?:proxy-)?authorization|set-cookie|cookie|x-api-key|x-auth-token|api-key)(["']?\s*[:=]\s*)(\S.*)$)"};
    RE2 bearer{R"((?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{6,})"};
    RE2 basic{R"(\b(Basic)\s+[A-Za-z0-9+/]{12,}={0,2})"};
    RE2 token_shape{
        R"(\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,}|npm_[A-Za-z0-9]{30,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}))"};
    RE2 aws_key_id{R"(\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b)"};
    // key=value, key: value, "key": "value" (JSON), export KEY=value.
    RE2 key_value{R"(([A-Za-z0-9_.-]+)(["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^\s,;&"'}\]]+))"};
    // --password X, -token X (the = form is key_value's).
    RE2 flag_value{R"((--?[A-Za-z0-9_-]+)(\s+)("[^"]*"|'[^']*'|[^\s-][^\s]*))"};
    RE2 email{R"(\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b)"};
    RE2 home{R"((/home|/Users|/export/home)/[^/\s:'"]+)"};
};

const Patterns& patterns() {
    static const Patterns p;
    return p;
}

void redact_line(std::string& line, const Patterns& p, const std::vector<std::unique_ptr<RE2>>& words) {
    replace_each(line, p.url_userinfo, [](const Groups& g) { return str(g[1]) + "[REDACTED:credential]@"; });
    replace_each(line, p.header, [](const Groups& g) { return str(g[1]) + str(g[2]) + "[REDACTED:credential]"; });
    replace_each(line, p.bearer, [](const Groups& g) { return str(g[1]) + " [REDACTED:token]"; });
    replace_each(line, p.basic, [](const Groups& g) { return str(g[1]) + " [REDACTED:credential]"; });
    replace_each(line, p.token_shape, [](const Groups&) { return std::string("[REDACTED:token]"); });
    replace_each(line, p.aws_key_id, [](const Groups&) { return std::string("[REDACTED:aws key]"); });
    replace_each(line, p.key_value, [](const Groups& g) {
        if (already(g[3]) || !secret_key(g[1], g[3])) return str(g[0]);
        return str(g[1]) + str(g[2]) + "[REDACTED:secret]";
    });
    replace_each(line, p.flag_value, [](const Groups& g) {
        if (already(g[3]) || !secret_key(g[1], g[3])) return str(g[0]);
        return str(g[1]) + str(g[2]) + "[REDACTED:secret]";
    });
    replace_each(line, p.email, [](const Groups&) { return std::string("[REDACTED:email]"); });
    replace_each(line, p.home, [](const Groups& g) { return str(g[1]) + "/[user]"; });
    redact_high_entropy(line);
    for (const auto& w : words) replace_each(line, *w, [](const Groups&) { return std::string("[user]"); });
}

}  // namespace

std::string redact(std::string_view text, const RedactOptions& options) {
    const Patterns& p = patterns();
    std::vector<std::unique_ptr<RE2>> words;
    for (const auto& w : options.words) {
        if (w.size() < 3) continue;
        auto re = std::make_unique<RE2>("\\b" + RE2::QuoteMeta(w) + "\\b");
        if (re->ok()) words.push_back(std::move(re));
    }
    std::string out;
    out.reserve(text.size());
    bool in_key = false;  // inside a PEM private-key block
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        const bool has_nl = nl != std::string_view::npos;
        if (!has_nl) nl = text.size();
        std::string line(text.substr(pos, nl - pos));
        pos = has_nl ? nl + 1 : nl;
        re2::StringPiece m;
        if (!in_key && RE2::PartialMatch(line, p.pem_begin, &m)) {
            const auto start = static_cast<std::size_t>(m.data() - line.data());
            std::string rest = line.substr(start);
            line.erase(start);
            redact_line(line, p, words);
            line += "[REDACTED:private key]";
            in_key = true;
            re2::StringPiece e;
            if (RE2::PartialMatch(rest, p.pem_end, &e)) {
                in_key = false;
                std::string after = rest.substr(static_cast<std::size_t>(e.data() - rest.data()) + e.size());
                redact_line(after, p, words);
                line += after;
            }
        } else if (in_key) {
            re2::StringPiece e;
            if (RE2::PartialMatch(line, p.pem_end, &e)) {
                in_key = false;
                std::string after = line.substr(static_cast<std::size_t>(e.data() - line.data()) + e.size());
                redact_line(after, p, words);
                line = "[REDACTED:private key]" + after;
            } else {
                line = "[REDACTED:private key]";
            }
        } else {
            redact_line(line, p, words);
        }
        out += line;
        if (has_nl) out += '\n';
    }
    return out;
}

}  // namespace acme::diagnose
