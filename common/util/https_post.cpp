#include "common/util/https_post.hpp"

#include <curl/curl.h>

#include <fmt/format.h>

namespace acme::util {

namespace {
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
    CURL* curl = curl_easy_init();
    if (!curl) {
        r.error = "cannot start libcurl";
        return r;
    }
    curl_slist* list = curl_slist_append(nullptr, ("Content-Type: " + content_type).c_str());
    list = curl_slist_append(list, "Accept: application/json");
    for (const auto& [name, value] : headers) list = curl_slist_append(list, (name + ": " + value).c_str());
    Sink sink{{}, limits.max_body, false};
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(curl, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_PROXY, "");  // never a proxy from the environment (the token would go there)
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(limits.timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "acme-slurm");
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    char message[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, message);
    const CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
    if (sink.too_long) {
        r.error = fmt::format("answer longer than {} bytes", limits.max_body);
        return r;
    }
    if (rc != CURLE_OK) {
        r.error = message[0] ? message : curl_easy_strerror(rc);
        return r;
    }
    r.status = static_cast<int>(status);
    r.body = std::move(sink.body);
    return r;
}

}  // namespace acme::util
