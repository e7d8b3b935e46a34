// Option checks for every command's CLI11 parser, with messages a person reads: CLI11's own
// Range and PositiveNumber print their bounds with six decimals, or as a 309-digit number
// (std::numeric_limits<double>::max()) for "positive".
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace acme::util {

// A number from lo to hi (whole numbers only when `whole`).
inline CLI::Validator number_between(double lo, double hi, bool whole = false) {
    const std::string want = fmt::format("{} from {:.10g} to {:.10g}", whole ? "a whole number" : "a number", lo, hi);
    return CLI::Validator(
        [=](std::string& value) -> std::string {
            errno = 0;
            char* end = nullptr;
            const double v = std::strtod(value.c_str(), &end);
            const bool parsed = !value.empty() && end && *end == '\0' && errno == 0 && std::isfinite(v);
            if (!parsed || v < lo || v > hi || (whole && v != std::floor(v)))
                return fmt::format("want {}, got '{}'", want, value.substr(0, 40));
            return {};
        },
        want);
}

// A whole number of at least 1 (job ids, counts).
inline CLI::Validator positive_integer() {
    return CLI::Validator(
        [](std::string& value) -> std::string {
            const bool digits = !value.empty() && value.size() <= 18 && value.find_first_not_of("0123456789") == std::string::npos;
            if (!digits || std::strtoll(value.c_str(), nullptr, 10) < 1)
                return fmt::format("want a whole number from 1, got '{}'", value.substr(0, 40));
            return {};
        },
        "a whole number from 1");
}

}  // namespace acme::util
