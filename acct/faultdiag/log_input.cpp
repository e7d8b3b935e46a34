#include "acct/faultdiag/log_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <istream>
#include <sstream>

#include <fmt/format.h>

namespace acme::faultdiag {
namespace {

// A log named on the command line: a regular file only (a FIFO would block the open, a device
// such as /dev/zero never ends, a directory has no text), and of a big one its last
// kMaxLogBytes, where a failure's lines are.
constexpr off_t kMaxLogBytes = 64 << 20;

std::string read_log_file(const std::string& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) throw InputError(fmt::format("cannot read {}: {}: check the path", file, std::strerror(errno)));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw InputError(fmt::format("cannot read {}: not a regular file: give a log file, or - for standard input", file));
    }
    const off_t start = st.st_size > kMaxLogBytes ? st.st_size - kMaxLogBytes : 0;
    std::string text(static_cast<std::size_t>(st.st_size - start), '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = pread(fd, text.data() + got, text.size() - got, start + static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int saved = errno;
            ::close(fd);
            throw InputError(fmt::format("cannot read {}: {}", file, std::strerror(saved)));
        }
        if (n == 0) break;  // shrank while being read
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    text.resize(got);
    if (start > 0) {
        // From the first whole line of the tail.
        const auto nl = text.find('\n');
        text.erase(0, nl == std::string::npos ? 0 : nl + 1);
    }
    return text;
}

}  // namespace

std::vector<Input> read_inputs(const std::vector<std::string>& files, std::istream& in) {
    // Everything is read before anything is printed: a missing file stops the run cleanly.
    std::vector<Input> inputs;
    for (const auto& file : files) {
        std::ostringstream text;
        if (file == "-") {
            text << in.rdbuf();
            inputs.push_back({"(stdin)", text.str()});
            continue;
        }
        inputs.push_back({file, read_log_file(file)});
    }
    return inputs;
}

std::string concatenated(const std::vector<Input>& inputs) {
    std::string all;
    for (const auto& input : inputs) {
        all += input.text;
        if (!all.empty() && all.back() != '\n') all += '\n';
    }
    return all;
}

}  // namespace acme::faultdiag
