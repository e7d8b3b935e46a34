// The CLI's side of evalschedd's API: one HTTP request over the daemon's Unix socket through
// libcurl (CURLOPT_UNIX_SOCKET_PATH; libevent 2.1's evhttp client cannot connect to a Unix
// socket). One timeout for the whole exchange, a cap on the answer's size, and on any failure
// one clear line (DaemonUnreachable) naming the socket and what to do, never part of an answer
// read as if it were all of it.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace acme::evalsched {

// The daemon gave no usable answer. what() names the socket and what to do.
class DaemonUnreachable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Response {
    int status = 0;
    nlohmann::json body;  // null when the body is not JSON
    // The daemon's one-line error for a status >= 400, else empty.
    std::string error() const;
};

struct CallLimits {
    long timeout_ms = 60000;              // connect, send and the whole answer
    std::size_t max_answer = 256u << 20;  // bytes of body; more aborts the transfer
};

// The answer as the CLI reads it: the status and the body parsed as JSON (null when it is not).
// Pure, so the fuzz target reads daemon answers with the code the command runs.
Response parse_answer(long status, std::string_view body);

Response call(const std::string& socket, const std::string& method, const std::string& path, const std::string& body = {},
              const CallLimits& limits = {});

}  // namespace acme::evalsched
