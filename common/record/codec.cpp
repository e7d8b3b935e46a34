#include "common/record/codec.hpp"

#include <array>
#include <cctype>

#include <zlib.h>

namespace acme::record {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// [begin, end) of the ACME1 token in the field, or npos.
std::pair<std::size_t, std::size_t> find_token(std::string_view field) {
    std::size_t i = 0;
    while (i < field.size()) {
        while (i < field.size() && is_space(field[i])) ++i;
        std::size_t end = i;
        while (end < field.size() && !is_space(field[end])) ++end;
        if (end > i && field.substr(i, end - i).starts_with(kTokenPrefix)) return {i, end};
        i = end;
    }
    return {std::string_view::npos, std::string_view::npos};
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                           static_cast<unsigned char>(bytes[i + 2]);
        out += kAlphabet[v >> 18 & 63];
        out += kAlphabet[v >> 12 & 63];
        out += kAlphabet[v >> 6 & 63];
        out += kAlphabet[v & 63];
    }
    if (i + 1 == bytes.size()) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
        out += kAlphabet[v >> 18 & 63];
        out += kAlphabet[v >> 12 & 63];
        out += "==";
    } else if (i + 2 == bytes.size()) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8;
        out += kAlphabet[v >> 18 & 63];
        out += kAlphabet[v >> 12 & 63];
        out += kAlphabet[v >> 6 & 63];
        out += '=';
    }
    return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
    static const std::array<signed char, 256> table = [] {
        std::array<signed char, 256> t{};
        t.fill(-1);
        for (std::size_t k = 0; k < kAlphabet.size(); ++k) t[static_cast<unsigned char>(kAlphabet[k])] = static_cast<signed char>(k);
        return t;
    }();
    if (text.size() % 4 != 0) return std::nullopt;
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t i = 0; i < text.size(); i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = text[i + static_cast<std::size_t>(k)];
            if (c == '=' && i + 4 == text.size() && k >= 2) {
                v[k] = 0;
                ++pad;
                continue;
            }
            if (pad > 0) return std::nullopt;  // data after padding
            v[k] = table[static_cast<unsigned char>(c)];
            if (v[k] < 0) return std::nullopt;
        }
        const unsigned n = static_cast<unsigned>(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
        out += static_cast<char>(n >> 16 & 0xff);
        if (pad < 2) out += static_cast<char>(n >> 8 & 0xff);
        if (pad < 1) out += static_cast<char>(n & 0xff);
    }
    return out;
}

std::string encode_token(std::string_view json) {
    uLongf size = compressBound(static_cast<uLong>(json.size()));
    std::string packed(size, '\0');
    if (compress2(reinterpret_cast<Bytef*>(packed.data()), &size, reinterpret_cast<const Bytef*>(json.data()),
                  static_cast<uLong>(json.size()), Z_BEST_COMPRESSION) != Z_OK)
        return std::string(kTokenPrefix);  // only on memory exhaustion; an empty token reads as damaged
    packed.resize(size);
    return std::string(kTokenPrefix) + base64_encode(packed);
}

std::optional<std::string> decode_token(std::string_view admin_comment, std::string& error) {
    error.clear();
    const auto [begin, end] = find_token(admin_comment);
    if (begin == std::string_view::npos) return std::nullopt;
    const auto packed = base64_decode(admin_comment.substr(begin + kTokenPrefix.size(), end - begin - kTokenPrefix.size()));
    if (!packed || packed->empty()) {
        error = "the ACME1 record in AdminComment is not valid base64 (cut short, or edited)";
        return std::nullopt;
    }
    z_stream z{};
    if (inflateInit(&z) != Z_OK) {
        error = "cannot inflate the ACME1 record (zlib)";
        return std::nullopt;
    }
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed->data()));
    z.avail_in = static_cast<uInt>(packed->size());
    std::string out;
    char chunk[16384];
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(chunk);
        z.avail_out = sizeof chunk;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(chunk, sizeof chunk - z.avail_out);
        if (out.size() > kMaxJsonBytes) rc = Z_MEM_ERROR;
        if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) rc = Z_BUF_ERROR;  // input ended early
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        error = out.size() > kMaxJsonBytes ? "the ACME1 record in AdminComment inflates past 4 MiB: refused"
                                           : "the ACME1 record in AdminComment is damaged (zlib stream incomplete)";
        return std::nullopt;
    }
    return out;
}

std::string with_token(std::string_view admin_comment, std::string_view token) {
    const auto [begin, end] = find_token(admin_comment);
    if (begin == std::string_view::npos) {
        std::string out(admin_comment);
        while (!out.empty() && is_space(out.back())) out.pop_back();
        if (!out.empty()) out += ' ';
        out += token;
        return out;
    }
    std::string out(admin_comment.substr(0, begin));
    out += token;
    out += admin_comment.substr(end);
    return out;
}

}  // namespace acme::record
