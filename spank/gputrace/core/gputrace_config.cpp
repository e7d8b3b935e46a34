#include "spank/gputrace/core/gputrace_config.hpp"

#include <fmt/format.h>

#include "common/util/parse.hpp"

namespace acme::telemetry {
namespace {

bool set_seconds(std::string_view key, const std::string& value, double& out, std::vector<std::string>& errors) {
    const auto v = util::parse_double(value);
    if (!v || *v <= 0 || *v > 86400) {
        errors.push_back(fmt::format("gputrace: plugstack argument {}={}: want seconds in (0, 86400]", key,
                                     util::printable(value)));
        return false;
    }
    out = *v;
    return true;
}

bool set_path(std::string_view key, const std::string& value, std::string& out, std::vector<std::string>& errors) {
    if (value.empty() || value.size() > 1024) {
        errors.push_back(fmt::format("gputrace: plugstack argument {}=: want a path", key));
        return false;
    }
    out = value;
    return true;
}

}  // namespace

ConfigResult parse_plugstack_args(const std::vector<std::string_view>& args, std::string_view default_sampler) {
    ConfigResult result;
    auto& c = result.config;
    c.sampler = std::string(default_sampler);
    for (const auto arg : args) {
        const auto kv = util::split_key_value(arg);
        if (!kv) {
            result.errors.push_back(fmt::format("gputrace: plugstack argument \"{}\" is not key=value", util::printable(arg)));
            continue;
        }
        const auto& [key, value] = *kv;
        if (key == "default") {
            if (value == "on" || value == "off") {
                c.default_on = value == "on";
            } else {
                result.errors.push_back(fmt::format("gputrace: plugstack argument default={}: want on or off", util::printable(value)));
            }
        } else if (key == "interval") {
            set_seconds(key, value, c.interval, result.errors);
        } else if (key == "min_interval") {
            set_seconds(key, value, c.min_interval, result.errors);
        } else if (key == "max_interval") {
            set_seconds(key, value, c.max_interval, result.errors);
        } else if (key == "start_wait") {
            // 0 is allowed: the sampler opens the spool and NVML at once, as before.
            const auto v = util::parse_double(value);
            if (!v || *v < 0 || *v > 600)
                result.errors.push_back(fmt::format("gputrace: plugstack argument start_wait={}: want seconds in [0, 600]",
                                                    util::printable(value)));
            else
                c.start_wait = *v;
        } else if (key == "stop_timeout") {
            set_seconds(key, value, c.stop_timeout, result.errors);
        } else if (key == "watch_interval") {
            set_seconds(key, value, c.watch_interval, result.errors);
        } else if (key == "call_timeout") {
            set_seconds(key, value, c.call_timeout, result.errors);
        } else if (key == "spool") {
            if (value.empty() || value.front() != '/')
                result.errors.push_back(fmt::format("gputrace: plugstack argument spool={}: want an absolute directory", util::printable(value)));
            else
                set_path(key, value, c.spool, result.errors);
        } else if (key == "textfile_dir") {
            // Empty turns it off (a site that copied the example line and blanked it).
            if (!value.empty() && value.front() != '/')
                result.errors.push_back(fmt::format(
                    "gputrace: plugstack argument textfile_dir={}: want an absolute directory (or empty: off)",
                    util::printable(value)));
            else if (value.size() > 1024)
                result.errors.push_back("gputrace: plugstack argument textfile_dir=: path too long");
            else
                c.textfile_dir = value;
        } else if (key == "textfile_job_labels") {
            if (value == "yes" || value == "no")
                c.textfile_job_labels = value == "yes";
            else
                result.errors.push_back(fmt::format("gputrace: plugstack argument textfile_job_labels={}: want yes or no",
                                                    util::printable(value)));
        } else if (key == "nvml") {
            set_path(key, value, c.nvml, result.errors);
        } else if (key == "sampler") {
            if (value.empty() || value.front() != '/')
                result.errors.push_back(fmt::format("gputrace: plugstack argument sampler={}: want an absolute path", util::printable(value)));
            else
                set_path(key, value, c.sampler, result.errors);
        } else if (set_stall_key(key, value, c.stall, result.errors)) {
        } else if (set_idle_key(key, value, c.idle, result.errors)) {
        } else {
            result.errors.push_back(fmt::format(
                "gputrace: unknown plugstack argument \"{}\" (known: default, interval, min_interval, max_interval, "
                "spool, nvml, sampler, start_wait, stop_timeout, watch_interval, call_timeout, textfile_dir, textfile_job_labels, stall, stall_*, heartbeat_dir, idle_*)",
                util::printable(key)));
        }
    }
    if (c.min_interval > c.max_interval) {
        result.errors.push_back(fmt::format("gputrace: min_interval={} is above max_interval={}; using {} for both",
                                            c.min_interval, c.max_interval, c.max_interval));
        c.min_interval = c.max_interval;
    }
    if (c.interval < c.min_interval || c.interval > c.max_interval) {
        const double clamped = c.interval < c.min_interval ? c.min_interval : c.max_interval;
        result.errors.push_back(fmt::format("gputrace: interval={} is outside [min_interval, max_interval]; using {}",
                                            c.interval, clamped));
        c.interval = clamped;
    }
    return result;
}

std::optional<TelemetryRequest> parse_telemetry_value(std::string_view value, const GputraceConfig& config,
                                                      std::string_view source, std::string& error) {
    if (value.empty() || value == "on") return TelemetryRequest{true, std::nullopt};
    if (value == "off") return TelemetryRequest{false, std::nullopt};
    const auto seconds = util::parse_double(value);
    const std::string shown = util::printable(value, 40);
    if (!seconds) {
        error = fmt::format("gputrace: {}={}: want a sampling interval in seconds, or off", source, shown);
        return std::nullopt;
    }
    if (*seconds <= 0) {
        error = fmt::format("gputrace: {}={}: the interval must be positive (or use off)", source, shown);
        return std::nullopt;
    }
    if (*seconds < config.min_interval) {
        error = fmt::format("gputrace: {}={}: below this cluster's minimum interval of {} s", source, shown,
                            config.min_interval);
        return std::nullopt;
    }
    if (*seconds > config.max_interval) {
        error = fmt::format("gputrace: {}={}: above this cluster's maximum interval of {} s", source, shown,
                            config.max_interval);
        return std::nullopt;
    }
    return TelemetryRequest{true, *seconds};
}

TelemetryRequest effective_request(const std::optional<TelemetryRequest>& from_flag,
                                   const std::optional<TelemetryRequest>& from_env, const GputraceConfig& config) {
    if (from_flag) return *from_flag;
    if (from_env) return *from_env;
    return TelemetryRequest{config.default_on, std::nullopt};
}

}  // namespace acme::telemetry
