// The acme job record's envelope in a Slurm AdminComment: "ACME1:" then base64 of the
// zlib-compressed JSON, one whitespace-free token. Why encoded: slurmdbd turns double quotes
// into backticks, and the field is a MariaDB TEXT (65,535 bytes, longer values are cut
// silently). Why a token: the field is shared (an admin's note, jobstats' "JS1:" record), so
// acme replaces only its own token and keeps the rest.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace acme::record {

inline constexpr std::string_view kTokenPrefix = "ACME1:";
// What acme's token may take of the field, leaving room for other tokens.
inline constexpr std::size_t kMaxTokenBytes = 48 * 1024;
// The largest JSON a token may inflate to: a corrupt or hostile token cannot exhaust memory.
inline constexpr std::size_t kMaxJsonBytes = 4 * 1024 * 1024;

std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

// The token for a JSON text.
std::string encode_token(std::string_view json);
// The JSON text of the ACME1 token in an AdminComment: nullopt with `error` empty when there is
// none, with `error` set (one line) when it is there but damaged.
std::optional<std::string> decode_token(std::string_view admin_comment, std::string& error);

// The AdminComment with its ACME1 token replaced by `token` (appended, space-separated, when
// there was none); everything else in it is kept as it was.
std::string with_token(std::string_view admin_comment, std::string_view token);

}  // namespace acme::record
