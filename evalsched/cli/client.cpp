#include "evalsched/cli/client.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

#include <sys/stat.h>

#include <curl/curl.h>
#include <fmt/format.h>

namespace acme::evalsched {
namespace {

struct Sink {
    std::string body;
    std::size_t cap = 0;
    bool too_large = false;
};

// Returning fewer bytes than given makes libcurl end the transfer with CURLE_WRITE_ERROR: an
// answer past the cap is never held whole.
std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
    auto* sink = static_cast<Sink*>(user);
    const std::size_t bytes = size * n;
    if (bytes > sink->cap - sink->body.size()) {
        sink->too_large = true;
        return 0;
    }
    sink->body.append(data, bytes);
    return bytes;
}

// A path byte outside [A-Za-z0-9._~/-] percent-encoded: a run name typed with a space reaches
// the daemon, which refuses it by name, instead of libcurl refusing the URL.
std::string encode_path(const std::string& path) {
    std::string out;
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '.' || c == '_' || c == '~' || c == '/' || c == '-') out += static_cast<char>(c);
        else out += fmt::format("%{:02X}", c);
    }
    return out;
}

// Why no connection was made, from the socket file itself (libcurl says only "couldn't connect").
std::string no_connection(const std::string& socket, long os_errno) {
    const std::string start = "start it (systemctl start evalschedd) or pass --socket";
    struct stat st{};
    if (lstat(socket.c_str(), &st) != 0) return fmt::format("evalschedd is not running at {} (no such socket): {}", socket, start);
    if (!S_ISSOCK(st.st_mode)) return fmt::format("{} is not a socket: pass evalschedd's socket with --socket", socket);
    if (os_errno == EACCES) return fmt::format("evalschedd's socket {} is not open to you ({}): ask an admin", socket, strerror(EACCES));
    return fmt::format("evalschedd is not running at {} ({}): {}", socket, os_errno ? strerror(static_cast<int>(os_errno)) : "connection refused",
                       start);
}

}  // namespace

std::string Response::error() const {
    if (status < 400) return {};
    if (body.is_object() && body.contains("error") && body["error"].is_string()) return body["error"].get<std::string>();
    return fmt::format("evalschedd answered HTTP {}", status);
}

Response parse_answer(long status, std::string_view body) {
    Response r;
    r.status = static_cast<int>(status);
    r.body = nlohmann::json::parse(body, nullptr, false);
    if (r.body.is_discarded()) r.body = nullptr;
    return r;
}

Response call(const std::string& socket, const std::string& method, const std::string& path, const std::string& body,
              const CallLimits& limits) {
    static const bool initialised = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(initialised ? curl_easy_init() : nullptr, &curl_easy_cleanup);
    if (!curl) throw DaemonUnreachable("libcurl could not start a request: check the installation (libcurl4)");
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(nullptr, &curl_slist_free_all);
    auto add_header = [&](const char* h) {
        curl_slist* next = curl_slist_append(headers.get(), h);
        if (!next) throw std::bad_alloc();
        headers.release();
        headers.reset(next);
    };
    // No "Expect: 100-continue" for a large submission: the daemon answers one request at once.
    add_header("Expect:");
    add_header("Content-Type: application/json");
    Sink sink;
    sink.cap = limits.max_answer;
    char error[CURL_ERROR_SIZE] = "";
    CURL* c = curl.get();
    const std::string url = "http://evalschedd" + encode_path(path);
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, socket.c_str());
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, limits.timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
    if (method == "POST") {
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
    } else if (method != "GET") {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
    }
    const CURLcode rc = curl_easy_perform(c);
    long status = 0, os_errno = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
    switch (rc) {
    case CURLE_OK: break;
    case CURLE_COULDNT_CONNECT: throw DaemonUnreachable(no_connection(socket, os_errno));
    case CURLE_OPERATION_TIMEDOUT:
        throw DaemonUnreachable(fmt::format("evalschedd at {} gave no complete answer within {} s: see its log (journalctl -u evalschedd)",
                                            socket, limits.timeout_ms / 1000.0));
    case CURLE_WRITE_ERROR:
        if (sink.too_large)
            throw DaemonUnreachable(fmt::format("evalschedd at {} answered more than {} bytes: ask for less (one evaluation, not all)", socket,
                                                limits.max_answer));
        [[fallthrough]];
    default:
        throw DaemonUnreachable(fmt::format("evalschedd at {} gave no complete answer ({}): see its log (journalctl -u evalschedd)", socket,
                                            error[0] ? error : curl_easy_strerror(rc)));
    }
    Response r = parse_answer(status, sink.body);
    // A success that is not JSON is no answer the CLI can show.
    if (r.status < 400 && r.body.is_null())
        throw DaemonUnreachable(fmt::format("evalschedd at {} answered HTTP {} without JSON: see its log (journalctl -u evalschedd)", socket, status));
    return r;
}

}  // namespace acme::evalsched
