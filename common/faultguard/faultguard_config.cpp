#include "common/faultguard/faultguard_config.hpp"

#include <fmt/format.h>

#include "common/util/parse.hpp"

namespace acme::faultguard {

ConfigResult parse_plugstack_args(const std::vector<std::string_view>& args, std::string_view default_rules,
                                  std::string_view default_helper, std::string_view default_labels) {
    ConfigResult result;
    auto& c = result.config;
    c.rules = std::string(default_rules);
    c.helper = std::string(default_helper);
    c.labels = std::string(default_labels);
    auto absolute = [&](const std::string& key, const std::string& value, std::string& out) {
        if (value.empty() || value.front() != '/' || value.size() > 1024) {
            result.errors.push_back(
                fmt::format("faultguard: plugstack argument {}={}: want an absolute path", key, util::printable(value)));
            return;
        }
        out = value;
    };
    for (const auto arg : args) {
        const auto kv = util::split_key_value(arg);
        if (!kv) {
            result.errors.push_back(
                fmt::format("faultguard: plugstack argument \"{}\" is not key=value", util::printable(arg)));
            continue;
        }
        const auto& [key, value] = *kv;
        if (key == "spool") {
            absolute(key, value, c.spool);
        } else if (key == "rules") {
            absolute(key, value, c.rules);
        } else if (key == "labels") {
            absolute(key, value, c.labels);
        } else if (key == "helper") {
            absolute(key, value, c.helper);
        } else if (key == "timeout") {
            const auto v = util::parse_double(value);
            if (!v || *v <= 0 || *v > 600)
                result.errors.push_back(fmt::format("faultguard: plugstack argument timeout={}: want seconds in (0, 600]",
                                                    util::printable(value)));
            else
                c.timeout = *v;
        } else if (key == "admin_comment") {
            const auto v = util::parse_bool(value);
            if (!v)
                result.errors.push_back(fmt::format("faultguard: plugstack argument admin_comment={}: want yes or no",
                                                    util::printable(value)));
            else
                c.admin_comment = *v;
        } else if (key == "log_bytes") {
            const auto v = util::parse_int(value);
            if (!v || *v < 1024 || *v > 64LL * 1024 * 1024)
                result.errors.push_back(fmt::format(
                    "faultguard: plugstack argument log_bytes={}: want bytes in [1024, 67108864]", util::printable(value)));
            else
                c.log_bytes = *v;
        } else {
            result.errors.push_back(fmt::format(
                "faultguard: unknown plugstack argument \"{}\" (known: spool, rules, labels, helper, timeout, log_bytes, admin_comment)",
                util::printable(key)));
        }
    }
    return result;
}

}  // namespace acme::faultguard
