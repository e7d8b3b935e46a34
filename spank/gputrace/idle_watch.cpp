#include "spank/gputrace/idle_watch.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/slurm/actions.hpp"
#include "common/slurm/jobs.hpp"
#include "spank/gputrace/core/job_process.hpp"
#include "spank/gputrace/job_mail.hpp"

namespace acme::telemetry {

IdleWatch::IdleWatch(const IdleConfig& c, std::string mail, long long job, std::string node, store::Database& db, Log log)
    : c_(c), mail_(std::move(mail)), job_(job), node_(std::move(node)), writer_(db), log_(log), tracker_(c) {}

void IdleWatch::ask_slurmctld(double now) {
    // The exemption and the mail need the job's partition, QOS, account and user: asked until
    // slurmctld answers (at most every 10 s); nothing is decided before.
    if (known_ || now < next_ask_) return;
    next_ask_ = now + 10;
    const auto r = slurm::load_job(static_cast<unsigned>(job_));
    if (!r) return;
    known_ = true;
    job_name_ = r->name;
    job_user_ = r->user;
    mail_user_ = r->mail_user;
    if (const auto why = idle_exempt(c_, r->partition, r->qos, r->account)) {
        exempt_ = true;
        log_(fmt::format("job {}: idle GPUs: exempt ({}); no idle alert or cancel", job_, *why));
    }
}

void IdleWatch::on_samples(const std::vector<Sample>& samples, const Processes& processes, double now) {
    ask_slurmctld(now);
    if (exempt_) return;
    for (const auto& s : samples) {
        IdleSample in{s.gpu, s.reading.util_gpu, std::nullopt};
        if (const auto p = processes.find(s.gpu); p != processes.end() && p->second) {
            bool mine = false;
            for (const unsigned pid : *p->second) mine = mine || process_of_job("/proc", pid, job_);
            in.job_process = mine;
        }
        tracker_.on_sample(in, now);
    }
    if (!known_) return;
    const auto d = tracker_.decide(now);
    if (!d.alert.empty()) alert(d, now);
    if (d.cancel) cancel(d, now);
}

std::optional<double> IdleWatch::idle_seconds(int gpu, double now) const {
    if (!known_ || exempt_) return std::nullopt;
    return std::floor(tracker_.idle_for(gpu, now));
}

void IdleWatch::record(const std::vector<int>& gpus, const char* kind, double idle_for, const std::string& detail,
                       double now) {
    try {
        for (const int g : gpus) writer_.write_event(job_, {g, now, kind, std::llround(idle_for), detail});
    } catch (const std::exception& e) {
        log_(fmt::format("job {}: cannot record the {}: {}", job_, kind, e.what()));
    }
}

void IdleWatch::alert(const IdleDecision& d, double now) {
    const std::string reason = idle_reason(d.alert, d.idle_for, c_);
    log_(fmt::format("job {}: idle_alert: {}", job_, reason));
    record(d.alert, "idle_alert", d.idle_for, reason, now);
    // Once per job and node, through stall_mail's path and recipient.
    if (mail_.empty() || mailed_) return;
    mailed_ = true;
    log_(send_job_mail({job_, mail_, mail_user_, job_user_}, "idle_alert mail",
                       [&](const std::string& prog, const std::string& recipient) {
                           return idle_mail_argv(prog, recipient, job_, job_name_, node_, reason);
                       }));
}

// idle_cancel: recorded before the cancel (the epilog it sets off reads the spool), with the
// reason in the sampler's log and the record's idle_cancel events.
void IdleWatch::cancel(const IdleDecision& d, double now) {
    const auto gpus = tracker_.gpus();
    const std::string reason = fmt::format("every GPU of the job on {}: {}", node_, idle_reason(gpus, d.idle_for, c_));
    record(gpus, "idle_cancel", d.idle_for, reason, now);
    const auto err = slurm::cancel_job(static_cast<unsigned>(job_));
    log_(fmt::format("job {}: idle_cancel: {}; {}", job_, reason, err.empty() ? "job cancelled" : "cancel failed: " + err));
}

}  // namespace acme::telemetry
