#include "spank/faultguard/core/faultguard_config.hpp"

#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include "common/util/parse.hpp"

namespace acme::faultguard {

ConfigResult parse_plugstack_args(const std::vector<std::string_view>& args, const Defaults& defaults) {
    ConfigResult result;
    auto& c = result.config;
    c.rules = std::string(defaults.rules);
    c.helper = std::string(defaults.helper);
    c.labels = std::string(defaults.labels);
    c.ckpt_finder = std::string(defaults.ckpt_finder);
    c.ckpt_rules = std::string(defaults.ckpt_rules);
    c.gate_helper = std::string(defaults.gate_helper);
    auto seconds = [&](const std::string& key, const std::string& value, double& out) {
        const auto v = util::parse_double(value);
        if (!v || *v <= 0 || *v > 600)
            result.errors.push_back(fmt::format("faultguard: plugstack argument {}={}: want seconds in (0, 600]", key,
                                                util::printable(value)));
        else
            out = *v;
    };
    auto boolean = [&](const std::string& key, const std::string& value, bool& out) {
        const auto v = util::parse_bool(value);
        if (!v)
            result.errors.push_back(
                fmt::format("faultguard: plugstack argument {}={}: want yes or no", key, util::printable(value)));
        else
            out = *v;
    };
    // A number in [lo, hi] (an integer for an integer key); `want` is the error's end, after
    // "want ".
    auto ranged = [&](const std::string& key, const std::string& value, double lo, double hi, std::string_view want,
                      auto& out) {
        using T = std::remove_reference_t<decltype(out)>;
        std::optional<double> v;
        if constexpr (std::is_floating_point_v<T>) {
            v = util::parse_double(value);
        } else if (const auto i = util::parse_int(value)) {
            v = static_cast<double>(*i);
        }
        if (!v || *v < lo || *v > hi)
            result.errors.push_back(
                fmt::format("faultguard: plugstack argument {}={}: want {}", key, util::printable(value), want));
        else
            out = static_cast<T>(*v);
    };
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
            seconds(key, value, c.timeout);
        } else if (key == "admin_comment") {
            boolean(key, value, c.admin_comment);
        } else if (key == "record_retry") {
            ranged(key, value, 0, 86400, "seconds in [0, 86400] (0: no retries before the node's next epilog)", c.record_retry);
        } else if (key == "record_retry_pause") {
            ranged(key, value, 10, 3600, "seconds in [10, 3600]", c.record_retry_pause);
        } else if (key == "ckpt_finder") {
            absolute(key, value, c.ckpt_finder);
        } else if (key == "ckpt_rules") {
            absolute(key, value, c.ckpt_rules);
        } else if (key == "ckpt_timeout") {
            seconds(key, value, c.ckpt_timeout);
        } else if (key == "gpucheck") {
            absolute(key, value, c.gpucheck);
        } else if (key == "health_gate") {
            boolean(key, value, c.health_gate);
        } else if (key == "gate_helper") {
            absolute(key, value, c.gate_helper);
        } else if (key == "gate_timeout") {
            seconds(key, value, c.gate_timeout);
        } else if (key == "gate_resident") {
            ranged(key, value, 0, 86400, "seconds in [0, 86400] (0: a gate process for every job)", c.gate_resident);
        } else if (key == "nvml") {
            if (value.empty() || value.size() > 1024)
                result.errors.push_back("faultguard: plugstack argument nvml=: want a library name or path");
            else
                c.nvml = value;
        } else if (key == "llm_endpoint") {
            if (!(value.starts_with("http://") || value.starts_with("https://")) || value.size() > 1024)
                result.errors.push_back(fmt::format("faultguard: plugstack argument llm_endpoint={}: want https://HOST:PORT (or http://) of an "
                                                    "OpenAI-compatible server on the cluster", util::printable(value)));
            else
                c.llm_endpoint = value;
        } else if (key == "llm_model") {
            bool printable = !value.empty() && value.size() <= 200;
            for (char ch : value) printable = printable && static_cast<unsigned char>(ch) > 0x20 && ch != 0x7f;
            if (!printable)
                result.errors.push_back(fmt::format("faultguard: plugstack argument llm_model={}: want the server's model name",
                                                    util::printable(value)));
            else
                c.llm_model = value;
        } else if (key == "llm_token_file") {
            absolute(key, value, c.llm_token_file);
        } else if (key == "llm_timeout") {
            seconds(key, value, c.llm_timeout);
        } else if (key == "llm_below") {
            ranged(key, value, 0, 1, "a confidence in [0, 1]", c.llm_below);
        } else if (key == "drain_per_user") {
            ranged(key, value, 0, 100000, "a count of nodes in [0, 100000] (0: no limit)", c.drain_per_user);
        } else if (key == "log_bytes") {
            ranged(key, value, 1024, 64.0 * 1024 * 1024, "bytes in [1024, 67108864]", c.log_bytes);
        } else {
            result.errors.push_back(fmt::format(
                "faultguard: unknown plugstack argument \"{}\" (known: spool, rules, labels, helper, timeout, log_bytes, admin_comment, record_retry, record_retry_pause, ckpt_finder, "
                "ckpt_rules, ckpt_timeout, gpucheck, drain_per_user, health_gate, gate_helper, gate_timeout, gate_resident, nvml, llm_endpoint, llm_model, llm_token_file, llm_timeout, llm_below)",
                util::printable(key)));
        }
    }
    if (!c.llm_endpoint.empty() && c.llm_model.empty()) {
        result.errors.push_back("faultguard: plugstack argument llm_endpoint= needs llm_model=: name the server's model");
        c.llm_endpoint.clear();
    }
    // The helper is stopped after timeout=: the model's request must end well before.
    if (!c.llm_endpoint.empty() && c.llm_timeout + 2 > c.timeout) {
        result.errors.push_back(fmt::format("faultguard: plugstack argument llm_timeout={:g}: must be at least 2 s below "
                                            "timeout={:g}: lower it or raise timeout=", c.llm_timeout, c.timeout));
        c.llm_endpoint.clear();
    }
    return result;
}

}  // namespace acme::faultguard
