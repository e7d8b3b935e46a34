// The node's outbox of record parts: what the epilog hands its detached publisher, kept while
// slurmdbd does not answer, and published by a later epilog on the node.
//
// The epilog writes this node's part of a run's record to SPOOL/run/NODE.JOB.RESTART.record
// (root's, 0600) and starts `acme-faultguard-epilog --publish FILE`, which takes the file's
// lock, publishes (record_publish.hpp) and removes the file. When slurmdbd does not answer (or
// has not received the job's row from slurmctld's queue yet), when its time runs out before its
// part is seen in the record, or when its hard stop ends it, the file stays, with a line in the
// helpers' log, and the publisher starts the node's record retrier (record_retrier.hpp: one per
// node, further tries in rounds until record_retry= after the job's end). Every later
// epilog on the node also starts a publisher for each part left there that no publisher holds
// (core/outbox_files.hpp), oldest first, until slurmdbd
// takes it or it is older than kOutboxKeepSeconds (then given up, with a line in the helpers'
// log). The lock keeps two publishers off one part.
#pragma once

#include <string>

#include "spank/faultguard/core/outbox_files.hpp"

namespace acme::faultguard {

// acme-faultguard-epilog --publish FILE: publishes the hand-off, keeps it when slurmdbd may
// take it later, removes it otherwise. Prints its one result line on stderr (the helpers' log).
// Exit status: 0 published, no accounting, or another publisher has the part; 1 not
// published; 2 not a hand-off.
// The first try (the epilog's publisher, or a later epilog's) that keeps the part starts the
// node's retrier, its hard stop too. A retrier's try (`--publish FILE --retry-try`, retry_try)
// starts nothing, counts its turns from the retry round it is in, and its line (stderr, which
// the retrier reads) says only "kept": the retrier logs one line when it writes or gives up.
int publish_handoff(const std::string& path, bool retry_try = false);

// The longest a publish of one hand-off takes, its hard stop included (a job of any size).
double publish_handoff_limit_s();

}  // namespace acme::faultguard
