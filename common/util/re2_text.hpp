#pragma once
// RE2's text type, from a std::string_view. RE2 takes re2::StringPiece: its own class on
// Debian 12, absl::string_view since 2023, which is std::string_view where abseil was built to
// use it (Debian unstable) and abseil's own class where not (Debian 13), with no conversion
// from std::string_view. (data, size) builds each of them.
#include <string_view>

#include <re2/re2.h>

namespace acme::util {

inline re2::StringPiece re2_text(std::string_view s) { return re2::StringPiece(s.data(), s.size()); }

}  // namespace acme::util
