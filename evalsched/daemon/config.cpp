#include "evalsched/daemon/config.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "evalsched/core/duration.hpp"

namespace acme::evalsched {
namespace {

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(" \t\r");
    return std::string(s.substr(b, e - b + 1));
}

// "64G", "500M", "1T", "123" (bytes, powers of 1000 like df -H: checkpoints are sized so).
std::optional<double> parse_bytes(const std::string& v) {
    if (v.empty()) return std::nullopt;
    std::size_t used = 0;
    double n = 0;
    try {
        n = std::stod(v, &used);
    } catch (...) {
        return std::nullopt;
    }
    std::string unit = v.substr(used);
    double mult = 1;
    if (unit == "" || unit == "B") mult = 1;
    else if (unit == "K") mult = 1e3;
    else if (unit == "M") mult = 1e6;
    else if (unit == "G") mult = 1e9;
    else if (unit == "T") mult = 1e12;
    else return std::nullopt;
    if (!(n > 0)) return std::nullopt;
    return n * mult;
}

}  // namespace

DaemonConfig parse_config(std::string_view text, const std::string& file) {
    DaemonConfig c;
    std::istringstream in{std::string(text)};
    std::string raw;
    int line = 0;
    auto fail = [&](const std::string& what) { throw ConfigError(fmt::format("{}:{}: {}", file, line, what)); };
    while (std::getline(in, raw)) {
        ++line;
        if (auto hash = raw.find('#'); hash != std::string::npos) raw.resize(hash);
        const std::string l = trim(raw);
        if (l.empty()) continue;
        const auto eq = l.find('=');
        if (eq == std::string::npos) fail(fmt::format("'{}' is not key=value: write it as key=value", l));
        const std::string key = trim(std::string_view(l).substr(0, eq));
        const std::string value = trim(std::string_view(l).substr(eq + 1));
        auto seconds = [&]() {
            auto d = parse_duration(value);
            if (!d) fail(fmt::format("{}={} is not a duration: use e.g. 5, 5s, 2m, 1h", key, value));
            return *d;
        };
        auto path = [&]() {
            if (value.empty() || value[0] != '/') fail(fmt::format("{}={} is not an absolute path: give one starting with /", key, value));
            return value;
        };
        if (key == "socket") c.socket = path();
        else if (key == "database") c.database = path();
        else if (key == "results_dir") c.results_dir = path();
        else if (key == "stage_dir") c.stage_dir = path();
        else if (key == "stage_helper") c.stage_helper = path();
        else if (key == "rules_dir") c.rules_dir = path();
        else if (key == "checkpoint_rules") c.checkpoint_rules = path();
        else if (key == "follow_helper") c.follow_helper = path();
        else if (key == "follow_interval" || key == "follow_scan_timeout") {
            const double v = seconds();
            if (v < 1 || v > 3600) fail(fmt::format("{}={} is out of range: use 1s to 1h", key, value));
            (key == "follow_interval" ? c.follow_interval_s : c.follow_scan_timeout_s) = v;
        }
        else if (key == "log_file") c.log_file = path();
        else if (key == "admin_group") c.admin_group = value;
        else if (key == "partition") c.partition = value;
        else if (key == "mode") {
            if (value != "trials" && value != "pilots") fail(fmt::format("mode={} is not a mode: use trials or pilots", value));
            c.pilots = value == "pilots";
        } else if (key == "pilot_max_time") c.pilot_max_s = seconds();
        else if (key == "launch_cost") {
            // 0 is a real answer here (a test cluster without a prolog); parse_duration refuses it.
            const double v = value == "0" || value == "0s" ? 0 : seconds();
            if (v < 0 || v > 600) fail(fmt::format("launch_cost={} is out of range: use 0 to 10m, e.g. 15s", value));
            c.launch_cost_s = v;
        }
        else if (key == "tail_min_piece") c.tail_min_piece_s = seconds();
        else if (key == "serve_ports") {
            int lo = 0, hi = 0, used = 0;
            if (std::sscanf(value.c_str(), "%d-%d%n", &lo, &hi, &used) != 2 || used != static_cast<int>(value.size()) || lo < 1024 || hi > 65535 || hi < lo)
                fail(fmt::format("serve_ports={} is not a port range: use e.g. 20000-20999 (1024-65535)", value.substr(0, 40)));
            c.serve_port_min = lo;
            c.serve_port_max = hi;
        }
        else if (key == "metrics_listen") {
            if (value.find(':') == std::string::npos) fail(fmt::format("metrics_listen={} lacks a port: use host:port, e.g. 127.0.0.1:9817", value));
            c.metrics_listen = value;
        } else if (key == "stage_cache_bytes") {
            auto b = parse_bytes(value);
            if (!b) fail(fmt::format("stage_cache_bytes={} is not a size: use e.g. 64G, 500M", value));
            c.stage_cache_bytes = *b;
        } else if (key == "poll_interval") c.poll_interval_s = seconds();
        else if (key == "change_poll_interval") {
            // Fractions of a second are the point here; parse_duration would round them to whole ones.
            double v = -1;
            std::size_t used = 0;
            std::string number = value;
            if (number.size() > 1 && number.back() == 's') number.pop_back();
            try {
                v = std::stod(number, &used);
            } catch (...) {
                used = 0;
            }
            if (used == 0 || used != number.size() || !(v == 0 || (v >= 0.05 && v <= 60)))
                fail(fmt::format("change_poll_interval={} is out of range: use 0 (off) or 0.05 to 60 seconds, e.g. 0.25", value.substr(0, 40)));
            c.change_poll_interval_s = v;
        }
        else if (key == "bf_window") c.bf_window_s = seconds();
        else if (key == "margin") c.margin_s = seconds();
        else if (key == "request_timeout") {
            c.request_timeout_s = seconds();
            if (!(c.request_timeout_s > 0)) fail(fmt::format("request_timeout={} must be longer than 0: use e.g. 30s", value));
        }
        else if (key == "max_header_bytes" || key == "max_body_bytes") {
            auto b = parse_bytes(value);
            if (!b || *b < 1024 || *b > 1e9) fail(fmt::format("{}={} is not a size from 1K to 1G: use e.g. 64K, 2M", key, value));
            (key == "max_header_bytes" ? c.max_header_bytes : c.max_body_bytes) = *b;
        } else if (key == "max_connections_per_user" || key == "max_datasets" || key == "max_trials" || key == "max_evaluations_per_user") {
            long v = 0;
            std::size_t used = 0;
            try {
                v = std::stol(value, &used);
            } catch (...) {
                used = 0;
            }
            if (used != value.size() || value.empty() || v < 1 || v > 1000000)
                fail(fmt::format("{}={} is out of range: use a whole number 1-1000000", key, value.substr(0, 40)));
            (key == "max_connections_per_user"   ? c.max_connections_per_user
             : key == "max_datasets"             ? c.max_datasets
             : key == "max_evaluations_per_user" ? c.max_evaluations_per_user
                                                 : c.max_trials) = static_cast<int>(v);
        }
        else if (key == "margin_fraction" || key == "max_attempts") {
            double v = 0;
            std::size_t used = 0;
            try {
                v = std::stod(value, &used);
            } catch (...) {
                used = 0;
            }
            if (used != value.size() || value.empty() || v < 0 || (key == "max_attempts" && (v < 1 || v > 20 || v != static_cast<int>(v))))
                fail(fmt::format("{}={} is out of range: use {}", key, value, key == "max_attempts" ? "a whole number 1-20" : "a fraction such as 0.2"));
            if (key == "max_attempts") c.max_attempts = static_cast<int>(v);
            else c.margin_fraction = v;
        } else {
            fail(fmt::format("unknown key '{}': use one of socket, database, results_dir, admin_group, stage_dir, "
                             "stage_cache_bytes, stage_helper, rules_dir, partition, metrics_listen, log_file, "
                             "poll_interval, change_poll_interval, bf_window, max_attempts, margin, margin_fraction, request_timeout, max_header_bytes, "
                             "max_body_bytes, max_connections_per_user, max_datasets, max_trials, max_evaluations_per_user, checkpoint_rules, follow_helper, follow_interval, follow_scan_timeout, mode, pilot_max_time, launch_cost, serve_ports, tail_min_piece", key));
        }
    }
    return c;
}

DaemonConfig load_config(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw ConfigError(fmt::format("{}: cannot read the configuration file: create it or pass --config", path));
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_config(ss.str(), path);
}

}  // namespace acme::evalsched
