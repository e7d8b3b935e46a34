// POST over https:// for the one site service that carries a secret: the model server that
// faultguard's LLM-assisted diagnosis asks (its bearer token must not travel in clear text).
// libcurl with the system's CA store (Debian's ca-certificates), peer and host verified, TLS
// only, no redirects, no proxy from the environment; bounded like HttpClient (http_get.hpp):
// the whole request within timeout_s, at most max_body bytes of answer.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/util/http_get.hpp"

namespace acme::util {

// url: "https://HOST[:PORT][/PATH]" + target. A header value with CR or LF is refused.
HttpResponse https_post(const std::string& url, const std::string& body, const std::string& content_type,
                        const std::vector<std::pair<std::string, std::string>>& headers, const HttpLimits& limits);

}  // namespace acme::util
