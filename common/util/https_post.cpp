#include "common/util/https_post.hpp"

#include <dlfcn.h>

#include <curl/curl.h>

#include <fmt/format.h>

namespace acme::util {

namespace {

// libcurl is loaded on the first https:// request, not linked: every program on libacme maps
// what it links at each start, and libcurl brings some thirty libraries (TLS, Kerberos, LDAP,
// SSH, ...) that faultguard's epilog helper, run after every job on the node that is starting
// the next one, would load for a request few sites configure (issue #41). The same soname and
// the same functions as linking it (the headers are the build's libcurl's).
struct Curl {
    decltype(&curl_easy_init) easy_init = nullptr;
    decltype(&curl_easy_setopt) easy_setopt = nullptr;
    decltype(&curl_easy_perform) easy_perform = nullptr;
    decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
    decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
    decltype(&curl_easy_strerror) easy_strerror = nullptr;
    decltype(&curl_slist_append) slist_append = nullptr;
    decltype(&curl_slist_free_all) slist_free_all = nullptr;
};

template <typename F>
bool resolve(void* lib, const char* name, F& fn) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    return fn != nullptr;
}

// The loaded library's functions, or nullptr with `error` (once: a later call says the same).
const Curl* curl_api(std::string& error) {
    static std::string load_error;
    static const Curl* api = []() -> const Curl* {
        void* lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* why = dlerror();
            load_error = fmt::format("cannot load libcurl.so.4 (install libcurl4): {}", why ? why : "unknown error");
            return nullptr;
        }
        static Curl c;
        if (!resolve(lib, "curl_easy_init", c.easy_init) || !resolve(lib, "curl_easy_setopt", c.easy_setopt) ||
            !resolve(lib, "curl_easy_perform", c.easy_perform) || !resolve(lib, "curl_easy_getinfo", c.easy_getinfo) ||
            !resolve(lib, "curl_easy_cleanup", c.easy_cleanup) || !resolve(lib, "curl_easy_strerror", c.easy_strerror) ||
            !resolve(lib, "curl_slist_append", c.slist_append) || !resolve(lib, "curl_slist_free_all", c.slist_free_all)) {
            load_error = "libcurl.so.4 lacks the easy interface";
            return nullptr;
        }
        return &c;
    }();
    if (!api) error = load_error;
    return api;
}

struct Sink {
    std::string body;
    std::size_t max = 0;
    bool too_long = false;
};

std::size_t on_data(char* data, std::size_t size, std::size_t n, void* user) {
    auto* sink = static_cast<Sink*>(user);
    const std::size_t bytes = size * n;
    if (sink->body.size() + bytes > sink->max) {
        sink->too_long = true;
        return 0;  // curl aborts the transfer
    }
    sink->body.append(data, bytes);
    return bytes;
}
}  // namespace

HttpResponse https_post(const std::string& url, const std::string& body, const std::string& content_type,
                        const std::vector<std::pair<std::string, std::string>>& headers, const HttpLimits& limits) {
    HttpResponse r;
    if (url.rfind("https://", 0) != 0) {
        r.error = "not an https:// URL";
        return r;
    }
    for (const auto& [name, value] : headers)
        if (name.find_first_of("\r\n:") != std::string::npos || value.find_first_of("\r\n") != std::string::npos) {
            r.error = fmt::format("header {} holds a line break: not sent", name);
            return r;
        }
    const Curl* api = curl_api(r.error);
    if (!api) return r;
    CURL* curl = api->easy_init();
    if (!curl) {
        r.error = "cannot start libcurl";
        return r;
    }
    curl_slist* list = api->slist_append(nullptr, ("Content-Type: " + content_type).c_str());
    list = api->slist_append(list, "Accept: application/json");
    for (const auto& [name, value] : headers) list = api->slist_append(list, (name + ": " + value).c_str());
    Sink sink{{}, limits.max_body, false};
    api->easy_setopt(curl, CURLOPT_URL, url.c_str());
    api->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
    api->easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    api->easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    api->easy_setopt(curl, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
    api->easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    api->easy_setopt(curl, CURLOPT_PROXY, "");  // never a proxy from the environment (the token would go there)
    api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    api->easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(limits.timeout_s * 1000));
    api->easy_setopt(curl, CURLOPT_POST, 1L);
    api->easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    api->easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    api->easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    api->easy_setopt(curl, CURLOPT_USERAGENT, "acme-slurm");
    api->easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    api->easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    char message[CURL_ERROR_SIZE] = {};
    api->easy_setopt(curl, CURLOPT_ERRORBUFFER, message);
    const CURLcode rc = api->easy_perform(curl);
    long status = 0;
    api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    api->slist_free_all(list);
    api->easy_cleanup(curl);
    if (sink.too_long) {
        r.error = fmt::format("answer longer than {} bytes", limits.max_body);
        return r;
    }
    if (rc != CURLE_OK) {
        r.error = message[0] ? message : api->easy_strerror(rc);
        return r;
    }
    r.status = static_cast<int>(status);
    r.body = std::move(sink.body);
    return r;
}

}  // namespace acme::util
