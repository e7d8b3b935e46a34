// The sampler's stall watcher (acme-gpu-sampler, never slurmstepd): feeds the job's samples and
// XIDs to a NodeTracker, looks at the job's progress files as its user every stall_probe
// seconds (and quickly, as root, at its heartbeat's mtime and its known processes in between:
// stall_heartbeat_probe), shares this node's state with the job's other nodes, judges, and on a verdict
// records it in the spool (stalls) and logs it; with --auto-recover, the acting node signals
// the job, and after stall_grace seconds cancels it (faultguard's epilog then diagnoses the
// stall and requeues the job as for a crash).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/store/database.hpp"
#include "spank/gputrace/core/job_activity.hpp"
#include "spank/gputrace/core/nic_traffic.hpp"
#include "spank/gputrace/core/progress_probe.hpp"
#include "spank/gputrace/core/stall.hpp"
#include "spank/gputrace/core/stall_share.hpp"

namespace acme::telemetry {

struct StallJob {
    long long job = 0, restart = 0;
    std::string node;
    long long uid = -1, gid = -1;
    bool auto_recover = false;
    std::string ckpt_dir;
    std::string spool;  // where the cancel's mark goes (store::stall_cancel_mark_path)
};

class StallWatch {
public:
    using Log = void (*)(const std::string&);
    StallWatch(const StallConfig& c, StallJob job, store::Database& db, double job_start, Log log);
    ~StallWatch();
    void on_samples(const std::vector<Sample>& samples, double now);
    void on_event(const GpuEvent& e);
    // Between samples: a quick look at the heartbeat and the job's known processes when due
    // (stall_heartbeat_probe), a full look when one is due, the verdict, the actions due.
    void tick(double now);
    // Whether the sampler should sample the job's GPUs now for the stall watch alone (not the
    // spool): at the quick reads' pace (NodeTracker::process_interval) past the warm-up, and when a
    // running window closes with no sample since, so a verdict at a short pace is judged on the
    // GPUs as they are, not as they were a sample interval ago.
    bool wants_gpus(double now) const;
    // This node's live straggler score (live_slowness.hpp) as of the last look; nullopt without
    // a share, in a single-node job, or before the job's other nodes are heard from.
    std::optional<double> slowness() const { return slowness_; }

private:
    void look(double now);
    // While waiting for the job's other nodes to write a state since a window closed: rereads the
    // share and judges again, without a full look (no fork); a full look only where this node's own
    // state is older than the window's close.
    void poll(double now);
    // What follows a judgment: the verdict (record, signal, mail), or the window still running.
    void judged(Verdict v, double now);
    // The job's processes' activity since they were last read, into the tracker (stall_cadence_activity).
    // `full`: a walk of /proc; else the processes found at the last walk (JobProcesses::look).
    void read_processes(double now, bool full);
    // When the window judged at the last look closes, moved by what quick looks saw since (0: none).
    double closes() const;
    void record(double now);
    // Before the cancel: tells this node's epilog the job did not end cleanly here (the mark's
    // comment in spool_stalls.hpp).
    void mark_cancel();
    void mail(const Verdict& v, double now);
    // What the verdict is judged on: every node's state with a share and the job's node list,
    // else this node's alone.
    std::vector<NodeState> shared_states(const std::vector<NodeState>& states) const;
    const StallConfig& c_;
    StallJob job_;
    store::Database& db_;
    double job_start_;
    Log log_;
    NodeTracker tracker_;
    std::unique_ptr<StallShare> share_;
    ProbePaths paths_;
    JobProcesses processes_;  // the job's processes here: their I/O and CPU between reads
    std::unique_ptr<NicTraffic> nic_;  // the node's network ports (stall_cadence_nic; null: off)
    double last_read_ = 0;    // when they were last read (0: never)
    std::vector<std::string> nodes_;  // the job's, from slurmctld (empty until known)
    bool job_known_ = false;
    std::string job_name_, job_user_, mail_user_;  // from slurmctld, for stall_mail
    bool mailed_ = false;                          // once per run
    double next_look_ = 0, next_job_ask_ = 0;
    double due_ = 0;  // when the window running at the last look closes (Verdict::due; 0: none)
    Verdict judged_;  // the last look's verdict (not stalled): its window, for closes()
    double next_beat_ = 0, next_read_ = 0;  // quick looks: the heartbeat, the known processes
    double last_look_ = 0;  // the last full look: this node's state in the share is as of then
    // Waiting on the other nodes' states (Verdict::waiting): the share is reread at next_poll_,
    // the gap doubling from stall_heartbeat_probe up to stall_probe while nothing new comes.
    bool waiting_ = false;
    double next_poll_ = 0, poll_gap_ = 0;
    // This node's state was written at a window's close (the time; 0: not since): once anything
    // here moves after it, a full look writes the state again at once, so the nodes waiting on it
    // learn the job moved now, not at the next stall_probe.
    double closed_write_ = 0;
    double last_gpu_ = 0;                   // the last GPU sample
    std::optional<double> slowness_;
    std::optional<Verdict> verdict_;
    double verdict_ts_ = 0, signalled_at_ = 0;
    bool cancelled_ = false, withdrawn_ = false;
    int withdrawals_ = 0;  // verdicts withdrawn this run (progress resumed)
    std::string action_ = "none";
};

}  // namespace acme::telemetry
