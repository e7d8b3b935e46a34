#include "spank/gputrace/stall_watch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>

#include <fmt/format.h>

#include "common/slurm/actions.hpp"
#include "common/slurm/jobs.hpp"
#include "common/store/spool_stalls.hpp"
#include "common/util/install_paths.hpp"
#include "common/util/parse.hpp"
#include "spank/gputrace/core/heartbeat_dir.hpp"
#include "spank/gputrace/core/live_slowness.hpp"
#include "spank/gputrace/job_mail.hpp"
#include "common/recovery/recovery_policy.hpp"
#include "common/recovery/xid_actions.hpp"

namespace acme::telemetry {

StallWatch::StallWatch(const StallConfig& c, StallJob job, store::Database& db, double job_start, Log log)
    : c_(c), job_(std::move(job)), db_(db), job_start_(job_start), log_(log), tracker_(c, job_.node, job_start),
      processes_(job_.job) {
    if (!c_.share.empty()) {
        share_ = std::make_unique<StallShare>(c_.share);
        if (!share_->ok()) {
            log_(share_->error() + "; judging this node's signals alone");
            share_.reset();
        }
    }
    if (c_.cadence.nic && c_.cadence.activity && c_.cadence.k > 0)
        nic_ = std::make_unique<NicTraffic>("/sys", c_.cadence.nic_ignore);
    paths_.heartbeat = heartbeat_path(c_, job_.job, job_.node);
    paths_.ckpt_dir = job_.ckpt_dir;
    next_look_ = job_start + c_.probe;
}

StallWatch::~StallWatch() {
    if (share_) share_->remove(job_.job, job_.node);
}

void StallWatch::on_samples(const std::vector<Sample>& samples, double now) {
    tracker_.on_samples(samples, now);
    last_gpu_ = now;
}

void StallWatch::read_processes(double now, bool full) {
    // Cheap (a /proc walk, or two small files per known process), and without it the paced window
    // keeps its floor (cadence.hpp).
    if (c_.cadence.k <= 0 || !c_.cadence.activity) return;
    const double span = last_read_ > 0 ? now - last_read_ : 0;
    tracker_.on_activity(processes_.look(full), span, now);
    // The ports at the same pace: a few sysfs counters (each read asks the HCA's firmware once).
    if (nic_) {
        const auto moved = nic_->read();
        tracker_.on_nic(moved, nic_->present(), span, now);
    }
    last_read_ = now;
    next_read_ = now + tracker_.process_interval(now);
}

double StallWatch::closes() const { return verdict_ || waiting_ ? 0 : closes_at(judged_, tracker_.state()); }

bool StallWatch::wants_gpus(double now) const {
    if (!c_.enabled || verdict_) return false;
    // At sample_interval's pace too, once past the warm-up: a quiet learned from the GPUs (an
    // evaluation pass, a straggler's GPU computing) is known to that pace, not to the interval,
    // and a read whose CPU alone counted needs to know whether the GPUs spin.
    if (c_.heartbeat_probe > 0 && now >= job_start_ + c_.warmup && now - last_gpu_ >= tracker_.sample_interval(now))
        return true;
    const double at = closes();
    return at > 0 && now >= at && last_gpu_ < at;
}

void StallWatch::on_event(const GpuEvent& e) {
    // Which XIDs count as hardware evidence: the rules' [[xid]] table, read once per sampler,
    // the same table recovery and the health gate drain by.
    static const recovery::XidActions xids = recovery::load_xid_actions(std::string(paths::kRulesDir));
    if (e.kind == "gpu_lost" || e.kind == "ecc_dbe" || (e.kind == "xid" && xids.drains(e.code)))
        tracker_.on_xid(e.code);
}

void StallWatch::look(double now) {
    // The log paths and the job's nodes, from slurmctld until it answers (at most every 10 s).
    if (!job_known_ && now >= next_job_ask_) {
        next_job_ask_ = now + 10;
        if (const auto r = slurm::load_job(static_cast<unsigned>(job_.job))) {
            job_known_ = true;
            paths_.logs = {r->std_out};
            if (!r->std_err.empty() && r->std_err != r->std_out) paths_.logs.push_back(r->std_err);
            nodes_ = slurm::expand_hostlist(r->nodes);
            job_name_ = r->name;
            job_user_ = r->user;
            mail_user_ = r->mail_user;
        }
    }
    if (job_.uid >= 0 && job_.gid >= 0)
        tracker_.on_probe(probe_as_user(paths_, static_cast<uid_t>(job_.uid), static_cast<gid_t>(job_.gid),
                                        std::clamp(c_.probe, 1.0, 5.0)),
                          now);
    read_processes(now, true);
    tracker_.close_work_window();
    std::vector<NodeState> states;
    last_look_ = now;
    if (share_) {
        share_->write(job_.job, tracker_.state());
        states = share_->read(job_.job, nodes_);
    }
    if (std::none_of(states.begin(), states.end(), [&](const NodeState& s) { return s.node == job_.node; }))
        states.push_back(tracker_.state());
    slowness_.reset();
    if (share_ && nodes_.size() >= 2) slowness_ = live_slowness(states, nodes_, job_.node, now, 3 * c_.probe + 5);
    if (verdict_) {
        // The grace period re-checks: a job whose progress resumed is not cancelled.
        if (cancelled_) return;
        const auto moved = progress_since(shared_states(states), verdict_ts_, withdrawals_ == 0 || !job_.auto_recover);
        if (!moved) return;
        // A job that has already ended (the acting node cancelled it, or it finished) still
        // writes: slurmstepd's "*** JOB ... CANCELLED ***" banner goes into its log, and a node
        // that did not act would take that for progress and withdraw a verdict that was carried
        // out. Only a job slurmctld still runs can withdraw; when it cannot be asked, as before.
        if (slurm::job_is_active(static_cast<unsigned>(job_.job)) == false) return;
        ++withdrawals_;
        withdrawn_ = true;
        action_ = fmt::format("{}withdrawn after {:.0f} s: {}", action_ == "none" ? "" : action_ + ", ",
                              now - verdict_ts_, *moved);
        record(now);
        log_(fmt::format("job {}: stall verdict withdrawn: {}", job_.job, *moved));
        verdict_.reset();
        signalled_at_ = 0;
        action_ = "none";
        withdrawn_ = false;
        return;
    }
    // Without the job's node list, judge this node alone.
    const bool shared = share_ && !nodes_.empty();
    poll_gap_ = 0;
    judged(judge(shared_states(states), shared ? nodes_ : std::vector<std::string>{}, job_start_, now, c_, shared), now);
}

void StallWatch::poll(double now) {
    auto states = share_->read(job_.job, nodes_);
    if (std::none_of(states.begin(), states.end(), [&](const NodeState& s) { return s.node == job_.node; })) {
        NodeState own = tracker_.state();
        own.ts = last_look_;  // what the share would hold: this node as of its last full look
        states.push_back(std::move(own));
    }
    auto v = judge(states, nodes_, job_start_, now, c_, true);
    if (!v.stalled && v.waiting && v.due > last_look_) {
        // The window closes after this node last wrote: its own look (and state) is what is missing.
        look(now);
        next_look_ = now + c_.probe;
        closed_write_ = verdict_ ? 0 : now;
        return;
    }
    judged(std::move(v), now);
}

void StallWatch::judged(Verdict v, double now) {
    due_ = v.due;
    waiting_ = !v.stalled && v.waiting;
    if (waiting_) {
        // Every node looks when the window closes by its own reckoning, so the last states come
        // within a tick or two of it; a node busy in a save writes at its next look: back off.
        const double first = c_.heartbeat_probe > 0 ? c_.heartbeat_probe : c_.probe;
        poll_gap_ = poll_gap_ > 0 ? std::min(2 * poll_gap_, std::max(first, c_.probe)) : first;
        next_poll_ = now + poll_gap_;
    }
    if (!v.stalled) {
        judged_ = std::move(v);
        return;
    }
    verdict_ = v;
    verdict_ts_ = now;
    const bool acts = job_.auto_recover && actor(v, nodes_, job_.node) == job_.node;
    log_(fmt::format("job {}: stalled: {}{}", job_.job, v.evidence,
                     acts ? "; --auto-recover: signalling the job" : job_.auto_recover ? "; another node acts" : ""));
    if (acts) {
        const auto err = slurm::signal_job(static_cast<unsigned>(job_.job), c_.signal);
        signalled_at_ = now;
        action_ = err.empty() ? fmt::format("signalled {}", c_.signal == SIGTERM ? "SIGTERM" : "SIGUSR1")
                              : fmt::format("signal failed: {}", err);
    }
    record(now);
    if (!job_.auto_recover && !c_.mail.empty() && !mailed_ && actor(v, nodes_, job_.node) == job_.node) mail(v, now);
}

// stall_mail: the user and admin learn of a verdict nothing acts on (job_mail.hpp); once per
// run, from the one node that would act.
void StallWatch::mail(const Verdict& v, double now) {
    mailed_ = true;
    log_(send_job_mail({job_.job, c_.mail, mail_user_, job_user_}, "stall_mail",
                       [&](const std::string& prog, const std::string& recipient) {
                           return stall_mail_argv(prog, recipient, job_.job, job_name_, v, now);
                       }));
}

std::vector<NodeState> StallWatch::shared_states(const std::vector<NodeState>& states) const {
    if (share_ && !nodes_.empty()) return states;
    return {tracker_.state()};
}

void StallWatch::record(double) {
    store::StallRow row;
    row.restart = job_.restart;
    row.node = job_.node;
    row.ts = verdict_ts_;
    row.since = verdict_->since;
    row.named_node = verdict_->named;
    row.hardware = verdict_->hardware;
    row.evidence = verdict_->evidence;
    row.action = action_;
    row.withdrawn = withdrawn_;
    try {
        store::upsert_stall(db_, job_.job, row);
    } catch (const std::exception& e) {
        log_(fmt::format("job {}: cannot record the stall: {}", job_.job, e.what()));
    }
}

void StallWatch::mark_cancel() {
    if (job_.spool.empty()) return;
    const std::string path = store::stall_cancel_mark_path(job_.spool, job_.node, job_.job);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        log_(fmt::format("job {}: cannot mark the stall's cancel in {}: {}", job_.job, path, std::strerror(errno)));
        return;
    }
    ::close(fd);
}

void StallWatch::tick(double now) {
    if (!c_.enabled) return;
    // Quick looks once the warm-up is over (the pace is learned from then on): the heartbeat's
    // mtime (a stat, no fork) and the processes the last walk found, each at its own interval.
    const bool quick = c_.heartbeat_probe > 0 && !verdict_ && now >= job_start_ + c_.warmup;
    if (quick && now >= next_beat_) {
        tracker_.on_heartbeat(heartbeat_mtime(c_.heartbeat_dir, job_.job, job_.node), now);
        next_beat_ = now + c_.heartbeat_probe;
    }
    if (quick && now >= next_read_) read_processes(now, false);
    // Every stall_probe, and when the window running closes (what the quick looks saw moves it
    // on): a verdict a look late would be a step late for a job stepping every few seconds. The
    // full look that gives it walks /proc and reads the log as the job's user. While the window
    // has closed but a peer's state predates the close, the share is reread instead (poll); a
    // state this node wrote at a close is written again as soon as anything here moves after it.
    const double at = closes();
    const auto& here = tracker_.state();
    // (The ports alone are not counted: a read that cannot compare its counters stamps them moving.)
    const bool moved = closed_write_ > 0 && std::max({here.active_at, here.log_changed_at, here.ckpt_changed_at,
                                                      here.activity_at}) > closed_write_;
    if (now >= next_look_ || moved || (due_ > 0 && at > 0 && now >= at)) {
        const bool closing = !moved && due_ > 0 && at > 0 && now >= at;
        due_ = 0;
        look(now);
        next_look_ = now + c_.probe;
        closed_write_ = share_ && !nodes_.empty() && !verdict_ && (closing || waiting_) ? now : 0;
    } else if (waiting_ && now >= next_poll_) {
        poll(now);
    }
    if (signalled_at_ > 0 && !cancelled_ && now >= signalled_at_ + c_.grace) {
        cancelled_ = true;
        // Recorded before the cancel: the epilog it sets off reads this row.
        const std::string before = action_;
        action_ += fmt::format(", cancelled after {:g} s", c_.grace);
        record(now);
        mark_cancel();
        if (const auto err = slurm::cancel_job(static_cast<unsigned>(job_.job)); !err.empty()) {
            action_ = before + fmt::format(", cancel failed: {}", err);
            record(now);
        }
        log_(fmt::format("job {}: stalled: {}", job_.job, action_));
    }
}

}  // namespace acme::telemetry
