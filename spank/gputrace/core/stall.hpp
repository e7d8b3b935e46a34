// Stall detection: is a running job still making progress? Pure functions over what the sampler
// sees (its GPU samples, the job's log sizes, a heartbeat file, the checkpoint directory), so
// every rule is unit-tested without a GPU or a cluster. The sampler (acme-gpu-sampler) feeds
// one NodeTracker per job, shares each node's state with the job's other nodes (stall_share,
// stall_share.hpp), and judges the job with judge(): a stall is when every signal is quiet for
// a window, and the node whose GPUs diverge is named. Nothing here runs in slurmstepd.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/install_paths.hpp"
#include "spank/gputrace/core/cadence.hpp"
#include "spank/gputrace/core/job_activity.hpp"
#include "spank/gputrace/core/nic_traffic.hpp"
#include "spank/gputrace/core/spool_writer.hpp"

namespace acme::telemetry {

// The admin's thresholds (gputrace plugstack keys stall_*, gputrace(8)). The defaults never
// fire on a healthy phase: a checkpoint save or an evaluation pass idles GPUs and quiets the
// log for minutes, so all-idle needs half an hour; a NCCL spin (busy SMs, low power, no memory
// traffic) is never healthy for minutes, so it needs five (half of NCCL's 600 s watchdog);
// nothing is judged in a job's first ten minutes (loading, compiling, warm-up).
struct StallConfig {
    bool enabled = true;
    double spin_window = 300;   // s every signal quiet while some node's GPUs spin
    double idle_window = 1800;  // s every signal quiet while all GPUs idle
    double warmup = 600;        // s after the job's start before any verdict
    CadenceConfig cadence;      // stall_cadence_*: sooner verdicts at the job's own pace (cadence.hpp)
    double probe = 30;          // s between looks at the log, heartbeat and checkpoints
    // s between quick looks once the warm-up is over: root stats the heartbeat file (no fork),
    // and the job's known processes are read at a share of the quiet it has shown
    // (NodeTracker::process_interval); 0: none, everything at stall_probe.
    double heartbeat_probe = 0.5;
    double grace = 60;          // s between the signal and the cancel (--auto-recover)
    int signal = 10;            // SIGUSR1 (10) or SIGTERM (15): the trainer's cue to checkpoint
    double spin_util = 80;      // % GPU utilisation at or above: SMs busy
    double spin_power = 0.5;    // power at or below this fraction of the GPU's peak in this job
    double spin_mem = 10;       // % memory-controller utilisation at or below: no traffic
    double idle_util = 5;       // % GPU utilisation at or below: idle
    double margin = 30;         // s one node must have stopped before the others to be named
    std::string share;          // directory every node of a job sees (state files); empty: none
    std::string mail;           // stall_mail: empty (off), "user" or an address: MailProg on a verdict without --auto-recover
    // Root's base of the per-job private directories ACME_HEARTBEAT_FILE lives in (heartbeat_dir.hpp).
    std::string heartbeat_dir{paths::kHeartbeatDir};
};

// Sets one stall key (plugstack word or sampler argument). Returns false when `key` is not a
// stall key; a bad value appends one line to `errors` and keeps the default.
bool set_stall_key(std::string_view key, const std::string& value, StallConfig& c, std::vector<std::string>& errors);
// The keys as words the sampler parses back with set_stall_key ("stall_spin_window=300 ...").
std::vector<std::string> stall_words(const StallConfig& c);

// ACME_HEARTBEAT_FILE for a job on a node, <heartbeat_dir>/<job>/heartbeat.<node>: per node, so
// a rank that stops is seen where it runs; in the job's private directory (heartbeat_dir.hpp).
std::string heartbeat_path(const StallConfig& c, long long job_id, std::string_view node);

enum class Pattern { unknown, busy, spin, idle };
std::string_view to_string(Pattern p);
std::optional<Pattern> parse_pattern(std::string_view text);

// What one look as the job's user found; nullopt: not there (or not readable).
struct Probe {
    std::optional<long long> log_size;       // stdout + stderr, bytes
    std::optional<double> heartbeat_mtime;   // ACME_HEARTBEAT_FILE's mtime
    std::optional<double> ckpt_mtime;        // newest mtime under --ckpt-dir (two levels)
    std::optional<long long> ckpt_bytes;     // their total size
};

// One node's progress as the other nodes of the job read it (one line in the share).
struct NodeState {
    std::string node;
    double ts = 0;              // when written
    Pattern pattern = Pattern::unknown;
    double pattern_since = 0;   // when the current pattern began
    double active_at = 0;       // last GPU-busy sample or heartbeat touch here (the job's start before)
    double log_changed_at = 0;  // last time the job's log grew, as seen here (0: never seen)
    double ckpt_changed_at = 0; // last change under --ckpt-dir (0: never seen)
    bool log_seen = false, heartbeat_seen = false;
    int fatal_xids = 0;         // fatal XIDs on the job's GPUs here
    double util = 0, power_w = 0, mem_util = 0;  // the latest sample's averages over the GPUs
    // The node's GPU work rate over its last look (the mean over its GPUs and the samples since
    // the previous look, percent): the input of the live straggler score (live_slowness.hpp).
    // Absent: no sample yet; SM activity only where NVML gave GPM for every reading.
    std::optional<double> work_util, work_sm;
    // The longest step (gap between two signs of progress) seen here, once enough were seen to
    // trust it (cadence.hpp); 0: no pace learned. `steps`: the gaps seen. Two more trailing fields.
    double step = 0;
    long long steps = 0;
    // Whether this node reads the job's processes (job_activity.hpp), and the last look at which
    // they did something (I/O, a disk wait, CPU while no GPU spins; 0: never). Two more trailing
    // fields; a line without them reads as a node that cannot see them.
    bool activity_seen = false;
    double activity_at = 0;
    // Whether this node's network ports are read and were seen to carry the job's steps (most of
    // them moved bytes between two steps: stall_cadence_nic, nic_traffic.hpp), and the last read at
    // which they moved (or could not be read: unknown is never still). Two more trailing fields; a
    // line without them reads as a node whose ports tell nothing.
    bool nic_seen = false;
    double nic_at = 0;
};
std::string format_state(const NodeState& s);
// nullopt on anything but a line format_state wrote (the share is root's, but a file system
// can still hand back a torn or foreign file).
std::optional<NodeState> parse_state(std::string_view line);

// Follows one node's signals over time.
class NodeTracker {
public:
    NodeTracker(const StallConfig& c, std::string node, double job_start);
    void on_samples(const std::vector<Sample>& samples, double now);
    void on_probe(const Probe& p, double now);
    // A quick look at the heartbeat alone (its mtime; nullopt: not there), between full looks.
    void on_heartbeat(std::optional<double> mtime, double now);
    void on_xid(long long code);
    // What the job's processes here did over the `span` s since the previous read of them.
    void on_activity(const Activity& a, double span, double now);
    // What the node's network ports moved over the `span` s since the previous read of them
    // (`present` false: no RDMA port counters here, no evidence).
    void on_nic(const NicDelta& d, bool present, double span, double now);
    // Whether the job's processes should be read at every GPU sample, not only at each look: a
    // pace is learned here with the processes seen, and a look's span is longer than the margin
    // of its quiet (stall_cadence_margin x the step), so where in a span the last activity fell
    // would matter more than the margin allows for.
    // How often to read them now (s): a quarter of the slack of the window that judges the job
    // (what it needs beyond the longest quiet learned so far): stall_cadence_margin's share of
    // the quiet, or where this node's ports carried the job's steps (NodeState::nic_seen) the
    // ports' window's (stall_cadence_nic_margin's share, at least up to stall_cadence_nic_floor);
    // within [stall_heartbeat_probe, stall_probe], from the warm-up's end (stall_probe before it,
    // and where they are not read or quick looks are off). A read's span is how late it stamps
    // the job's last bytes, so the span must be a small share of the slack it eats into.
    double process_interval(double now) const;
    // How often the watch samples the job's GPUs (s): at the margin's pace (process_interval
    // without the ports), and at the processes' pace after a read whose CPU alone counted as
    // activity: CPU means nothing while the GPUs spin (a host thread spin-waits on a hung
    // collective), so the next read must know whether they do. Busy samples at the ports' finer
    // pace would learn a shorter quiet after an evaluation pass and shrink the margin's window.
    double sample_interval(double now) const;
    // Ends the work-rate window: work_util and work_sm become the means since the previous call
    // (kept as they were when no sample came in between).
    void close_work_window();
    const NodeState& state() const { return s_; }

private:
    // The processes' read pace at stall_cadence_margin's share (process_interval without the
    // ports): the quiet is learned from at least this far before an activity read, at any pace.
    double margin_span() const;
    void learn(bool continued = false);  // the pace, after each update (Cadence::observe)
    void note_heartbeat(std::optional<double> mtime, double now);
    const StallConfig& c_;
    NodeState s_;
    Cadence cadence_;
    double learn_from_;  // the end of the warm-up
    std::vector<std::pair<int, double>> peak_power_;  // (gpu, mW) over the job so far
    std::optional<long long> log_size_, ckpt_bytes_;
    std::optional<double> heartbeat_, ckpt_mtime_;
    double step_at_ = 0;     // the last heartbeat touch seen (a step; active_at also moves with busy GPUs)
    // The look before the one that saw the log, a checkpoint or the processes' activity move: the
    // earliest that move may have been (Cadence::observe), and the look before now.
    double log_from_ = 0, ckpt_from_ = 0, activity_from_ = 0, last_probe_ = 0;
    bool all_spin_ = false;  // every GPU sampled last spun: the host's CPU is the hang's spin-wait
    bool waited_ = false;    // the last read of the processes found one asleep on the disk
    bool cpu_alone_ = false; // the last read counted the processes' CPU alone as activity
    // The ports moved since the last step; steps seen after the warm-up, and those with the ports moving.
    // The ports moved in the gap running since the last step (from `nic_gap_from_`), in the one before.
    bool nic_moved_ = false, nic_prev_credited_ = false;
    double nic_gap_from_ = 0;
    long long steps_seen_ = 0, nic_steps_ = 0;
    bool nic_present_ = false;
    double util_sum_ = 0, sm_sum_ = 0;
    long long util_n_ = 0, sm_n_ = 0;
};

struct Verdict {
    bool stalled = false;
    double since = 0;        // when the last progress was seen
    std::string named;       // the node that diverged; empty: none stood out
    bool hardware = false;   // named on GPU evidence (XIDs, a spin while the others idle)
    std::string evidence;    // one line
    // Not stalled: when the window running now closes if nothing moves before (0: none runs: a
    // node busy, unknown or unseen). The sampler looks then too, so a verdict is not a look late.
    double due = 0;
    // The running window's length and the fixed one's, and whether it is paced (its quiet counts
    // from the processes' activity too): what closes_at() moves `due` by.
    double window = 0, fixed = 0;
    bool paced = false;
    // The window where every node's ports were still too (stall_cadence_nic_margin; 0: none runs).
    double nic_window = 0;
    // With a share: the oldest node's state was written at `heard` (its quiet is known up to then,
    // not after), and `waiting`: a window has closed by now (`due` <= now) but not by `heard`, or a
    // node's last state reads busy: no verdict until every node has written a state since. The
    // sampler then rereads the share (no fork) instead of looking at every tick.
    double heard = 0;
    bool waiting = false;
};

// When a window judged at a look to close at `v.due` closes now, given this node's state since:
// a quick look that saw the heartbeat (or, paced, the processes) move puts it off without a full
// look, which forks a probe as the job's user. Never sooner than `v.due`; 0 when none ran.
double closes_at(const Verdict& v, const NodeState& here);

// The job's verdict from every node's state (`nodes` holds this node's and the peers' read from
// the share); `expected`: the job's nodes. The window: the fixed one, or at the job's pace the
// longest step any node learned (stall_window, cadence.hpp); the evidence says which. A node whose state is missing or stale counts as
// unknown, never as quiet: no verdict until every node is seen (or there is no share). With the
// share (`shared`), a node's state tells its quiet only up to when it was written (its ts): a node
// that began a checkpoint save after its last write is not quiet since, so every window must have
// closed by the oldest state's ts (Verdict::heard, waiting).
Verdict judge(const std::vector<NodeState>& nodes, const std::vector<std::string>& expected, double job_start,
              double now, const StallConfig& c, bool shared);

// Whether a job judged stalled at `verdict_ts` has made progress since: some node's GPUs busy
// or its heartbeat touched after it, or (when `files_count`) its log or checkpoint grew. The
// sampler keeps asking through the grace period, and withdraws the verdict (no cancel) on a
// "what moved" line; nullopt: still quiet. Log and checkpoint writes stop counting after one
// withdrawal in an --auto-recover job: they may be the trainer answering the signal, and a job that
// hangs again after saving must not be signalled and spared forever.
std::optional<std::string> progress_since(const std::vector<NodeState>& nodes, double verdict_ts, bool files_count);

// An address stall_mail (or a job's --mail-user) may name: letters, digits, ._%+-@, no leading
// '-' (it becomes one argv word of MailProg), at most 254 characters.
bool mail_address_ok(std::string_view a);
// The job's name as a mail subject carries it: printable, at most 64 characters, "-" when empty.
std::string mail_job_name(std::string_view job_name);
// MailProg's argv for a verdict, as slurmctld mails (`MailProg -s SUBJECT RECIPIENT`, no body):
// "Slurm Job_id=12 Name=train Stalled, no progress for 300 s, node n2 named".
std::vector<std::string> stall_mail_argv(const std::string& mail_prog, const std::string& recipient, long long job_id,
                                         std::string_view job_name, const Verdict& v, double now);

// Which node acts on a verdict (signals, then cancels the job): the named node, else the job's
// first node, so exactly one of them does.
std::string actor(const Verdict& v, const std::vector<std::string>& expected, std::string_view self);

}  // namespace acme::telemetry
