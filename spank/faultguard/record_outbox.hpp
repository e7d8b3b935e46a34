// The node's outbox of record parts: what the epilog hands its detached publisher, kept while
// slurmdbd does not answer, and published by a later epilog on the node.
//
// The epilog writes this node's part of a run's record to SPOOL/run/NODE.JOB.RESTART.record
// (root's, 0600) and starts `acme-faultguard-epilog --publish FILE`, which takes the file's
// lock, publishes (record_publish.hpp) and removes the file. When slurmdbd does not answer (or
// has not received the job's row from slurmctld's queue yet) the file stays: every later
// epilog on the node starts a publisher for each part left there, oldest first, until slurmdbd
// takes it or it is older than kOutboxKeepSeconds (then given up, with a line in the helpers'
// log). The lock keeps two publishers off one part.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace acme::faultguard {

// How long a part slurmdbd did not take waits for another try: a week of slurmdbd downtime,
// longer than any site's MinJobAge-free outage and the time slurmctld itself queues job rows.
constexpr double kOutboxKeepSeconds = 7 * 24 * 3600.0;
// Parts a single epilog starts publishers for, at most: the oldest first.
constexpr std::size_t kOutboxPerEpilog = 8;

// Writes the hand-off (0600, O_NOFOLLOW, never over a link); false with `error` when it cannot.
bool write_handoff(const std::string& path, const nlohmann::json& handoff, std::string& error);

// The parts this node's outbox holds besides `except`, oldest first, at most `max`.
std::vector<std::string> outbox_parts(const std::string& spool, const std::string& node, const std::string& except,
                                      std::size_t max);

// acme-faultguard-epilog --publish FILE: publishes the hand-off, keeps it when slurmdbd may
// take it later, removes it otherwise. Prints its one result line on stderr (the helpers' log).
// Exit status: 0 published, no accounting, or another publisher has the part; 1 not
// published; 2 not a hand-off.
int publish_handoff(const std::string& path);

}  // namespace acme::faultguard
