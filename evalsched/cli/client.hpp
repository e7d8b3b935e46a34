// The CLI's side of evalschedd's API: one HTTP/1.1 request (Connection: close) over the Unix
// socket, the answer's status and JSON body. libevent 2.1's evhttp client cannot connect to a
// Unix socket (evhttp_connection_connect_ only connects by host name or an inet address; 2.2
// adds evhttp_connection_base_bufferevent_unix_new), so this is a plain socket: one deadline
// for the whole exchange (kTimeoutS), Content-Length and chunked answers, a size cap, and one
// clear line (DaemonUnreachable) instead of ever parsing part of an answer.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <string>

#include <nlohmann/json.hpp>

namespace acme::evalsched {

// The daemon is not there. what() names the socket and what to do.
class DaemonUnreachable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Response {
    int status = 0;
    nlohmann::json body;
    // The daemon's one-line error for a status >= 400, else empty.
    std::string error() const;
};

inline constexpr int kTimeoutS = 60;
inline constexpr std::size_t kMaxAnswer = 256u << 20;

// A chunked body decoded; nullopt when it is cut short or malformed.
std::optional<std::string> dechunk(std::string_view body);

Response call(const std::string& socket, const std::string& method, const std::string& path, const std::string& body = {});

}  // namespace acme::evalsched
