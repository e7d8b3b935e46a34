// The CLI's side of evalschedd's API: one HTTP/1.0 request over the Unix socket, the answer's
// status and JSON body. libevent 2.1's evhttp client cannot connect to a Unix socket (2.2 adds
// evhttp_connection_base_bufferevent_unix_new), and a blocking one-shot request is all a
// command needs, so this is a plain socket.
#pragma once

#include <stdexcept>
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

Response call(const std::string& socket, const std::string& method, const std::string& path, const std::string& body = {});

}  // namespace acme::evalsched
