#include "spank/gputrace/core/idle.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/util/parse.hpp"
#include "spank/gputrace/core/stall.hpp"

namespace acme::telemetry {
namespace {

constexpr double kMaxLimit = 7 * 86400.0;  // a week: beyond any job a site lets hold GPUs

// "30" (minutes), "0.5" (minutes), "90s" (seconds: the cluster tests' short limits), "off" or 0.
void set_limit(std::string_view key, const std::string& value, double& out, std::vector<std::string>& errors) {
    if (value == "off") {
        out = 0;
        return;
    }
    std::string_view number = value;
    double scale = 60;
    if (!number.empty() && number.back() == 's') {
        number.remove_suffix(1);
        scale = 1;
    }
    const auto v = util::parse_double(number);
    if (!v || !std::isfinite(*v) || *v < 0 || *v * scale > kMaxLimit || (*v > 0 && *v * scale < 1)) {
        errors.push_back(fmt::format("gputrace: plugstack argument {}={}: want minutes (30), seconds with s (90s), "
                                     "or off; at least 1 s, at most 7 days",
                                     key, util::printable(value)));
        return;
    }
    out = *v * scale;
}

void set_names(std::string_view key, const std::string& value, std::vector<std::string>& out,
               std::vector<std::string>& errors) {
    std::vector<std::string> names;
    for (auto& n : util::split_list(value)) {
        if (n.empty()) continue;
        if (n.size() > 256 || n.find_first_of(" \t\n=") != std::string::npos) {
            errors.push_back(fmt::format("gputrace: plugstack argument {}={}: want comma-separated names", key,
                                         util::printable(value)));
            return;
        }
        names.push_back(std::move(n));
    }
    out = std::move(names);
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
    return out;
}

bool listed(const std::vector<std::string>& names, std::string_view name) {
    return !name.empty() && std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

bool set_idle_key(std::string_view key, const std::string& value, IdleConfig& c, std::vector<std::string>& errors) {
    if (key == "idle_alert") {
        set_limit(key, value, c.alert, errors);
    } else if (key == "idle_cancel") {
        set_limit(key, value, c.cancel, errors);
    } else if (key == "idle_util") {
        const auto v = util::parse_double(value);
        if (v && *v >= 0 && *v <= 100) c.util = *v;
        else errors.push_back(fmt::format("gputrace: plugstack argument idle_util={}: want a percentage in [0, 100]",
                                          util::printable(value)));
    } else if (key == "idle_exempt_partitions") {
        set_names(key, value, c.exempt_partitions, errors);
    } else if (key == "idle_exempt_qos") {
        set_names(key, value, c.exempt_qos, errors);
    } else if (key == "idle_exempt_accounts") {
        set_names(key, value, c.exempt_accounts, errors);
    } else {
        return false;
    }
    return true;
}

std::vector<std::string> idle_words(const IdleConfig& c) {
    std::vector<std::string> w = {
        c.alert > 0 ? fmt::format("idle_alert={}s", c.alert) : "idle_alert=off",
        c.cancel > 0 ? fmt::format("idle_cancel={}s", c.cancel) : "idle_cancel=off",
        fmt::format("idle_util={}", c.util),
    };
    if (!c.exempt_partitions.empty()) w.push_back("idle_exempt_partitions=" + joined(c.exempt_partitions));
    if (!c.exempt_qos.empty()) w.push_back("idle_exempt_qos=" + joined(c.exempt_qos));
    if (!c.exempt_accounts.empty()) w.push_back("idle_exempt_accounts=" + joined(c.exempt_accounts));
    return w;
}

std::optional<std::string> idle_exempt(const IdleConfig& c, std::string_view partition, std::string_view qos,
                                       std::string_view account) {
    if (listed(c.exempt_partitions, partition)) return fmt::format("partition {}", partition);
    if (listed(c.exempt_qos, qos)) return fmt::format("QOS {}", qos);
    if (listed(c.exempt_accounts, account)) return fmt::format("account {}", account);
    return std::nullopt;
}

bool sample_idle(const IdleSample& s, const IdleConfig& c) {
    if (s.job_process == false) return true;
    return s.util && *s.util <= c.util;
}

void IdleTracker::on_sample(const IdleSample& s, double now) {
    auto& g = gpus_[s.gpu];
    if (!sample_idle(s, c_)) {
        g = Gpu{};  // in use: the spell ends, and a later one alerts again
        return;
    }
    if (!g.idle_since) g.idle_since = now;
}

double IdleTracker::idle_for(int gpu, double now) const {
    const auto it = gpus_.find(gpu);
    if (it == gpus_.end() || !it->second.idle_since) return 0;
    return std::max(0.0, now - *it->second.idle_since);
}

bool IdleTracker::alerted(int gpu) const {
    const auto it = gpus_.find(gpu);
    return it != gpus_.end() && it->second.alerted;
}

std::vector<int> IdleTracker::gpus() const {
    std::vector<int> out;
    for (const auto& [gpu, g] : gpus_) out.push_back(gpu);
    return out;
}

IdleDecision IdleTracker::decide(double now) {
    IdleDecision d;
    if (c_.alert > 0)
        for (auto& [gpu, g] : gpus_) {
            if (g.alerted || !g.idle_since || now - *g.idle_since < c_.alert) continue;
            g.alerted = true;
            d.alert.push_back(gpu);
            d.idle_for = std::max(d.idle_for, now - *g.idle_since);
        }
    if (c_.cancel > 0 && !cancelled_ && !gpus_.empty()) {
        double shortest = kMaxLimit * 2;
        for (const auto& [gpu, g] : gpus_) shortest = std::min(shortest, g.idle_since ? now - *g.idle_since : -1.0);
        if (shortest >= c_.cancel) {
            cancelled_ = true;
            d.cancel = true;
            d.idle_for = shortest;
        }
    }
    return d;
}

std::string idle_reason(const std::vector<int>& gpus, double idle_for, const IdleConfig& c) {
    std::string ids;
    for (int g : gpus) ids += (ids.empty() ? "" : ",") + std::to_string(g);
    const std::string span = idle_for >= 120 ? fmt::format("{:.0f} min", std::floor(idle_for / 60))
                                             : fmt::format("{:.0f} s", idle_for);
    return fmt::format("GPU{} {} held but idle for {} (utilisation <= {:g} %, or no process of the job)",
                       gpus.size() == 1 ? "" : "s", ids.empty() ? "-" : ids, span, c.util);
}

std::vector<std::string> idle_mail_argv(const std::string& mail_prog, const std::string& recipient, long long job_id,
                                        std::string_view job_name, std::string_view node, const std::string& reason) {
    return {mail_prog, "-s",
            fmt::format("Slurm Job_id={} Name={} GPUs held but idle on {}: {}", job_id, mail_job_name(job_name),
                        mail_job_name(node), reason),
            recipient};
}

}  // namespace acme::telemetry
