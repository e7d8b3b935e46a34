#include "spank/faultguard/core/promised_gpus.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "common/util/parse.hpp"

namespace acme::faultguard {

std::optional<PromisedGpus> parse_promised_gpus(std::string_view text) {
    if (text.empty() || text.back() != '\n') return std::nullopt;
    text.remove_suffix(1);
    const auto space = text.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const auto count = util::parse_int(text.substr(0, space));
    const auto at = util::parse_double(text.substr(space + 1));
    if (!count || *count < 0 || *count > 4096 || !at || *at <= 0) return std::nullopt;
    return PromisedGpus{static_cast<int>(*count), *at};
}

// Whole seconds, rounded down: rounded to the nearest, a count asked in a second's second half
// was written from the future, and every gate in the next half second asked slurmctld again.
std::string format_promised_gpus(const PromisedGpus& p) {
    return fmt::format("{} {}\n", p.count, static_cast<long long>(p.asked_at));
}

bool must_ask_slurmctld(const std::optional<PromisedGpus>& kept, int nvml_count, double now, double max_age) {
    if (!kept) return true;
    // From the future by more than the file's rounding: the clock went back.
    if (now + 1 < kept->asked_at || now - kept->asked_at > max_age) return true;
    return nvml_count < kept->count;
}

std::optional<PromisedGpus> read_promised_gpus(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return std::nullopt;
    char buf[64];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (n <= 0) return std::nullopt;
    return parse_promised_gpus(std::string_view(buf, static_cast<std::size_t>(n)));
}

bool write_promised_gpus(const std::string& path, const PromisedGpus& p) {
    const auto tmp = fmt::format("{}.{}", path, getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const auto text = format_promised_gpus(p);
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!written || std::rename(tmp.c_str(), path.c_str()) != 0) {
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}

}  // namespace acme::faultguard
