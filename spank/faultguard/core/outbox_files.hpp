// The node's outbox of record parts, as files: the hand-off the epilog writes for its detached
// publisher (SPOOL/run/NODE.JOB.RESTART.record) and the scan a later epilog makes for parts
// slurmdbd did not take (record_outbox.hpp publishes them).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace acme::faultguard {

// How long a part slurmdbd did not take waits for another try: a week of slurmdbd downtime,
// longer than any site's MinJobAge-free outage and the time slurmctld itself queues job rows.
constexpr double kOutboxKeepSeconds = 7 * 24 * 3600.0;
// A part younger than this is left to the publisher its own epilog is starting.
constexpr double kOutboxSettleSeconds = 2.0;
// Parts a single epilog starts publishers for, at most: the oldest first.
constexpr std::size_t kOutboxPerEpilog = 8;

// Writes the hand-off (0600, O_NOFOLLOW, never over a link); false with `error` when it cannot.
bool write_handoff(const std::string& path, const nlohmann::json& handoff, std::string& error);

// Every part of this node's outbox (SPOOL/run/NODE.*.record, regular, ours), for the node's
// record retrier: whether a publisher holds its lock now, and its hand-off (null when it does
// not parse: the publisher that tries it removes it).
struct OutboxEntry {
    std::string path;
    double mtime = 0;
    bool locked = false;
    nlohmann::json handoff;
};
std::vector<OutboxEntry> outbox_entries(const std::string& spool, const std::string& node);

// The node's retrier lock (SPOOL/run/NODE.retrier.pid): the run directory opened with
// O_NOFOLLOW and checked (a directory of ours no one else may write), the file opened
// O_NOFOLLOW under it, locked (an OFD write lock, not waiting) and holding this process's pid. The
// descriptor, or -1: `held` when another process has the lock, else `error` says why.
int take_retrier_lock(const std::string& spool, const std::string& node, bool& held, std::string& error);

// The parts this node's outbox holds besides `except` that no publisher has now (none holds
// its lock, and it is older than kOutboxSettleSeconds), oldest first, at most `max`.
std::vector<std::string> outbox_parts(const std::string& spool, const std::string& node, const std::string& except,
                                      std::size_t max);

}  // namespace acme::faultguard
