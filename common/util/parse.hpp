// Strict parsing of the small values admins and users type: numbers, booleans, key=value.
// Every function rejects trailing junk, empty text and out-of-range values instead of guessing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace acme::util {

std::optional<double> parse_double(std::string_view text);
std::optional<std::int64_t> parse_int(std::string_view text);
// 1/true/yes/y/on and 0/false/no/n/off, any case; anything else is nullopt.
std::optional<bool> parse_bool(std::string_view text);
// "a,,b," as ["a", "b"]: the non-empty items of a `separator`-separated list, in order.
std::vector<std::string> split_list(std::string_view text, char separator = ',');
// "key=value" split at the first '='; nullopt without '=' or with an empty key.
std::optional<std::pair<std::string, std::string>> split_key_value(std::string_view text);
// `text` cut to `max` bytes with control and non-ASCII bytes shown as '?', for echoing user
// input inside a one-line error message.
std::string printable(std::string_view text, std::size_t max = 80);
// "0,1,3-5" as Slurm prints id lists; nullopt on anything malformed or over max_count ids.
std::optional<std::vector<int>> parse_id_list(std::string_view text, std::size_t max_count = 4096);

}  // namespace acme::util
