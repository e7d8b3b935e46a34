#include "acct/gpuacct/core/job_detail.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "acct/gpuacct/core/sacct_time.hpp"

namespace acme::acct {
namespace {

// Energy in the job view: the digits of the table's GPUEnergy cell (two decimals unless whole,
// base 1000), with its SI unit: 22.53K there is 22.53kJ here.
std::string energy_text(double joules) {
    static constexpr std::string_view kPrefix = " kMGTP";
    size_t p = 0;
    while (std::fabs(joules) >= 1000 && p + 1 < kPrefix.size()) {
        joules /= 1000;
        ++p;
    }
    const std::string unit = (kPrefix[p] == ' ' ? std::string() : std::string(1, kPrefix[p])) + "J";
    return joules == std::floor(joules) ? fmt::format("{:.0f}{}", joules, unit) : fmt::format("{:.2f}{}", joules, unit);
}

// GiB with one decimal; below 1 GiB in MiB, so a small use does not read as none.
std::string gib(std::int64_t bytes) {
    const double b = static_cast<double>(bytes);
    if (b < 1024.0 * 1024 * 1024) return fmt::format("{:.0f}MiB", b / (1024.0 * 1024));
    return fmt::format("{:.1f}GiB", b / (1024.0 * 1024 * 1024));
}

std::string pct(std::optional<double> v) { return v ? fmt::format("{:.1f}%", *v) : std::string("-"); }

std::optional<double> mem_pct(const DetailGpu& g) {
    if (!g.mem_max || !g.mem_total || *g.mem_total <= 0) return std::nullopt;
    return 100.0 * static_cast<double>(*g.mem_max) / static_cast<double>(*g.mem_total);
}

// jobstats' bar: 50 characters of '|' for 100 percent.
std::string heading(std::string_view title) {
    std::string h = fmt::format("{:^80}", title);
    while (!h.empty() && h.back() == ' ') h.pop_back();
    return h;
}

std::string bar(double percent) {
    const int n = static_cast<int>(std::lround(std::clamp(percent, 0.0, 100.0) / 2));
    return fmt::format("[{:<50}{:>4.0f}%]", std::string(static_cast<size_t>(n), '|'), percent);
}

bool has_data(const DetailGpu& g) { return g.samples > 0 && g.util_avg && g.util_max; }

std::string gpu_label(const DetailGpu& g) { return fmt::format("{} GPU {}", g.node, g.gpu); }

std::string list_of(const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += i + 1 == items.size() ? " and " : ", ";
        out += items[i];
    }
    return out;
}

struct Overall {
    std::optional<double> util, mem_pct;
};

Overall overall(const JobDetail& job) {
    Overall o;
    double util = 0, mem = 0;
    int n_util = 0, n_mem = 0;
    for (const auto& g : job.gpus) {
        if (has_data(g)) {
            util += *g.util_avg;
            ++n_util;
        }
        if (const auto m = mem_pct(g)) {
            mem += *m;
            ++n_mem;
        }
    }
    if (n_util) o.util = util / n_util;
    if (n_mem) o.mem_pct = mem / n_mem;
    return o;
}

}  // namespace

std::optional<DetailThresholds> parse_detail_config(std::string_view toml_text, std::string& error) {
    DetailThresholds t;
    error.clear();
    // gpuacct.toml holds one table of numbers, so each line must be blank, a comment, [detail]
    // or KEY = NUMBER before toml++ sees it: Debian's toml++ 3.3 aborts or reaches undefined
    // behaviour on some malformed inputs (a '[' not followed by a key, a NUL, some non-ASCII
    // whitespace; found by tests/fuzz/gpuacct-args-fuzz, as evalsched/core/suite.cpp notes).
    {
        size_t line = 1;
        std::string_view rest = toml_text;
        while (!rest.empty() || line == 1) {
            const auto nl = rest.find('\n');
            std::string_view l = rest.substr(0, nl);
            rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
            if (const auto hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
            auto trim = [](std::string_view v) {
                while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
                while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.remove_suffix(1);
                return v;
            };
            l = trim(l);
            bool ok = l.empty();
            if (!ok && l.front() == '[') {
                std::string_view inner = l.substr(1);
                ok = !inner.empty() && inner.back() == ']' && trim(inner.substr(0, inner.size() - 1)) == "detail";
            } else if (!ok) {
                const auto eq = l.find('=');
                const std::string_view k = eq == std::string_view::npos ? l : trim(l.substr(0, eq));
                const std::string_view v = eq == std::string_view::npos ? std::string_view() : trim(l.substr(eq + 1));
                ok = eq != std::string_view::npos && !k.empty() && !v.empty() &&
                     std::all_of(k.begin(), k.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; }) &&
                     std::all_of(v.begin(), v.end(), [](char c) { return (c >= '0' && c <= '9') || std::string_view("+-._eE").find(c) != std::string_view::npos; });
            }
            if (!ok) {
                error = fmt::format("line {}: not [detail] or KEY = NUMBER (man gpuacct(1), JOB VIEW)", line);
                return std::nullopt;
            }
            ++line;
            if (nl == std::string_view::npos) break;
        }
    }
    toml::table root;
    try {
        root = toml::parse(toml_text);
    } catch (const toml::parse_error& e) {
        error = fmt::format("line {}: {}", e.source().begin.line, std::string(e.description()).substr(0, 200));
        std::replace(error.begin(), error.end(), '\n', ' ');
        return std::nullopt;
    }
    for (const auto& [key, node] : root) {
        if (key.str() != "detail") {
            error = fmt::format("unknown table or key \"{}\" (gpuacct.toml has only [detail])", std::string(key.str()).substr(0, 64));
            return std::nullopt;
        }
    }
    const toml::node* detail = root.get("detail");
    if (!detail) return t;
    if (!detail->is_table()) {
        error = "\"detail\" must be a table: write [detail]";
        return std::nullopt;
    }
    struct Key {
        std::string_view name;
        double* slot;
        double lo, hi;
    };
    const Key keys[] = {{"idle_util_max", &t.idle_util_max, 0, 100},   {"low_util_mean", &t.low_util_mean, 0, 100},
                        {"mem_low_pct", &t.mem_low_pct, 0, 100},       {"time_low_pct", &t.time_low_pct, 0, 100},
                        {"min_elapsed_s", &t.min_elapsed_s, 0, 1e9}};
    for (const auto& [key, node] : *detail->as_table()) {
        const Key* k = nullptr;
        for (const auto& c : keys)
            if (c.name == key.str()) k = &c;
        if (!k) {
            error = fmt::format("[detail]: unknown key \"{}\" (known: idle_util_max, low_util_mean, mem_low_pct, "
                                "time_low_pct, min_elapsed_s)",
                                std::string(key.str()).substr(0, 64));
            return std::nullopt;
        }
        const auto v = node.value<double>();
        if (!v || !std::isfinite(*v) || *v < k->lo || *v > k->hi) {
            error = fmt::format("[detail] {}: give a number from {:g} to {:g}", k->name, k->lo, k->hi);
            return std::nullopt;
        }
        *k->slot = *v;
    }
    return t;
}

std::vector<std::string> efficiency_notes(const JobDetail& job, const DetailThresholds& t) {
    std::vector<std::string> notes;
    if (job.start <= 0 || job.elapsed_s < t.min_elapsed_s) return notes;
    std::vector<std::string> idle, low, small_mem;
    std::optional<std::int64_t> mem_total;
    double mem_pct_max = 0;
    int with_data = 0;
    for (const auto& g : job.gpus) {
        if (!has_data(g)) continue;
        ++with_data;
        if (*g.util_max <= t.idle_util_max) idle.push_back(gpu_label(g));
        else if (*g.util_avg < t.low_util_mean) low.push_back(fmt::format("{} ({:.0f}%)", gpu_label(g), *g.util_avg));
        if (const auto m = mem_pct(g)) {
            if (*m < t.mem_low_pct) small_mem.push_back(gpu_label(g));
            mem_pct_max = std::max(mem_pct_max, *m);
            mem_total = g.mem_total;
        }
    }
    if (!idle.empty())
        notes.push_back(fmt::format("{} of the job's {} GPUs with data never went above {:g}% utilisation ({}): "
                                    "{}. Ask only for the GPUs the code uses (--gres=gpu:N), or check that it "
                                    "sees them all (CUDA_VISIBLE_DEVICES, the framework's device list).",
                                    idle.size(), with_data, t.idle_util_max, list_of(idle),
                                    idle.size() == 1 ? "it was idle" : "they were idle"));
    if (!low.empty())
        notes.push_back(fmt::format("GPU utilisation was below {:g}% on average on {}. Data loading or CPU work may "
                                    "be holding the GPUs back: more data-loader workers, larger batches, or fewer GPUs.",
                                    t.low_util_mean, list_of(low)));
    if (!small_mem.empty() && small_mem.size() == static_cast<size_t>(with_data) && mem_total)
        notes.push_back(fmt::format("The job used at most {:.0f}% of the {} of memory on each GPU. A GPU with less "
                                    "memory (or a MIG slice) would do, and would leave this one to jobs that need it.",
                                    mem_pct_max, gib(*mem_total)));
    else if (!small_mem.empty())
        notes.push_back(fmt::format("Memory stayed below {:g}% of the GPU's on {}.", t.mem_low_pct, list_of(small_mem)));
    if (job.time_limit_s && *job.time_limit_s > 0 && job.end > 0) {
        const double used = 100.0 * job.elapsed_s / *job.time_limit_s;
        if (used < t.time_low_pct) {
            // jobstats' advice: the run time with some headroom, rounded up to the hour.
            const double ask = std::max(3600.0, std::ceil(job.elapsed_s * 1.2 / 3600.0) * 3600.0);
            notes.push_back(fmt::format("The job ran {} of its {} time limit ({:.0f}%). A limit closer to what it "
                                        "needs (e.g. --time={}) lets the scheduler start it sooner, in backfill.",
                                        format_elapsed(job.elapsed_s), format_elapsed(*job.time_limit_s), used,
                                        format_elapsed(ask)));
        }
    }
    for (const auto& n : job.slowness)
        if (n.score >= record::kStragglerNote)
            notes.push_back(fmt::format("{} was a straggler: slowness {:.2f} ({} {:.0f}% against the typical node's "
                                        "{:.0f}%). Every step of a synchronous job waits for its slowest node: check "
                                        "{}'s GPUs and links (gpucheck), or leave it out (--exclude={}).",
                                        n.node, n.score, n.signal, n.work, n.typical, n.node, n.node));
    if (with_data == 0 && job.alloc_gpus > 0)
        notes.push_back(job.telemetry_error.empty()
                            ? std::string("No GPU telemetry was recorded for this job: nothing to judge its GPUs by "
                                          "(was it run with --gpu-telemetry?).")
                            : fmt::format("No GPU telemetry was recorded for this job: {}.", job.telemetry_error));
    return notes;
}

std::string stall_text(const DetailStall& s) {
    std::string named = s.named.empty() ? std::string("no node stood out")
                                        : fmt::format("node {} named{}", s.named, s.hardware ? " on GPU evidence" : " (timing only)");
    return fmt::format("no progress since {}, {}: {}; action: {}", s.since > 0 ? format_sacct_time(s.since) : std::string("-"), named,
                       s.evidence.empty() ? std::string("-") : s.evidence, s.action.empty() ? "none" : s.action);
}

std::string render_detail(const JobDetail& job, const DetailThresholds& t) {
    const std::string rule(80, '=');
    std::string out;
    auto line = [&](std::string_view label, const std::string& value) { out += fmt::format("{:>15}: {}\n", label, value); };
    out += rule + "\n" + heading("GPU Job Statistics (gpuacct)") + "\n" + rule + "\n";
    line("Job ID", std::to_string(job.job_id));
    line("User/Account", fmt::format("{}/{}", job.user.empty() ? "-" : job.user, job.account.empty() ? "-" : job.account));
    line("Job Name", job.name.empty() ? "-" : job.name);
    line("Type", job.job_type.empty() ? "-" : job.job_type);
    line("State", job.state.empty() ? (job.end > 0 ? "UNKNOWN" : "RUNNING") : job.state);
    line("Partition", job.partition.empty() ? "-" : job.partition);
    line("Nodes", job.nodelist.empty() ? "-" : job.nodelist);
    line("GPUs", std::to_string(job.alloc_gpus));
    line("Start Time", job.start > 0 ? format_sacct_time(job.start) : "-");
    line("Run Time", format_elapsed(job.elapsed_s) + (job.start > 0 && job.end <= 0 ? " (in progress)" : ""));
    std::string limit = job.time_limit_unlimited ? "UNLIMITED" : job.time_limit_s ? format_elapsed(*job.time_limit_s) : "unknown";
    if (job.time_limit_s && *job.time_limit_s > 0)
        limit += fmt::format(" ({:.0f}% used)", 100.0 * job.elapsed_s / *job.time_limit_s);
    line("Time Limit", limit);
    for (const auto& st : job.stalls)
        line(st.withdrawn ? "Stall withdrawn" : "Stalled",
             (job.stalls.size() > 1 || st.restart > 0 ? fmt::format("run {}: ", st.restart) : std::string()) + stall_text(st));

    if (job.failure || !job.recovery.empty()) {
        out += "\n" + heading("Failure") + "\n" + rule + "\n";
        if (const auto& f = job.failure) {
            out += fmt::format("  cause:    {} ({}), confidence {:.2f}{}{}\n", f->reason.empty() ? "unknown" : f->reason,
                               f->category.empty() ? "unknown" : f->category, f->confidence,
                               f->rule.empty() ? std::string() : ", rule " + f->rule,
                               f->node.empty() ? std::string() : fmt::format(", diagnosed on {}{}", f->node,
                                                                              f->restart > 0 ? fmt::format(" (run {})", f->restart) : ""));
            if (f->evidence.empty()) out += "  evidence: (none kept)\n";
            for (size_t k = 0; k < f->evidence.size(); ++k) out += fmt::format("  {:<9} {}\n", k ? "" : "evidence:", f->evidence[k]);
            out += fmt::format("  action:   {}\n", f->action.empty() ? "none" : f->action);
        }
        for (size_t k = 0; k < job.recovery.size(); ++k) out += fmt::format("  {:<9} {}\n", k ? "" : "recovery:", job.recovery[k]);
        if (job.failure && job.recovery.empty()) out += "  recovery: none taken\n";
    }

    const Overall o = overall(job);
    out += "\n" + heading("Overall Utilization") + "\n" + rule + "\n";
    out += fmt::format("  GPU utilization  {}\n", o.util ? bar(*o.util) : std::string("(no data)"));
    out += fmt::format("  GPU memory usage {}\n", o.mem_pct ? bar(*o.mem_pct) : std::string("(no data)"));

    out += "\n" + heading("Detailed Utilization") + "\n" + rule + "\n";
    if (job.gpus.empty()) out += "  no per-GPU numbers recorded\n";
    std::map<std::pair<std::string, int>, int> xids_of;
    for (const auto& x : job.xids) ++xids_of[{x.node, x.gpu}];
    const bool gpm = std::any_of(job.gpus.begin(), job.gpus.end(), [](const DetailGpu& g) { return g.gpm_sm || g.gpm_tensor || g.gpm_dram; });
    std::string node;
    for (const auto& g : job.gpus) {
        if (g.node != node) {
            node = g.node;
            const auto slow = std::find_if(job.slowness.begin(), job.slowness.end(), [&](const record::NodeSlowness& n) { return n.node == node; });
            if (slow == job.slowness.end()) out += fmt::format("  {}\n", node);
            else out += fmt::format("  {}  slowness {:.2f} ({} {:.0f}% against the typical node's {:.0f}%)\n", node,
                                    slow->score, slow->signal, slow->work, slow->typical);
        }
        std::string mem = "-";
        if (g.mem_max) mem = gib(*g.mem_max) + (g.mem_total ? "/" + gib(*g.mem_total) : "") + (mem_pct(g) ? fmt::format(" ({:.1f}%)", *mem_pct(g)) : "");
        out += fmt::format("    GPU {}: util {} mean, {} max; memory {}; ", g.gpu, pct(g.util_avg), pct(g.util_max), mem);
        out += fmt::format("power {} mean, {} max; energy {}", g.power_avg_w ? fmt::format("{:.0f}W", *g.power_avg_w) : "-",
                           g.power_max_w ? fmt::format("{:.0f}W", *g.power_max_w) : "-",
                           g.energy_j ? energy_text(*g.energy_j) : "-");
        const auto x = xids_of.find({g.node, g.gpu});
        const std::int64_t nx = std::max<std::int64_t>(g.xids, x == xids_of.end() ? 0 : x->second);
        out += fmt::format("; XIDs {}", nx);
        if (!has_data(g)) out += " (no samples)";
        out += "\n";
        if (gpm) out += fmt::format("           GPM: SM {}, tensor {}, DRAM bandwidth {}\n", pct(g.gpm_sm), pct(g.gpm_tensor), pct(g.gpm_dram));
    }
    if (!job.xids.empty()) {
        out += "  XID events\n";
        for (const auto& x : job.xids)
            out += fmt::format("    {} {} GPU {}: XID {}\n", format_sacct_time(x.ts), x.node, x.gpu, x.code);
    }
    if (!job.idle.empty()) {
        out += "  Held-but-idle GPUs (gputrace idle_alert, idle_cancel)\n";
        for (const auto& i : job.idle)
            out += fmt::format("    {} {} GPU {}: idle {} s, {}\n", format_sacct_time(i.ts), i.node, i.gpu, i.idle_s,
                               i.cancel ? "job cancelled (idle_cancel)" : "alerted (idle_alert)");
    }
    const auto notes = efficiency_notes(job, t);
    out += "\n" + heading("Notes") + "\n" + rule + "\n";
    if (notes.empty()) out += job.start > 0 && job.elapsed_s < t.min_elapsed_s ? "  * The job ran too briefly to judge.\n" : "  * Nothing stands out.\n";
    for (const auto& n : notes) out += "  * " + n + "\n";
    return out;
}

}  // namespace acme::acct
