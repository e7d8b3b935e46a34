#pragma once
// Text into HTML: the self-contained reports (gpuacct --html, evalsched report --format html)
// put user-chosen names (jobs, runs, datasets) into element text and attribute values.

#include <string>
#include <string_view>

namespace acme::util {

// Escapes the five characters that can end text or a quoted attribute value.
inline std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

}  // namespace acme::util
