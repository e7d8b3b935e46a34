#include "spank/faultguard/core/recovery_options.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/util/parse.hpp"

namespace acme::faultguard {

std::optional<int> parse_auto_recover(std::string_view value, std::string& error) {
    if (value.empty()) return kDefaultMaxRestarts;
    const auto n = util::parse_int(value);
    if (!n || *n < 0 || *n > kMaxRestartsLimit) {
        error = fmt::format("faultguard: --auto-recover={}: want a number of restarts from 0 to {}",
                            util::printable(value, 40), kMaxRestartsLimit);
        return std::nullopt;
    }
    return static_cast<int>(*n);
}

bool check_ckpt_dir(const std::string& path, std::string& error) {
    const std::string shown = util::printable(path, 200);
    if (path.empty() || path.front() != '/') {
        error = fmt::format("faultguard: --ckpt-dir={}: want an absolute path (the job may start in another directory)",
                            shown);
        return false;
    }
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
        error = fmt::format("faultguard: --ckpt-dir={}: {}; create it first", shown, std::strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        error = fmt::format("faultguard: --ckpt-dir={}: not a directory", shown);
        return false;
    }
    return true;
}

}  // namespace acme::faultguard
