#include "common/diagnose/pattern.hpp"

namespace acme::diagnose {

RE2::Options pattern_options() {
    RE2::Options options;
    options.set_encoding(RE2::Options::EncodingLatin1);
    options.set_log_errors(false);
    // Enough for a few hundred rules in one set; RE2 falls back to slower paths, not failure.
    options.set_max_mem(64 << 20);
    return options;
}

std::string pattern_source(std::string_view pattern) {
    std::string source = "(?m)";
    source += pattern;
    return source;
}

std::unique_ptr<RE2> compile_pattern(std::string_view pattern, std::string& error) {
    auto re = std::make_unique<RE2>(pattern_source(pattern), pattern_options());
    if (!re->ok()) {
        error = re->error();
        return nullptr;
    }
    return re;
}

}  // namespace acme::diagnose
