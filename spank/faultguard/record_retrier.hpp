// The node's record retrier (acme-faultguard-epilog --retry-outbox --spool DIR --node NODE):
// further tries, detached, for the record parts its publishers left in the node's outbox
// (record_outbox.hpp), so that a run's record is completed once slurmdbd answers again, with no
// further job on the node.
//
// One per node at most: it holds SPOOL/run/NODE.retrier.pid (an OFD lock, with its pid;
// opened with O_NOFOLLOW under the root-owned spool). A publisher that keeps its part starts
// one only when that lock is free (core/prepared_exec.hpp), one started while another holds it
// ends at once, and the running one takes the new part at its next look (every
// kRetrierLookSeconds). It runs at background priority (nice 10, best-effort I/O 7), tries one
// part at a time, each try its own process (`--publish FILE --retry-try`, with the publisher's
// hard stop, written to its own run's row like the first try), in rounds counted from each job's end
// (core/record_retry.hpp: 60 s, then twice the pause up to record_retry_pause=, until
// record_retry= after the end). It logs one line per part when it writes it ("record in
// AdminComment (...); by the node's retrier, try K, S s after the job's end") or gives up (the
// part then stays for the node's next epilog, as before), and ends when no part of the node has
// a round left. However long slurmdbd is down, a node has this one process and its one try
// (with the try's supervisor, util::run_bounded).
#pragma once

#include <string>

namespace acme::faultguard {

// How often the retrier looks at the outbox for parts its publishers kept since.
constexpr double kRetrierLookSeconds = 15.0;

// Runs the retrier; returns its exit status (0: done, or another retrier runs; 1: cannot run).
int run_record_retrier(const std::string& spool, const std::string& node);

}  // namespace acme::faultguard
