#include "spank/gputrace/core/stall.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/util/parse.hpp"
#include "spank/gputrace/core/heartbeat_dir.hpp"

namespace acme::telemetry {
namespace {

bool set_number(std::string_view key, const std::string& value, double lo, double hi, double& out,
                std::vector<std::string>& errors) {
    const auto v = util::parse_double(value);
    if (!v || *v < lo || *v > hi) {
        errors.push_back(fmt::format("gputrace: plugstack argument {}={}: want a number in [{}, {}]", key,
                                     util::printable(value), lo, hi));
        return false;
    }
    out = *v;
    return true;
}

bool set_dir(std::string_view key, const std::string& value, bool empty_ok, std::string& out,
             std::vector<std::string>& errors) {
    if ((value.empty() && empty_ok) || (!value.empty() && value.front() == '/' && value.size() <= 1024 &&
                                        value.find('\n') == std::string::npos)) {
        out = value;
        return true;
    }
    errors.push_back(fmt::format("gputrace: plugstack argument {}={}: want an absolute directory{}", key,
                                 util::printable(value), empty_ok ? " (or empty: off)" : ""));
    return false;
}

bool plain_node(std::string_view n) {
    if (n.empty() || n.size() > 64) return false;
    for (const char ch : n)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) return false;
    return n != "." && n != "..";
}

const NodeState* find(const std::vector<NodeState>& nodes, std::string_view name) {
    for (const auto& n : nodes)
        if (n.node == name) return &n;
    return nullptr;
}

std::string describe(const NodeState& n, double now) {
    return fmt::format("{} {} {:.0f} s (util {:.0f}%, {:.0f} W, mem {:.0f}%{})", n.node, to_string(n.pattern),
                       std::max(0.0, now - n.pattern_since), n.util, n.power_w, n.mem_util,
                       n.fatal_xids ? fmt::format(", {} fatal XID{}", n.fatal_xids, n.fatal_xids == 1 ? "" : "s")
                                    : std::string());
}

}  // namespace

bool set_stall_key(std::string_view key, const std::string& value, StallConfig& c, std::vector<std::string>& errors) {
    if (key == "stall") {
        const auto b = util::parse_bool(value);
        if (b) c.enabled = *b;
        else errors.push_back(fmt::format("gputrace: plugstack argument stall={}: want on or off", util::printable(value)));
    } else if (key == "stall_spin_window") {
        set_number(key, value, 0.1, 86400, c.spin_window, errors);
    } else if (key == "stall_idle_window") {
        set_number(key, value, 0.1, 86400 * 7, c.idle_window, errors);
    } else if (key == "stall_warmup") {
        set_number(key, value, 0, 86400, c.warmup, errors);
    } else if (key == "stall_cadence_k") {
        set_number(key, value, 0, 100, c.cadence.k, errors);
    } else if (key == "stall_cadence_margin") {
        set_number(key, value, 0, 100, c.cadence.margin, errors);
    } else if (key == "stall_cadence_floor") {
        set_number(key, value, 0, 86400 * 7, c.cadence.floor, errors);
    } else if (key == "stall_cadence_io") {
        set_number(key, value, 0, 1e12, c.cadence.io, errors);
    } else if (key == "stall_cadence_cpu") {
        set_number(key, value, 0, 4096, c.cadence.cpu, errors);
    } else if (key == "stall_cadence_activity") {
        const auto b = util::parse_bool(value);
        if (b) c.cadence.activity = *b;
        else errors.push_back(fmt::format("gputrace: plugstack argument stall_cadence_activity={}: want on or off",
                                          util::printable(value)));
    } else if (key == "stall_cadence_nic") {
        const auto b = util::parse_bool(value);
        if (b) c.cadence.nic = *b;
        else errors.push_back(fmt::format("gputrace: plugstack argument stall_cadence_nic={}: want on or off",
                                          util::printable(value)));
    } else if (key == "stall_cadence_nic_bytes") {
        set_number(key, value, 0, 1e12, c.cadence.nic_bytes, errors);
    } else if (key == "stall_cadence_nic_margin") {
        set_number(key, value, 0, 100, c.cadence.nic_margin, errors);
    } else if (key == "stall_cadence_nic_floor") {
        set_number(key, value, 0, 86400, c.cadence.nic_floor, errors);
    } else if (key == "stall_cadence_nic_ignore") {
        if (const auto list = parse_nic_ignore(value)) c.cadence.nic_ignore = *list;
        else errors.push_back(fmt::format("gputrace: plugstack argument stall_cadence_nic_ignore={}: want a comma-separated "
                                          "list of at most 16 device names or globs (letters, digits, ._-:@*?[]!^)",
                                          util::printable(value)));
    } else if (key == "stall_cadence_steps") {
        const auto v = util::parse_int(value);
        if (v && *v >= 1 && *v <= 100000) c.cadence.steps = *v;
        else errors.push_back(fmt::format("gputrace: plugstack argument {}={}: want a whole number in [1, 100000]", key,
                                          util::printable(value)));
    } else if (key == "stall_probe") {
        set_number(key, value, 0.1, 3600, c.probe, errors);
    } else if (key == "stall_heartbeat_probe") {
        set_number(key, value, 0, 3600, c.heartbeat_probe, errors);
    } else if (key == "stall_grace") {
        set_number(key, value, 0, 3600, c.grace, errors);
    } else if (key == "stall_signal") {
        if (value == "USR1" || value == "SIGUSR1") c.signal = 10;
        else if (value == "TERM" || value == "SIGTERM") c.signal = 15;
        else errors.push_back(fmt::format("gputrace: plugstack argument stall_signal={}: want USR1 or TERM", util::printable(value)));
    } else if (key == "stall_spin_util") {
        set_number(key, value, 1, 100, c.spin_util, errors);
    } else if (key == "stall_spin_power") {
        set_number(key, value, 0.01, 1, c.spin_power, errors);
    } else if (key == "stall_spin_mem") {
        set_number(key, value, 0, 100, c.spin_mem, errors);
    } else if (key == "stall_idle_util") {
        set_number(key, value, 0, 100, c.idle_util, errors);
    } else if (key == "stall_margin") {
        set_number(key, value, 0, 86400, c.margin, errors);
    } else if (key == "stall_share") {
        set_dir(key, value, true, c.share, errors);
    } else if (key == "stall_mail") {
        if (value == "off" || value.empty()) c.mail.clear();
        else if (value == "user" || mail_address_ok(value)) c.mail = value;
        else errors.push_back(fmt::format("gputrace: plugstack argument stall_mail={}: want off, user or a mail address",
                                          util::printable(value)));
    } else if (key == "heartbeat_dir") {
        set_dir(key, value, false, c.heartbeat_dir, errors);
    } else {
        return false;
    }
    return true;
}

std::vector<std::string> stall_words(const StallConfig& c) {
    std::vector<std::string> w = {
        fmt::format("stall={}", c.enabled ? "on" : "off"),
        fmt::format("stall_spin_window={}", c.spin_window),
        fmt::format("stall_idle_window={}", c.idle_window),
        fmt::format("stall_warmup={}", c.warmup),
        fmt::format("stall_cadence_k={}", c.cadence.k),
        fmt::format("stall_cadence_margin={}", c.cadence.margin),
        fmt::format("stall_cadence_floor={}", c.cadence.floor),
        fmt::format("stall_cadence_steps={}", c.cadence.steps),
        fmt::format("stall_cadence_io={}", c.cadence.io),
        fmt::format("stall_cadence_cpu={}", c.cadence.cpu),
        fmt::format("stall_cadence_activity={}", c.cadence.activity ? "on" : "off"),
        fmt::format("stall_cadence_nic={}", c.cadence.nic ? "on" : "off"),
        fmt::format("stall_cadence_nic_bytes={}", c.cadence.nic_bytes),
        fmt::format("stall_cadence_nic_margin={}", c.cadence.nic_margin),
        fmt::format("stall_cadence_nic_floor={}", c.cadence.nic_floor),
        fmt::format("stall_probe={}", c.probe),
        fmt::format("stall_heartbeat_probe={}", c.heartbeat_probe),
        fmt::format("stall_grace={}", c.grace),
        fmt::format("stall_signal={}", c.signal == 15 ? "TERM" : "USR1"),
        fmt::format("stall_spin_util={}", c.spin_util),
        fmt::format("stall_spin_power={}", c.spin_power),
        fmt::format("stall_spin_mem={}", c.spin_mem),
        fmt::format("stall_idle_util={}", c.idle_util),
        fmt::format("stall_margin={}", c.margin),
        fmt::format("heartbeat_dir={}", c.heartbeat_dir),
    };
    if (!c.cadence.nic_ignore.empty())
        w.push_back(fmt::format("stall_cadence_nic_ignore={}", format_nic_ignore(c.cadence.nic_ignore)));
    if (!c.share.empty()) w.push_back(fmt::format("stall_share={}", c.share));
    if (!c.mail.empty()) w.push_back(fmt::format("stall_mail={}", c.mail));
    return w;
}

std::string heartbeat_path(const StallConfig& c, long long job_id, std::string_view node) {
    return heartbeat_job_dir(c.heartbeat_dir, job_id) + "/" + heartbeat_file_name(node);
}

std::string_view to_string(Pattern p) {
    switch (p) {
        case Pattern::busy: return "busy";
        case Pattern::spin: return "spin";
        case Pattern::idle: return "idle";
        default: return "unknown";
    }
}

std::optional<Pattern> parse_pattern(std::string_view text) {
    for (const auto p : {Pattern::unknown, Pattern::busy, Pattern::spin, Pattern::idle})
        if (to_string(p) == text) return p;
    return std::nullopt;
}

// The work rates are two trailing fields ("-": absent), added after v1's first release, and the
// learned step and its count two more: a line without them (an older sampler's) still parses, as
// a node without a work rate or a pace; the processes' activity, two more after those (absent:
// not seen).
std::string format_state(const NodeState& s) {
    const auto rate = [](const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : std::string("-"); };
    return fmt::format("acme-stall-v1 {} {:.3f} {} {:.3f} {:.3f} {:.3f} {:.3f} {} {} {} {:.1f} {:.1f} {:.1f} {} {} {:.3f} {} {} {:.3f} {} {:.3f}",
                       s.node, s.ts, to_string(s.pattern), s.pattern_since, s.active_at, s.log_changed_at,
                       s.ckpt_changed_at, s.log_seen ? 1 : 0, s.heartbeat_seen ? 1 : 0, s.fatal_xids, s.util, s.power_w,
                       s.mem_util, rate(s.work_util), rate(s.work_sm), s.step, s.steps,
                       s.activity_seen ? 1 : 0, s.activity_at, s.nic_seen ? 1 : 0, s.nic_at);
}

std::optional<NodeState> parse_state(std::string_view line) {
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.size() > 512) return std::nullopt;
    std::vector<std::string_view> f;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= line.size(); ++i)
        if (i == line.size() || line[i] == ' ') {
            f.push_back(line.substr(start, i - start));
            start = i + 1;
        }
    if ((f.size() != 14 && f.size() != 16 && f.size() != 18 && f.size() != 20 && f.size() != 22) || f[0] != "acme-stall-v1" ||
        !plain_node(f[1]))
        return std::nullopt;
    NodeState s;
    s.node = std::string(f[1]);
    const auto pattern = parse_pattern(f[3]);
    if (!pattern) return std::nullopt;
    s.pattern = *pattern;
    double* numbers[] = {&s.ts, &s.pattern_since, &s.active_at, &s.log_changed_at, &s.ckpt_changed_at};
    const std::size_t at[] = {2, 4, 5, 6, 7};
    for (std::size_t i = 0; i < 5; ++i) {
        const auto v = util::parse_double(f[at[i]]);
        if (!v || *v < 0) return std::nullopt;
        *numbers[i] = *v;
    }
    if ((f[8] != "0" && f[8] != "1") || (f[9] != "0" && f[9] != "1")) return std::nullopt;
    s.log_seen = f[8] == "1";
    s.heartbeat_seen = f[9] == "1";
    const auto xids = util::parse_int(f[10]);
    if (!xids || *xids < 0 || *xids > 1'000'000) return std::nullopt;
    s.fatal_xids = static_cast<int>(*xids);
    double* avgs[] = {&s.util, &s.power_w, &s.mem_util};
    for (std::size_t i = 0; i < 3; ++i) {
        const auto v = util::parse_double(f[11 + i]);
        if (!v || *v < 0 || *v > 1e7) return std::nullopt;
        *avgs[i] = *v;
    }
    std::optional<double>* rates[] = {&s.work_util, &s.work_sm};
    for (std::size_t i = 0; i < 2 && f.size() >= 16; ++i) {
        if (f[14 + i] == "-") continue;
        const auto v = util::parse_double(f[14 + i]);
        if (!v || *v < 0 || *v > 100) return std::nullopt;
        *rates[i] = *v;
    }
    if (f.size() >= 18) {
        const auto step = util::parse_double(f[16]);
        const auto steps = util::parse_int(f[17]);
        if (!step || !(*step >= 0 && *step <= 86400 * 365) || !steps || *steps < 0) return std::nullopt;
        s.step = *step;
        s.steps = *steps;
    }
    if (f.size() >= 20) {
        const auto at = util::parse_double(f[19]);
        if ((f[18] != "0" && f[18] != "1") || !at || !(*at >= 0 && *at < 1e11)) return std::nullopt;
        s.activity_seen = f[18] == "1";
        s.activity_at = *at;
    }
    if (f.size() == 22) {
        const auto at = util::parse_double(f[21]);
        if ((f[20] != "0" && f[20] != "1") || !at || !(*at >= 0 && *at < 1e11)) return std::nullopt;
        s.nic_seen = f[20] == "1";
        s.nic_at = *at;
    }
    return s;
}

NodeTracker::NodeTracker(const StallConfig& c, std::string node, double job_start)
    : c_(c), cadence_(job_start), learn_from_(job_start + c.warmup), last_probe_(job_start) {
    s_.node = std::move(node);
    s_.ts = s_.pattern_since = s_.active_at = job_start;
}

void NodeTracker::on_samples(const std::vector<Sample>& samples, double now) {
    Pattern node = samples.empty() ? Pattern::unknown : Pattern::idle;
    bool all_spin = !samples.empty();
    double util = 0, power = 0, mem = 0;
    for (const auto& s : samples) {
        const auto& r = s.reading;
        if (r.lost || !r.util_gpu) {
            node = Pattern::unknown;
            continue;
        }
        const double mw = r.power_mw ? static_cast<double>(*r.power_mw) : -1;
        util += *r.util_gpu;
        util_sum_ += *r.util_gpu;
        ++util_n_;
        if (r.gpm_sm_util) {
            sm_sum_ += *r.gpm_sm_util;
            ++sm_n_;
        }
        power += std::max(0.0, mw) / 1000;
        mem += r.util_mem.value_or(0);
        auto peak = std::find_if(peak_power_.begin(), peak_power_.end(), [&](const auto& p) { return p.first == s.gpu; });
        if (peak == peak_power_.end()) peak = peak_power_.insert(peak_power_.end(), {s.gpu, 0.0});
        peak->second = std::max(peak->second, mw);
        Pattern gpu = Pattern::busy;
        if (*r.util_gpu <= c_.idle_util)
            gpu = Pattern::idle;
        else if (*r.util_gpu >= c_.spin_util && mw >= 0 && peak->second > 0 && mw <= c_.spin_power * peak->second &&
                 r.util_mem && *r.util_mem <= c_.spin_mem)
            gpu = Pattern::spin;
        all_spin = all_spin && gpu == Pattern::spin;
        if (node == Pattern::unknown) continue;
        if (gpu == Pattern::busy) node = Pattern::busy;
        else if (gpu == Pattern::spin && node != Pattern::busy) node = Pattern::spin;
    }
    if (!samples.empty()) {
        const double n = static_cast<double>(samples.size());
        s_.util = util / n;
        s_.power_w = power / n;
        s_.mem_util = mem / n;
    }
    all_spin_ = all_spin;
    // Busy at this sample and the one before: busy between them, as far as a sample can tell.
    const bool continued = node == Pattern::busy && s_.pattern == Pattern::busy;
    if (node != s_.pattern) s_.pattern_since = now;
    s_.pattern = node;
    if (node == Pattern::busy) s_.active_at = now;
    s_.ts = now;
    learn(continued);
}

void NodeTracker::on_probe(const Probe& p, double now) {
    if (p.log_size) {
        if (log_size_ && *log_size_ != *p.log_size) {
            // Growth seen now happened since the look before. Where quick looks saw the heartbeat
            // move in that span, the lines are the steps' (a trainer logs as it heartbeats) and
            // count as of its last touch; else as of now, the latest they may have been.
            const bool beat = c_.heartbeat_probe > 0 && step_at_ > last_probe_;
            s_.log_changed_at = std::max(s_.log_changed_at, beat ? step_at_ : now);
            log_from_ = last_probe_;
        }
        log_size_ = p.log_size;
        s_.log_seen = true;
    }
    note_heartbeat(p.heartbeat_mtime, now);
    if (p.ckpt_mtime || p.ckpt_bytes) {
        if ((ckpt_mtime_ || ckpt_bytes_) && (ckpt_mtime_ != p.ckpt_mtime || ckpt_bytes_ != p.ckpt_bytes)) {
            s_.ckpt_changed_at = now;
            ckpt_from_ = last_probe_;
        }
        ckpt_mtime_ = p.ckpt_mtime;
        ckpt_bytes_ = p.ckpt_bytes;
    }
    s_.ts = now;
    last_probe_ = now;
    learn();
}

void NodeTracker::note_heartbeat(std::optional<double> mtime, double now) {
    if (!mtime) return;
    if (!heartbeat_ || *heartbeat_ != *mtime) {
        s_.active_at = std::max(s_.active_at, std::min(now, *mtime));
        step_at_ = std::max(step_at_, std::min(now, *mtime));
    }
    heartbeat_ = mtime;
    s_.heartbeat_seen = true;
}

void NodeTracker::on_heartbeat(std::optional<double> mtime, double now) {
    // Not a look at the log or checkpoints: their "seen since the look before" bound stays the
    // last full look's.
    note_heartbeat(mtime, now);
    s_.ts = std::max(s_.ts, now);
    learn();
}

void NodeTracker::on_activity(const Activity& a, double span, double now) {
    s_.activity_seen = a.seen;
    const bool io = a.seen && span > 0 && (a.io_bytes / span >= c_.cadence.io || a.disk_wait);
    const bool cpu = a.seen && span > 0 && !all_spin_ && a.cpu_s / span >= c_.cadence.cpu;
    cpu_alone_ = cpu && !io;
    if (io || cpu) {
        s_.activity_at = now;
        // A process asleep on the disk is seen at the look itself; bytes and CPU moved in the span,
        // learned as if read at the margin's pace: the margin (stall_cadence_margin 2, tuned on the
        // bench's slow collectives) multiplies quiets learned at that pace, and the ports' finer
        // reads (process_interval) would learn them shorter and shrink the margin's window with
        // them (the bench's design seeds: slow collectives called 2-2.5x as often).
        activity_from_ = a.disk_wait ? now : now - std::max(span, margin_span());
    } else if (a.seen && span > 0 && waited_) {
        // Asleep on the disk at the read before, not now: it may have slept until just before
        // this read (the latest its quiet may have begun), and from that read on (the earliest).
        s_.activity_at = now;
        activity_from_ = now - std::max(span, margin_span());
    }
    waited_ = a.seen && a.disk_wait;
    s_.ts = now;
    learn();
}

void NodeTracker::on_nic(const NicDelta& d, bool present, double span, double now) {
    if (!c_.cadence.nic) return;
    // Unknown (no baseline, a counter gone back or stuck) reads as moving: never evidence of a hang.
    // A read in the same instant as the one before (a quick read, then a full look's) tells nothing.
    const bool moved = d.seen && (span > 0 ? d.bytes / span >= c_.cadence.nic_bytes : d.bytes > 0);
    if (!d.seen || moved || d.xmit_wait > 0) {
        s_.nic_at = now;
        // The bytes moved somewhere in the read's span: in the gap running now, and in the one
        // before if the span reaches back into it (reads sparser than steps see one step's
        // all-reduce after the next step's sign).
        nic_moved_ = true;
        if (!nic_prev_credited_ && steps_seen_ > 0 && now - span < nic_gap_from_) {
            nic_prev_credited_ = true;
            ++nic_steps_;
        }
    }
    nic_present_ = present;
    learn();
}

double NodeTracker::margin_span() const {
    return std::clamp(c_.cadence.margin * cadence_.longest() / 4, c_.heartbeat_probe, std::max(c_.probe, c_.heartbeat_probe));
}

double NodeTracker::sample_interval(double now) const {
    if (!s_.activity_seen || c_.heartbeat_probe <= 0 || now < learn_from_) return c_.probe;
    return cpu_alone_ ? process_interval(now) : margin_span();
}

double NodeTracker::process_interval(double now) const {
    if (!s_.activity_seen || c_.heartbeat_probe <= 0 || now < learn_from_) return c_.probe;
    const double coarsest = std::max(c_.probe, c_.heartbeat_probe);
    // A quarter of the slack of the window that judges the job: what the window needs beyond the
    // quiet. Where the ports carried the job's steps that is the ports' window's (a quarter of the
    // quiet, at least up to stall_cadence_nic_floor), not the margin's 2x: read at the margin's
    // pace, a read's span was half the quiet, and since a quiet is learned from the read before its
    // first sign, each learned quiet grew by a span, which grew the span: the loop settled at twice
    // the job's quiet (quiet / (1 - margin / 4)), and its last sign was stamped up to half of it
    // late, so a 2 s job's hang waited 6-7 s.
    const double quiet = cadence_.longest();
    double slack = c_.cadence.margin * quiet;
    if (s_.nic_seen) slack = std::min(slack, std::max(c_.cadence.nic_margin * quiet, c_.cadence.nic_floor - quiet));
    return std::clamp(slack / 4, c_.heartbeat_probe, coarsest);
}

double closes_at(const Verdict& v, const NodeState& here) {
    if (v.due <= 0) return 0;
    const double progress = std::max({here.active_at, here.log_changed_at, here.ckpt_changed_at});
    const double newest = v.paced ? std::max(progress, here.activity_at) : progress;
    double at = std::min(newest + v.window, progress + v.fixed);
    if (v.nic_window > 0) at = std::min(at, std::max(newest, here.nic_at) + v.nic_window);
    return std::max(v.due, at);
}

void NodeTracker::learn(bool continued) {
    // The pace is the job's longest quiet: no progress, and (where seen) its processes idle.
    cadence_.observe(std::max({s_.active_at, s_.log_changed_at, s_.ckpt_changed_at, s_.activity_at}),
                     std::max({s_.active_at, log_from_, ckpt_from_, activity_from_}),
                     std::max({step_at_, s_.log_changed_at, s_.ckpt_changed_at}), learn_from_, continued);
    // The log and the checkpoint are seen to grow at a full look, the heartbeat at each quick one:
    // no step is known finer than the looks that see it, a shorter one would be the sampler's pace.
    // The ports tell a hung collective from a slow one only where they carry the job's steps
    // (not NVLink alone in a one-node job, not a fabric whose RDMA bypasses them): they moved
    // between nine in ten of its steps since the warm-up, and as many as the pace needs.
    if (cadence_.gaps() > steps_seen_) {
        steps_seen_ = cadence_.gaps();
        if (nic_moved_) ++nic_steps_;
        nic_prev_credited_ = nic_moved_;
        nic_moved_ = false;
        nic_gap_from_ = std::max({step_at_, s_.log_changed_at, s_.ckpt_changed_at});
    }
    s_.nic_seen = c_.cadence.nic && nic_present_ && nic_steps_ >= c_.cadence.steps && 10 * nic_steps_ >= 9 * steps_seen_;
    const double step = cadence_.trusted_step(c_.cadence);
    const double looks = s_.heartbeat_seen && c_.heartbeat_probe > 0 ? c_.heartbeat_probe : c_.probe;
    s_.step = step > 0 ? std::max(step, looks) : 0;
    s_.steps = cadence_.gaps();
}

void NodeTracker::on_xid(long long) { ++s_.fatal_xids; }

void NodeTracker::close_work_window() {
    if (util_n_ > 0) {
        s_.work_util = util_sum_ / static_cast<double>(util_n_);
        s_.work_sm = sm_n_ == util_n_ ? std::optional<double>(sm_sum_ / static_cast<double>(sm_n_)) : std::nullopt;
    }
    util_sum_ = sm_sum_ = 0;
    util_n_ = sm_n_ = 0;
}

Verdict judge(const std::vector<NodeState>& nodes, const std::vector<std::string>& expected, double job_start,
              double now, const StallConfig& c, bool shared) {
    Verdict v;
    if (!c.enabled || nodes.empty() || now - job_start < c.warmup) return v;
    std::vector<const NodeState*> seen;
    // Every node's state tells its quiet up to when it was written, not up to now: a node that
    // began a checkpoint save (or whose GPUs went busy) after its last write may be moving, so the
    // windows are judged at the oldest state's ts.
    double heard = now;
    if (shared && !expected.empty()) {
        const double stale = 3 * c.probe + 5;
        for (const auto& name : expected) {
            const NodeState* n = find(nodes, name);
            if (!n || now - n->ts > stale) return v;  // a node not heard from is not known quiet
            seen.push_back(n);
            heard = std::min(heard, n->ts);
        }
    } else {
        for (const auto& n : nodes) seen.push_back(&n);
    }
    double progress = job_start;
    bool any_spin = false, log_seen = false, heartbeat_seen = false, activity_seen = true, busy = false, nic_seen = true;
    double activity = 0, nic = 0;
    // The job's pace: the longest step any node learned. Every node sees no more progress than
    // the job as a whole, so any node's longest step is at least the job's: the longest is safe.
    const NodeState* paced = nullptr;
    for (const auto* n : seen) {
        if (n->pattern == Pattern::unknown) return v;
        busy = busy || n->pattern == Pattern::busy;
        any_spin = any_spin || n->pattern == Pattern::spin;
        log_seen = log_seen || n->log_seen;
        heartbeat_seen = heartbeat_seen || n->heartbeat_seen;
        progress = std::max({progress, n->active_at, n->log_changed_at, n->ckpt_changed_at});
        if (n->step > 0 && (!paced || n->step > paced->step)) paced = n;
        activity_seen = activity_seen && n->activity_seen;
        activity = std::max(activity, n->activity_at);
        nic_seen = nic_seen && n->nic_seen;
        nic = std::max(nic, n->nic_at);
    }
    // The GPUs alone never decide: a job whose log and heartbeat cannot be seen is not judged.
    if (!log_seen && !heartbeat_seen) return v;
    const auto window = stall_window(any_spin ? c.spin_window : c.idle_window, any_spin ? "spin" : "idle",
                                     paced ? paced->step : 0, paced ? paced->steps : 0, c.cadence, activity_seen);
    // The fixed window counts from the last progress; the paced one from the last time anything
    // of the job moved (its processes' I/O or CPU too): a save that writes is no hang.
    const double fixed = any_spin ? c.spin_window : c.idle_window;
    const double quiet_from = window.paced ? std::max(progress, activity) : progress;
    const double quiet = heard - quiet_from;
    // Every node's ports still too (they carried the job's steps): a slow collective would move
    // bytes there, so the job's longest quiet and stall_cadence_nic_margin more is the hang.
    const double step = paced ? paced->step : 0;
    const double nic_window = c.cadence.nic && activity_seen && nic_seen && step > 0 && c.cadence.k > 0
                                  ? std::min(std::max(step * (1 + c.cadence.nic_margin), c.cadence.nic_floor), fixed)
                                  : 0;
    const double nic_from = std::max({progress, activity, nic});
    const bool nic_still = nic_window > 0 && heard - nic_from >= nic_window;
    v.heard = heard;
    // A node busy at its last sample is progress; the window still runs from that sample, so the
    // sampler looks (and samples the GPUs) when it would close if the GPUs stopped right after.
    if (busy || (quiet < window.seconds && heard - progress < fixed && !nic_still)) {
        v.due = std::min(quiet_from + window.seconds, progress + fixed);
        if (nic_window > 0) v.due = std::min(v.due, nic_from + nic_window);
        v.window = window.seconds;
        v.fixed = fixed;
        v.paced = window.paced;
        v.nic_window = nic_window;
        // Closed by now, not by the oldest state (or a node busy as last written): a verdict or the
        // window's next close needs every node's state written since.
        v.waiting = shared && v.due <= now;
        return v;
    }
    // The paced window not reached: the ports' (still) or the fixed one (closed) was.
    const bool ceiling = quiet < window.seconds && !nic_still;
    v.stalled = true;
    v.since = progress;

    // Localisation: fatal XIDs, else the pattern the fewest nodes show (a tie: the spinning
    // ones), else the node that stopped first by a clear margin. Only ever one node.
    const NodeState* named = nullptr;
    std::string why;
    for (const auto* n : seen)
        if (n->fatal_xids > 0 && (!named || n->fatal_xids > named->fatal_xids)) named = n;
    if (named) {
        v.hardware = true;
        why = "fatal XIDs on its GPUs";
    }
    std::vector<const NodeState*> spin, idle;
    for (const auto* n : seen) (n->pattern == Pattern::spin ? spin : idle).push_back(n);
    if (!named && !spin.empty() && !idle.empty()) {
        const auto& minority = spin.size() <= idle.size() ? spin : idle;
        if (minority.size() == 1) {
            named = minority.front();
            v.hardware = true;
            why = fmt::format("its GPUs {} while the others {}", to_string(named->pattern),
                              named->pattern == Pattern::spin ? "idle" : "spin");
        }
    }
    if (!named && seen.size() > 1) {
        const NodeState* first = nullptr;
        for (const auto* n : seen)
            if (!first || n->active_at < first->active_at) first = n;
        bool clear = true;
        for (const auto* n : seen)
            if (n != first && n->active_at - first->active_at < c.margin) clear = false;
        if (clear) {
            named = first;
            why = fmt::format("it stopped {:.0f} s before the others", [&] {
                double next = now;
                for (const auto* n : seen)
                    if (n != first) next = std::min(next, n->active_at);
                return next - first->active_at;
            }());
        }
    }
    if (named) v.named = named->node;

    std::string signals = log_seen ? "log quiet" : "log not seen";
    signals += heartbeat_seen ? ", heartbeat stopped" : ", no heartbeat";
    std::string nodes_text;
    for (const auto* n : seen) nodes_text += (nodes_text.empty() ? "" : "; ") + describe(*n, now);
    const std::string window_why =
        ceiling ? fmt::format("the fixed {} window; its processes still moved {:.0f} s ago", any_spin ? "spin" : "idle",
                              now - activity)
        : quiet < window.seconds
            ? fmt::format("the job's longest quiet of {:.0f} s seen over {} steps and {:g} % more (at least {:g} s), its "
                          "processes idle and every node's network ports still (no bytes for {:.0f} s)",
                          step, paced ? paced->steps : 0, c.cadence.nic_margin * 100, c.cadence.nic_floor, now - nic_from)
            : window.why;
    v.evidence = fmt::format("no progress for {:.0f} s, {} ({}); {}{}", now - progress, window_why, signals, nodes_text,
                             named ? fmt::format("; {} named: {}", named->node, why) : std::string("; no node stood out"));
    return v;
}

std::optional<std::string> progress_since(const std::vector<NodeState>& nodes, double verdict_ts, bool files_count) {
    for (const auto& n : nodes) {
        if (n.ts <= verdict_ts) continue;  // nothing new heard from this node
        if (n.pattern == Pattern::busy) return fmt::format("{}'s GPUs are busy again", n.node);
        if (n.active_at > verdict_ts) return fmt::format("{}'s heartbeat was touched", n.node);
        if (files_count && n.log_changed_at > verdict_ts) return fmt::format("the job's log grew (seen on {})", n.node);
        if (files_count && n.ckpt_changed_at > verdict_ts) return fmt::format("a checkpoint grew (seen on {})", n.node);
    }
    return std::nullopt;
}

bool mail_address_ok(std::string_view a) {
    // What a mail transport delivers and no mail program reads as something else: a local part
    // that starts with a letter or digit (mailx takes "+name" for a folder, "-x" for an option,
    // "|cmd" for a pipe), of letters, digits and . _ % + - without "..", and an optional
    // @domain of dot-separated letter/digit/hyphen labels (no leading or trailing hyphen).
    if (a.empty() || a.size() > 254) return false;
    const auto at = a.find('@');
    const std::string_view local = a.substr(0, at);
    const auto alnum = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; };
    if (local.empty() || local.size() > 64 || !alnum(local.front()) || local.back() == '.' || local.find("..") != std::string_view::npos)
        return false;
    for (const char ch : local)
        if (!alnum(ch) && std::string_view("._%+-").find(ch) == std::string_view::npos) return false;
    if (at == std::string_view::npos) return true;
    std::string_view domain = a.substr(at + 1);
    if (domain.empty()) return false;
    while (true) {
        const auto dot = domain.find('.');
        const std::string_view label = domain.substr(0, dot);
        if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
        for (const char ch : label)
            if (!alnum(ch) && ch != '-') return false;
        if (dot == std::string_view::npos) return true;
        domain = domain.substr(dot + 1);
    }
}

std::string mail_job_name(std::string_view job_name) {
    std::string name;
    for (const char ch : job_name.substr(0, 64)) name += std::isprint(static_cast<unsigned char>(ch)) ? ch : '?';
    return name.empty() ? "-" : name;
}

std::vector<std::string> stall_mail_argv(const std::string& mail_prog, const std::string& recipient, long long job_id,
                                         std::string_view job_name, const Verdict& v, double now) {
    const std::string subject =
        fmt::format("Slurm Job_id={} Name={} Stalled, no progress for {:.0f} s, {}", job_id, mail_job_name(job_name),
                    std::max(0.0, now - v.since), v.named.empty() ? std::string("no node named") : "node " + v.named + " named");
    return {mail_prog, "-s", subject, recipient};
}

std::string actor(const Verdict& v, const std::vector<std::string>& expected, std::string_view self) {
    if (!v.named.empty()) return v.named;
    if (!expected.empty()) return expected.front();
    return std::string(self);
}

}  // namespace acme::telemetry
