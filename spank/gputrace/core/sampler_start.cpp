#include "spank/gputrace/core/sampler_start.hpp"

#include <fmt/format.h>

#include "common/util/parse.hpp"
#include "spank/gputrace/core/idle.hpp"
#include "spank/gputrace/core/stall.hpp"
#include "spank/gputrace/core/textfile_writer.hpp"

namespace acme::telemetry {
namespace {

constexpr std::size_t kMaxPlugstackWords = 256;

bool has_control(std::string_view v) {
    for (const char c : v)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
    return false;
}

std::optional<long long> ranged_int(std::string_view v, long long lo, long long hi) {
    const auto n = util::parse_int(v);
    if (!n || *n < lo || *n > hi) return std::nullopt;
    return static_cast<long long>(*n);
}

// A Slurm node name as a spool file name takes it: printable, no '/'.
bool node_name_ok(std::string_view v) {
    return !v.empty() && v.size() <= 255 && v.find('/') == std::string_view::npos && !has_control(v);
}

bool sluid_ok(std::string_view v) {
    if (v.empty() || v.size() > 64) return false;
    for (const char c : v)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
            return false;
    return true;
}

bool absolute_path_ok(std::string_view v) {
    return !v.empty() && v.front() == '/' && v.size() <= 1024 && !has_control(v);
}

}  // namespace

std::optional<SamplerStartArgs> parse_sampler_start_args(const std::vector<std::string_view>& words,
                                                         std::string& error) {
    SamplerStartArgs a;
    bool job = false, uid = false, gid = false, node = false, gpus = false, auto_recover = false, restart = false,
         ckpt = false, sluid = false, conf = false;
    const auto once = [&](bool& seen, std::string_view key) {
        if (seen) error = fmt::format("{} given twice", key);
        return !std::exchange(seen, true);
    };
    if (words.size() % 2 != 0) {
        error = fmt::format("{} has no value", util::printable(words.back()));
        return std::nullopt;
    }
    for (std::size_t i = 0; i < words.size(); i += 2) {
        const auto key = words[i];
        const auto value = words[i + 1];
        const auto bad = [&](std::string_view want) {
            error = fmt::format("{} {}: want {}", key, util::printable(value), want);
            return std::nullopt;
        };
        if (key == "--job") {
            if (!once(job, key)) return std::nullopt;
            const auto v = ranged_int(value, 1, 0xfffffffeLL);
            if (!v) return bad("a job id");
            a.job = *v;
        } else if (key == "--uid" || key == "--gid") {
            if (!once(key == "--uid" ? uid : gid, key)) return std::nullopt;
            const auto v = ranged_int(value, 0, 0xfffffffeLL);
            if (!v) return bad("a numeric id");
            (key == "--uid" ? a.uid : a.gid) = *v;
        } else if (key == "--node") {
            if (!once(node, key)) return std::nullopt;
            if (!node_name_ok(value)) return bad("a node name without '/'");
            a.node = value;
        } else if (key == "--gpus") {
            if (!once(gpus, key)) return std::nullopt;
            if (!util::parse_id_list(value)) return bad("a GPU id list");
            a.gpus = value;
        } else if (key == "--telemetry") {
            if (a.telemetry) return error = "--telemetry given twice", std::nullopt;
            // parse_telemetry_value judges it; only its size and form are checked here.
            if (value.size() > 64 || has_control(value)) return bad("a --gpu-telemetry value");
            a.telemetry = std::string(value);
        } else if (key == "--auto-recover") {
            if (!once(auto_recover, key)) return std::nullopt;
            if (value != "yes") return bad("yes");
            a.auto_recover = true;
        } else if (key == "--ckpt-dir") {
            // The user's directory: the sampler reads it as the job's user (stall.hpp).
            if (!once(ckpt, key)) return std::nullopt;
            if (value.empty() || value.size() > 4096 || has_control(value)) return bad("a directory");
            a.ckpt_dir = value;
        } else if (key == "--restart") {
            if (!once(restart, key)) return std::nullopt;
            const auto v = ranged_int(value, 0, 1000000);
            if (!v) return bad("a restart count");
            a.restart = *v;
        } else if (key == "--sluid") {
            if (!once(sluid, key)) return std::nullopt;
            if (!sluid_ok(value)) return bad("a Slurm SLUID");
            a.sluid = value;
        } else if (key == "--slurm-conf") {
            if (!once(conf, key)) return std::nullopt;
            if (!absolute_path_ok(value)) return bad("an absolute path");
            a.slurm_conf = value;
        } else if (key == "--arg") {
            if (a.plugstack.size() >= kMaxPlugstackWords || value.size() > 4096) return bad("a plugstack argument");
            a.plugstack.emplace_back(value);
        } else {
            error = fmt::format("unknown argument {}", util::printable(key));
            return std::nullopt;
        }
    }
    if (!job || !uid || !gid || !node || !gpus) {
        error = "--job, --uid, --gid, --node and --gpus are required";
        return std::nullopt;
    }
    return a;
}

std::optional<SamplerLaunch> sampler_launch(const SamplerStartArgs& a, const GputraceConfig& config,
                                            std::vector<std::string>& notes) {
    std::optional<TelemetryRequest> from_flag;
    if (a.telemetry) {
        std::string error;
        from_flag = parse_telemetry_value(*a.telemetry, config, "--gpu-telemetry", error);
        // Validated at submission; a value refused now means the admin tightened the bounds since.
        if (!from_flag) notes.push_back(fmt::format("{}; tracing with the cluster's interval", error));
        if (!from_flag) from_flag = TelemetryRequest{true, std::nullopt};
    }
    // A job that asked faultguard for recovery needs its GPU events to find the faulty node.
    if (!from_flag && a.auto_recover) from_flag = TelemetryRequest{true, std::nullopt};
    const auto request = effective_request(from_flag, std::nullopt, config);
    if (!request.enabled) return std::nullopt;

    SamplerLaunch l;
    l.interval = request.interval.value_or(config.interval);
    l.argv = {
        config.sampler,
        "--job", std::to_string(a.job),
        "--node", a.node,
        "--gpus", a.gpus,
        "--interval", fmt::format("{}", l.interval),
        "--spool", config.spool,
        "--nvml", config.nvml,
        "--uid", std::to_string(a.uid),
        "--gid", std::to_string(a.gid),
        "--watch-interval", fmt::format("{}", config.watch_interval),
        "--call-timeout", fmt::format("{}", config.call_timeout),
    };
    // The stall keys also carry stall_mail, which the held-but-idle alert mails through.
    if (config.stall.enabled || config.idle.on())
        for (const auto& word : stall_words(config.stall)) l.argv.insert(l.argv.end(), {"--stall", word});
    if (config.idle.on())
        for (const auto& word : idle_words(config.idle)) l.argv.insert(l.argv.end(), {"--idle", word});
    if (config.stall.enabled) {
        // Stall detection: what the sampler needs to judge and act.
        l.argv.insert(l.argv.end(), {"--restart", std::to_string(a.restart)});
        if (a.auto_recover) l.argv.push_back("--auto-recover");
        if (!a.ckpt_dir.empty()) l.argv.insert(l.argv.end(), {"--ckpt-dir", a.ckpt_dir});
    }
    if (!config.textfile_dir.empty())
        l.argv.insert(l.argv.end(), {"--textfile-dir", expand_textfile_dir(config.textfile_dir, a.node)});
    if (!config.textfile_dir.empty() && config.textfile_job_labels) l.argv.push_back("--textfile-job-labels");
    // Slurm 26.05+: the id Slurm never hands out again, so the spool tells this job from an
    // older one that had its id.
    if (!a.sluid.empty()) l.argv.insert(l.argv.end(), {"--sluid", a.sluid});
    // Only what the sampler needs: libslurm finds slurmctld through SLURM_CONF.
    l.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURMD_NODENAME=" + a.node};
    if (!a.slurm_conf.empty()) l.env.push_back("SLURM_CONF=" + a.slurm_conf);
    return l;
}

}  // namespace acme::telemetry
