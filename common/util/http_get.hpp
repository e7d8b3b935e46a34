// A bounded HTTP client on libevent's evhttp: for a command or helper asking a site service
// (Prometheus' HTTP API with GET, an OpenAI-compatible model server with POST) for a few
// answers. Plain http:// only. Every request is bounded in time
// (connect and reply together) and in the size of the body it accepts, so a slow or hostile
// server costs the caller at most the timeout and the body limit, never a hang.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace acme::util {

struct HttpUrl {
    std::string host;
    int port = 80;
    std::string path;  // the URL's path without a trailing '/', "" for the root; a prefix for requests
    std::string text;  // the URL as given, for messages
};

// An http://HOST[:PORT][/PATH] URL (no query, no fragment, no user info). nullopt with `error`
// set (one phrase: what is wrong) otherwise; https:// is refused by name.
std::optional<HttpUrl> parse_http_url(const std::string& text, std::string& error);

// "a b/c" -> "a%20b%2Fc": a value for a query string.
std::string url_encode(const std::string& value);

struct HttpLimits {
    double timeout_s = 5;                  // connect + reply, per request
    std::size_t max_body = 16u << 20;      // bytes; a longer reply is an error
};

struct HttpResponse {
    int status = 0;       // HTTP status; 0 when no reply came
    std::string body;
    std::string error;    // non-empty when no complete reply came: "connection refused", ...
};

// One connection to the URL's host, kept alive across get()s. Not thread-safe.
class HttpClient {
public:
    HttpClient(HttpUrl url, HttpLimits limits = {});
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    // GET url.path + target (target starts with '/', query included). Never throws for what the
    // network or the server does: that is in the response.
    HttpResponse get(const std::string& target);
    // POST `body` to url.path + target. `headers` are added as given (name, value), after
    // Host, Accept, User-Agent, Content-Type; a value with CR or LF is refused (no request).
    HttpResponse post(const std::string& target, const std::string& body, const std::string& content_type,
                      const std::vector<std::pair<std::string, std::string>>& headers = {});

    const HttpUrl& url() const { return url_; }

private:
    HttpResponse request(bool post, const std::string& target, const std::string* body, const std::string& content_type,
                         const std::vector<std::pair<std::string, std::string>>& headers);
    struct State;
    HttpUrl url_;
    HttpLimits limits_;
    std::unique_ptr<State> state_;
};

}  // namespace acme::util
