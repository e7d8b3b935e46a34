// The node's outbox of record parts: what the epilog hands its detached publisher, kept while
// slurmdbd does not answer, and published by a later epilog on the node.
//
// The epilog writes this node's part of a run's record to SPOOL/run/NODE.JOB.RESTART.record
// (root's, 0600) and starts `acme-faultguard-epilog --publish FILE`, which takes the file's
// lock, publishes (record_publish.hpp) and removes the file. When slurmdbd does not answer (or
// has not received the job's row from slurmctld's queue yet), when its time runs out before its
// part is seen in the record, or when its hard stop ends it, the file stays, with a line in the
// helpers' log: every later
// epilog on the node starts a publisher for each part left there that no publisher holds
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
int publish_handoff(const std::string& path);

}  // namespace acme::faultguard
