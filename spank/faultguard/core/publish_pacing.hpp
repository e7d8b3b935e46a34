// How the nodes of one job take turns writing their parts of its record (record_publish.hpp).
//
// Pacing (publish_pacing): a job's nodes end together, and with a few hundred of them writing
// at once nearly every write undoes another (at 48 nodes five sixths of the parts were lost).
// So each node takes a turn by its place in the job's node list, a write slot apart, and a node
// that finds its part undone writes again once every node's turn is over, at a random time
// spread over half a turn: about one write per node, where unpaced writers make one per node
// per collision. After its
// part is seen twice, a node reads once more when every node's turn is over, to catch a late
// writer that read before its part was there.
#pragma once

#include <string>
#include <vector>

namespace acme::faultguard {

// One node's write slot: longer than a read-merge-write takes (two round trips to slurmdbd on
// one connection, a record of up to 48 KiB): tens of milliseconds on an idle slurmdbd, 0.3 to
// 1 s measured on a 2-core minicluster with 32 publishers and a test suite beside it
// (t-record-many-nodes prints the slowest). A large job's turn is capped (max_turn_s), so its
// slots shrink: then collisions are met by rewrites.
constexpr double kWriteSlotSeconds = 0.25;
// When the job's end is known, the turns start this long after it: the nodes' epilogs end
// seconds apart (a few hundred of them on a loaded node), and the turns must not follow that.
constexpr double kSettleSeconds = 3.0;

// How long one libslurm call to a slow slurmdbd may take: its persistent connection's timeout,
// MessageTimeout + 35 s (45 s with Slurm's default MessageTimeout of 10 s); at 256 nodes on a
// 2-core minicluster a write took up to 55 s. A call begun just before the budget's end ends
// that much after it. (A slurmdbd that hangs holds a call longer still: a frozen one held it
// over 150 s in t-record-publisher-hard-stop; the hard stop ends that.)
constexpr double kSlurmdbdCallSeconds = 45.0;

struct PublishPacing {
    double first_delay_s = 0;   // before the first write: this node's turn
    double turn_s = 0;          // every node's turn, one after another
    double turns_over_s = 0;    // from now until every node has had its turn
    double retry_spread_s = 0;  // a node whose part was undone writes again within this
    double budget_s = 0;        // the whole publish, pacing included
};

// The pacing of `node` among the job's `expected` nodes: base_budget_s plus three turns of the
// job, where a turn is one write slot per node, or less when max_turn_s caps it (an epilog
// that must write before it returns caps its time so). since_end_s: seconds since the job
// ended (slurmctld's end time, the same on every node), or negative when unknown: then the
// turns count from now. A one-node job writes at once either way.
PublishPacing publish_pacing(const std::vector<std::string>& expected, const std::string& node,
                             double base_budget_s, double max_turn_s, double since_end_s = -1);

// The job's end its nodes' turns (and the retrier's rounds, core/record_retry.hpp) count from:
// slurmctld's end time, the same on every node, but never later than `now`. While a job
// requeued by an admin completes, slurmctld's end time is backfill's guess at the next run's
// end, up to an hour ahead: counted from there, every node would take its turn at once (the
// turns counted from each one's own now) and the retry rounds would wait that hour. The epilog
// caps it when it writes the hand-off, a few seconds after the run's end on every node; the
// publisher again for older hand-offs. 0 (unknown) stays 0.
double pacing_end(double slurmctld_end, double now);

// A detached publisher's hard stop (alarm), in whole seconds from its start: its budget, plus
// a read and a write (modify and commit) begun just before the budget's end, each waiting up to
// kSlurmdbdCallSeconds. A 20 s margin was shorter than one such call: tests/bench/record-scale
// 256 lost a part to it, without a line (core/hard_stop.hpp now says so and keeps the part).
unsigned publish_hard_stop_s(const PublishPacing& pacing);

}  // namespace acme::faultguard
