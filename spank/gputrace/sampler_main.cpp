// acme-gpu-sampler: one per job per node, started detached by gputrace's job prolog and
// stopped by its job epilog (SIGTERM: take a last sample, write the summary, exit). It samples
// the job's GPUs through NVML into the node spool, and exits by itself when its job is gone,
// so a lost epilog leaves no orphan. A hung NVML call trips a watchdog that records why and
// exits: samples are lost, never the job.
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/nvml/library.hpp"
#include "common/slurm/jobs.hpp"
#include "common/store/spool.hpp"
#include "spank/gputrace/core/job_watch.hpp"
#include "common/nvml/device_selection.hpp"
#include "spank/gputrace/core/sampler.hpp"
#include "spank/gputrace/core/sampler_paths.hpp"
#include "spank/gputrace/core/spool_writer.hpp"
#include "spank/gputrace/core/textfile.hpp"
#include "spank/gputrace/core/textfile_writer.hpp"
#include "spank/gputrace/idle_watch.hpp"
#include "spank/gputrace/stall_watch.hpp"
#include "common/util/parse.hpp"
#include "common/util/spawn.hpp"
#include "common/util/version.hpp"
#include "common/util/cli_checks.hpp"
#include "common/util/wall_clock.hpp"

namespace {

using namespace acme;
using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

using util::wall_now;

double mono_now() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

struct Options {
    long long job = 0;
    std::string node, gpus, spool, nvml;
    std::string textfile_dir;  // already expanded by the plugin; empty: no Prometheus file
    bool textfile_job_labels = false;
    long long uid = -1, gid = -1;
    double interval = 10, watch_interval = 10, call_timeout = 10;
    std::vector<std::string> stall_words;  // --stall: gputrace's stall_* keys; none: no stall watch
    std::vector<std::string> idle_words;   // --idle: gputrace's idle_* keys; none: no idle watch
    long long restart = 0;
    bool auto_recover = false;
    std::string ckpt_dir;
    std::string sluid;  // SLURM_JOB_SLUID (Slurm 26.05+); empty before
};

std::string g_prefix = "acme-gpu-sampler";

void log_line(const std::string& msg) { fmt::print(stderr, "{}: {}\n", g_prefix, msg); }

// Bounds every NVML call: the main thread arms it around a call; if the deadline passes the
// watchdog records the hang in the spool (its own connection: the main thread is inside NVML,
// never inside SQLite, while armed) and ends the process.
class Watchdog {
public:
    Watchdog(const Options& o, std::string pidfile, std::vector<int> gpus)
        : o_(o), pidfile_(std::move(pidfile)), gpus_(std::move(gpus)) {
        thread_ = std::thread([this] { run(); });
    }
    ~Watchdog() {
        done_ = true;
        thread_.join();
    }
    void arm(double seconds, const char* what) {
        what_ = what;
        deadline_ = mono_now() + seconds;
    }
    void disarm() { deadline_ = 0; }

private:
    void run() {
        while (!done_) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            const double d = deadline_;
            if (d > 0 && mono_now() > d) {
                const std::string msg =
                    fmt::format("nvml: {} did not return within {} s; sampler stopped", what_.load(), o_.call_timeout);
                log_line(msg);
                try {
                    auto db = store::open_spool(store::spool_path(o_.spool, o_.node));
                    telemetry::SpoolWriter writer(db);
                    writer.telemetry_error(o_.job, o_.node, msg);
                    // Summarise what was sampled before the hang, so the job still has its rows.
                    writer.job_finished(o_.job, o_.node, {}, gpus_, wall_now());
                } catch (...) {
                }
                unlink(pidfile_.c_str());
                if (!o_.textfile_dir.empty()) telemetry::remove_textfile(o_.textfile_dir, o_.job);
                _exit(3);
            }
        }
    }
    const Options& o_;
    std::string pidfile_;
    std::vector<int> gpus_;
    std::thread thread_;
    std::atomic<bool> done_{false};
    std::atomic<double> deadline_{0};
    std::atomic<const char*> what_{""};
};

// The job prolog already wrote this process's pid with its start time (sampler_spawn_c.h: its
// detached child became this process): rewriting it would leave the epilog a moment of an empty
// file.
bool write_pidfile(const std::string& path) {
    {
        const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        char buf[64] = {0};
        const ssize_t n = fd >= 0 ? ::read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) ::close(fd);
        const std::string mine = fmt::format("{} ", getpid());
        if (n > 0 && std::string_view(buf, static_cast<std::size_t>(n)).starts_with(mine)) return true;
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    const std::string text = fmt::format("{}\n", getpid());
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

// The job's Prometheus series: the latest sample of each GPU and the XIDs seen so far, written
// at each tick. A missing or unwritable directory is logged once and sampling goes on.
class TextfileExport {
public:
    TextfileExport(const Options& o, const std::vector<nvml::Library::Device>& devices)
        : writer_(o.textfile_dir, o.job), gpus_(identities(devices)),
          format_({o.node, o.job, user_name(o.uid), o.textfile_job_labels}, gpus_) {}
    void events(const std::vector<telemetry::GpuEvent>& events) {
        for (const auto& e : events) {
            if (e.kind != "xid") continue;
            for (auto& g : gpus_)
                if (g.device.minor == e.gpu) {
                    ++g.xid_count;
                    g.last_xid = e.code;
                }
        }
    }
    // `slowness`: this node's live straggler score (StallWatch::slowness), when there is one;
    // `idle`: the held-but-idle watcher, when the site's policy is on.
    void write(const std::vector<telemetry::Sample>& samples, std::optional<double> slowness,
               const telemetry::IdleWatch* idle, double now) {
        for (auto& g : gpus_) {
            g.sample = nullptr;
            for (const auto& s : samples)
                if (s.gpu == g.device.minor) g.sample = &s;
            g.idle_seconds = idle ? idle->idle_seconds(g.device.minor, now) : std::nullopt;
            g.idle_alert = idle && idle->alerted(g.device.minor);
        }
        format_.format(gpus_, text_, slowness);
        std::string error;
        const bool ok = writer_.write(text_, error);
        for (auto& g : gpus_) g.sample = nullptr;  // `samples` dies after this tick
        if (!ok && !logged_) log_line(error);
        logged_ = logged_ || !ok;
    }
    ~TextfileExport() { writer_.remove(); }

private:
    static std::vector<telemetry::TextfileGpu> identities(const std::vector<nvml::Library::Device>& devices) {
        std::vector<telemetry::TextfileGpu> out;
        for (const auto& d : devices) out.push_back({d, nullptr, 0, 0, std::nullopt, false});
        return out;
    }
    // The user label: the name, or the uid where no name resolves (a job from another realm).
    static std::string user_name(long long uid) {
        if (uid < 0) return {};
        struct passwd pw {}, *found = nullptr;
        char buf[4096];
        if (getpwuid_r(static_cast<uid_t>(uid), &pw, buf, sizeof buf, &found) == 0 && found) return pw.pw_name;
        return std::to_string(uid);
    }
    telemetry::TextfileWriter writer_;
    std::vector<telemetry::TextfileGpu> gpus_;
    const telemetry::TextfileFormat format_;  // the labels, built once for the job
    std::string text_;  // reused: its capacity outlives the ticks
    bool logged_ = false;
};

// The prolog's key=value words of one kind (--stall, --idle), each given to `set`; a bad one is
// logged, and the setting it named keeps its default.
template <class Config, class Set>
void parse_words(const std::vector<std::string>& words, const char* flag, const char* kind, Config& config, Set set) {
    std::vector<std::string> errors;
    for (const auto& w : words) {
        const auto kv = util::split_key_value(w);
        if (!kv || !set(kv->first, kv->second, config, errors))
            errors.push_back(fmt::format("{} {}: not {} key=value", flag, util::printable(w), kind));
    }
    for (const auto& e : errors) log_line(e);
}

// The job is gone when no slurmstepd of it runs here and slurmctld agrees.
bool job_gone(long long job) {
    if (telemetry::job_has_local_stepd(job)) return false;
    const auto active = slurm::job_is_active(static_cast<unsigned>(job));
    return active.has_value() && !*active;
}

int run(const Options& o) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
    // The prolog's child waited for the job's start with these blocked (sampler_wait_c.h): one
    // that came meanwhile (the epilog's stop) is pending and arrives now.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_signals, sig);
    sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);

    const auto job_gpus = util::parse_id_list(o.gpus);
    if (!job_gpus) {
        log_line(fmt::format("--gpus {}: not a GPU id list", o.gpus));
        return 2;
    }
    mkdir(o.spool.c_str(), 0700);
    mkdir(telemetry::sampler_run_dir(o.spool).c_str(), 0700);
    const std::string pidfile = telemetry::sampler_pidfile(o.spool, o.node, o.job);
    if (!write_pidfile(pidfile)) log_line(fmt::format("cannot write {}: the epilog will not find this sampler", pidfile));

    auto db = store::open_spool(store::spool_path(o.spool, o.node));
    telemetry::SpoolWriter writer(db);
    telemetry::JobInfo info{o.job, o.uid, o.gid, o.node, o.gpus, o.interval, o.sluid};
    writer.job_started(info, wall_now());

    Watchdog watchdog(o, pidfile, *job_gpus);
    std::string error;
    watchdog.arm(o.call_timeout, "nvmlInit");
    auto nvml = nvml::Library::open(o.nvml, error);
    watchdog.disarm();
    if (!nvml) {
        log_line(error);
        writer.telemetry_error(o.job, o.node, error);
        writer.job_finished(o.job, o.node, {}, *job_gpus, wall_now());
        unlink(pidfile.c_str());
        return 0;
    }
    watchdog.arm(o.call_timeout, "device enumeration");
    const auto all = nvml->devices(error);
    watchdog.disarm();
    auto selection = nvml::select_devices(all, *job_gpus);
    if (!selection.missing.empty()) {
        std::string ids;
        for (int id : selection.missing) ids += (ids.empty() ? "" : ",") + std::to_string(id);
        const auto msg = fmt::format("GPU ids {} (minor numbers) not found by NVML{}{}", ids,
                                     error.empty() ? "" : ": ", error);
        log_line(msg);
        writer.telemetry_error(o.job, o.node, msg);
    }
    telemetry::Sampler sampler(*nvml, selection.devices);
    watchdog.arm(o.call_timeout, "event registration");
    if (!nvml->watch_events(error)) log_line(error);
    watchdog.disarm();
    std::optional<TextfileExport> textfile;
    if (!o.textfile_dir.empty()) textfile.emplace(o, selection.devices);
    // Stall detection (gputrace(8)): the thresholds came from the plugstack through the prolog.
    telemetry::StallConfig stall_config;
    std::optional<telemetry::StallWatch> stall;
    parse_words(o.stall_words, "--stall", "a stall", stall_config, telemetry::set_stall_key);
    if (!o.stall_words.empty() && stall_config.enabled)
        stall.emplace(stall_config, telemetry::StallJob{o.job, o.restart, o.node, o.uid, o.gid, o.auto_recover, o.ckpt_dir, o.spool},
                      db, wall_now(), log_line);

    // Held-but-idle GPUs (gputrace(8) idle_*): mailed through stall_mail's recipient.
    telemetry::IdleConfig idle_config;
    std::optional<telemetry::IdleWatch> idle;
    parse_words(o.idle_words, "--idle", "an idle", idle_config, telemetry::set_idle_key);
    if (!o.idle_words.empty() && idle_config.on())
        idle.emplace(idle_config, stall_config.mail, o.job, o.node, db, log_line);

    // Up: the prolog started this process in the background so that its start did not delay the
    // job's; its samples keep their cadence at normal priority.
    util::restore_normal_priority();
    double next_tick = mono_now();
    double next_watch = mono_now() + o.watch_interval;
    bool gone = false;
    while (!g_stop && !gone) {
        double now = mono_now();
        if (now >= next_tick) {
            watchdog.arm(o.call_timeout, "a sample");
            auto samples = sampler.sample(wall_now());
            watchdog.disarm();
            writer.write_samples(o.job, samples);
            if (idle) {
                telemetry::IdleWatch::Processes processes;
                watchdog.arm(o.call_timeout, "a process list");
                for (const auto& d : selection.devices) processes[d.minor] = nvml->processes(d.handle);
                watchdog.disarm();
                idle->on_samples(samples, processes, wall_now());
            }
            if (textfile) textfile->write(samples, stall ? stall->slowness() : std::nullopt, idle ? &*idle : nullptr, wall_now());
            if (stall) stall->on_samples(samples, wall_now());
            next_tick += o.interval;
            if (next_tick < now) next_tick = now + o.interval;  // fell behind: skip, never burst
        }
        now = mono_now();
        const double wait = std::max(0.0, std::min(next_tick - now, 0.25));
        watchdog.arm(o.call_timeout + wait, "an event wait");
        const auto events = sampler.events(static_cast<unsigned>(wait * 1000), wall_now());
        watchdog.disarm();
        for (const auto& e : events) writer.write_event(o.job, e);
        if (textfile) textfile->events(events);
        if (stall) {
            for (const auto& e : events) stall->on_event(e);
            // A window at the job's pace closes between two samples: the GPUs as they are now,
            // for the verdict alone (the spool keeps the job's interval).
            if (stall->wants_gpus(wall_now())) {
                watchdog.arm(o.call_timeout, "a sample for a stall verdict");
                const auto now_samples = sampler.sample(wall_now());
                watchdog.disarm();
                stall->on_samples(now_samples, wall_now());
            }
            stall->tick(wall_now());
        }
        if (mono_now() >= next_watch) {
            gone = job_gone(o.job);
            next_watch = mono_now() + o.watch_interval;
        }
    }
    if (gone) log_line("the job no longer runs here; finishing without waiting for the epilog");

    // The last sample: a short job still gets its end state.
    watchdog.arm(o.call_timeout, "the final sample");
    auto samples = sampler.sample(wall_now());
    const auto events = sampler.events(0, wall_now());
    watchdog.disarm();
    writer.write_samples(o.job, samples);
    for (const auto& e : events) writer.write_event(o.job, e);
    writer.job_finished(o.job, o.node, selection.devices, *job_gpus, wall_now());
    textfile.reset();  // the job's series end with it
    stall.reset();     // and its state in the stall share
    unlink(pidfile.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"acme-gpu-sampler: samples one job's GPUs through NVML into the node spool (started by gputrace)"};
    app.set_version_flag("--version", acme::version_line("acme-gpu-sampler"), "print the version and exit");
    app.add_option("--job", o.job, "Slurm job id")->required()->check(acme::util::positive_integer());
    app.add_option("--node", o.node, "this node's Slurm name")->required();
    app.add_option("--gpus", o.gpus, "the job's GPU ids on this node (SLURM_JOB_GPUS)")->required();
    app.add_option("--sluid", o.sluid,
                   "the job's SLUID (SLURM_JOB_SLUID, Slurm 26.05+): an older job's rows under the same id move to retired/");
    app.add_option("--interval", o.interval, "seconds between samples")->check(acme::util::number_between(0.05, 86400.0));
    app.add_option("--spool", o.spool, "spool directory")->required();
    app.add_option("--nvml", o.nvml, "libnvidia-ml to load")->required();
    app.add_option("--uid", o.uid, "the job's uid");
    app.add_option("--gid", o.gid, "the job's gid");
    app.add_option("--watch-interval", o.watch_interval, "seconds between job-alive checks")->check(acme::util::number_between(0.1, 86400.0));
    app.add_option("--textfile-dir", o.textfile_dir,
                   "write the job's Prometheus series into this node_exporter textfile directory");
    app.add_flag("--textfile-job-labels", o.textfile_job_labels,
                 "put hpc_job and user on every Prometheus series, not only on acme_job_gpu_info");
    app.add_option("--call-timeout", o.call_timeout, "seconds an NVML call may take")->check(acme::util::number_between(0.1, 3600.0));
    app.add_option("--stall", o.stall_words, "a stall detection key=value (gputrace(8) stall_*); repeatable");
    app.add_option("--idle", o.idle_words, "a held-but-idle GPU key=value (gputrace(8) idle_*); repeatable");
    app.add_option("--restart", o.restart, "Slurm's restart count of this run");
    app.add_flag("--auto-recover", o.auto_recover, "the job asked --auto-recover: act on a stall verdict");
    app.add_option("--ckpt-dir", o.ckpt_dir, "the job's --ckpt-dir: a checkpoint being written is progress");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    g_prefix = fmt::format("acme-gpu-sampler[job {} on {}]", o.job, o.node);
    try {
        return run(o);
    } catch (const std::exception& e) {
        log_line(e.what());
        return 1;
    }
}
