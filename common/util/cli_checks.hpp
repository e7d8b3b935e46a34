// Option checks for every command's CLI11 parser, with messages a person reads: CLI11's own
// Range and PositiveNumber print their bounds with six decimals, or as a 309-digit number
// (std::numeric_limits<double>::max()) for "positive".
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

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

// --help as a person reads it: an option's value as its type ("--live FLOAT"), a set of choices
// kept ("TEXT:{K,M,G}"), a default in brackets. CLI11's own formatter also prints each check's
// description glued to the type ("FLOAT:a number from 0.5 to 3600=2") and "Excludes: ...",
// which the option's description says in words. Set before the subcommands are added: they
// take the formatter from their parent.
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_option_opts(const CLI::Option* opt) const override {
        if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
        if (opt->get_type_size() == 0) return {};  // a flag
        std::string type = opt->get_type_name();
        if (const auto colon = type.find(':'); colon != std::string::npos && type.compare(colon + 1, 1, "{") != 0)
            type.resize(colon);
        std::string out = type.empty() ? std::string() : " " + type;
        if (!opt->get_default_str().empty()) out += " [" + opt->get_default_str() + "]";
        if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
        if (opt->get_required()) out += " (required)";
        return out;
    }
};

// CLI11's words for a value it could not convert ("Could not convert: ID = abc", the same in
// CLI11 2.3 to 2.6) in a person's: "ID: 'abc' is not a number". Every option this project
// converts is a number (strings never fail). Other errors keep CLI11's words.
inline std::string usage_problem(const CLI::Error& e) {
    const std::string_view what = e.what();
    constexpr std::string_view convert = "Could not convert: ";
    if (what.substr(0, convert.size()) == convert) {
        const std::string_view rest = what.substr(convert.size());
        if (const auto eq = rest.find(" = "); eq != std::string_view::npos) {
            const std::string_view value = rest.substr(eq + 3);
            const bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string_view::npos;
            return fmt::format("{}: '{}{}' is {}", rest.substr(0, eq), value.substr(0, 40), value.size() > 40 ? "..." : "",
                               digits ? "too large a number" : "not a number");
        }
    }
    return std::string(what);
}

// The first word of argv that is not an option or an option's value: the subcommand a person
// typed. `valued` names the main command's options that take a value ("--socket"). "" if none.
inline std::string first_command_word(int argc, char** argv, std::initializer_list<std::string_view> valued) {
    for (int k = 1; k < argc; ++k) {
        const std::string_view a = argv[k];
        if (a.empty() || a[0] != '-') return std::string(a);
        for (const auto v : valued)
            if (a == v) ++k;  // its value is the next word ("--socket=X" is one word)
    }
    return {};
}

}  // namespace acme::util
