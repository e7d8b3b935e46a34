#include "common/diagnose/signature.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace acme::diagnose {
namespace {

bool is_word(unsigned char c) { return std::isalnum(c) || c == '_' || c == '.' || c == '#'; }

std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 1469598103934665603ull) {
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    return hash;
}

// A word holding a digit and only hex characters beyond that (pids, addresses, uuids parts)
// is an identifier of this run, not of the failure.
bool looks_like_id(std::string_view word) {
    bool digit = false;
    for (unsigned char c : word) {
        if (std::isdigit(c)) digit = true;
        else if (!std::isxdigit(c) && c != 'x') return false;
    }
    return digit;
}

}  // namespace

std::string normalise_line(std::string_view line) {
    std::string out;
    out.reserve(line.size());
    std::size_t i = 0;
    while (i < line.size()) {
        // One blank-separated field at a time; a path keeps only its last component.
        std::size_t end = line.find_first_of(" \t", i);
        if (end == std::string_view::npos) end = line.size();
        std::string_view field = line.substr(i, end - i);
        if (auto slash = field.rfind('/'); slash != std::string_view::npos && slash + 1 < field.size())
            field = field.substr(slash + 1);
        std::size_t j = 0;
        while (j < field.size()) {
            unsigned char c = static_cast<unsigned char>(field[j]);
            if (std::isalnum(c) || c == '_') {
                std::size_t k = j;
                while (k < field.size() && (std::isalnum(static_cast<unsigned char>(field[k])) || field[k] == '_')) ++k;
                std::string_view word = field.substr(j, k - j);
                if (looks_like_id(word)) {
                    out += '#';
                } else {
                    // "rank3" and "rank12" are the same word; so are "gpu-a01" and "gpu-b11".
                    for (unsigned char w : word) {
                        if (!std::isdigit(w)) out += static_cast<char>(std::tolower(w));
                        else if (out.empty() || out.back() != '#') out += '#';
                    }
                }
                j = k;
            } else {
                out += static_cast<char>(c);
                ++j;
            }
        }
        out += ' ';
        i = end;
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

Signature make_signature(std::span<const std::string> lines) {
    Signature signature;
    for (const auto& raw : lines) {
        std::string line = normalise_line(raw);
        std::vector<std::string_view> words;
        std::size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && !is_word(static_cast<unsigned char>(line[i]))) ++i;
            std::size_t start = i;
            while (i < line.size() && is_word(static_cast<unsigned char>(line[i]))) ++i;
            if (i > start) words.push_back(std::string_view(line).substr(start, i - start));
        }
        if (words.size() == 1) signature.shingles.push_back(fnv1a(words[0]));
        for (std::size_t w = 0; w + 1 < words.size(); ++w)
            signature.shingles.push_back(fnv1a(words[w + 1], fnv1a(" ", fnv1a(words[w]))));
    }
    std::sort(signature.shingles.begin(), signature.shingles.end());
    signature.shingles.erase(std::unique(signature.shingles.begin(), signature.shingles.end()),
                             signature.shingles.end());
    return signature;
}

double similarity(const Signature& a, const Signature& b) noexcept {
    if (a.empty() || b.empty()) return 0.0;
    std::size_t common = 0, i = 0, j = 0;
    while (i < a.shingles.size() && j < b.shingles.size()) {
        if (a.shingles[i] == b.shingles[j]) {
            ++common;
            ++i;
            ++j;
        } else if (a.shingles[i] < b.shingles[j]) {
            ++i;
        } else {
            ++j;
        }
    }
    return static_cast<double>(common) / static_cast<double>(a.shingles.size() + b.shingles.size() - common);
}

std::string to_text(const Signature& signature) {
    std::string out;
    char buffer[17];
    for (auto shingle : signature.shingles) {
        auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, shingle, 16);
        if (!out.empty()) out += ' ';
        out.append(buffer, end);
    }
    return out;
}

std::optional<Signature> signature_from_text(std::string_view text) noexcept {
    Signature signature;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t end = text.find(' ', i);
        if (end == std::string_view::npos) end = text.size();
        std::string_view word = text.substr(i, end - i);
        std::uint64_t value = 0;
        auto [stop, ec] = std::from_chars(word.data(), word.data() + word.size(), value, 16);
        if (word.empty() || word.size() > 16 || ec != std::errc{} || stop != word.data() + word.size())
            return std::nullopt;
        signature.shingles.push_back(value);
        i = end + 1;
        if (end + 1 == text.size()) return std::nullopt;  // a trailing space is not the stored form
    }
    std::sort(signature.shingles.begin(), signature.shingles.end());
    signature.shingles.erase(std::unique(signature.shingles.begin(), signature.shingles.end()),
                             signature.shingles.end());
    return signature;
}

}  // namespace acme::diagnose
