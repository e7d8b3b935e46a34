// One newline-ended line from a socket, bounded in size and in time: the resident health gate's
// request and its answer in the prolog (faultguard) are read with it. Never blocks past the
// deadline, whether the descriptor is blocking or not.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace acme::util {

using SteadyTime = std::chrono::steady_clock::time_point;

// Waits for `events` (poll(2)'s) on fd until the deadline; false on timeout or error.
bool wait_fd(int fd, short events, SteadyTime deadline);

enum class LineRead {
    line,      // `line` holds it, without its newline
    timeout,   // the deadline passed before a whole line came
    closed,    // the peer closed before a newline
    too_long,  // more than max_bytes without a newline
    failed,    // recv(2) failed: `error` holds its errno
};

// Reads until the first '\n' (what follows it in the same read is dropped: one line per
// connection), at most max_bytes before it, until the deadline.
LineRead read_line(int fd, std::size_t max_bytes, SteadyTime deadline, std::string& line, int& error);

}  // namespace acme::util
