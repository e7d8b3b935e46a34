// How many GPUs slurmctld says a node has, kept between health gates in SPOOL/run/NODE.gpus.
// Every GPU job's prolog waits for the gate, and asking slurmctld (loading slurm.conf, one RPC)
// was a third of its time. The count changes only when an admin changes the node's Gres, so the
// gate asks again only when NVML shows fewer GPUs than the kept count (the one case that fails
// a node, so a drain is never decided on a stale count) or the kept count is older than an hour.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace acme::faultguard {

struct PromisedGpus {
    int count = 0;
    double asked_at = 0;  // unix seconds
    bool operator==(const PromisedGpus&) const = default;
};

inline constexpr double kPromisedGpusMaxAge = 3600;

// "COUNT ASKED_AT\n"; nullopt for anything else (a torn write, a file of another version).
std::optional<PromisedGpus> parse_promised_gpus(std::string_view text);
std::string format_promised_gpus(const PromisedGpus& p);

// Whether the gate must ask slurmctld now: nothing kept, kept too long (or from the future: the
// clock moved), or NVML shows fewer GPUs than the kept count.
bool must_ask_slurmctld(const std::optional<PromisedGpus>& kept, int nvml_count, double now,
                        double max_age = kPromisedGpusMaxAge);

// The kept count of `path` (root's, in the spool's run directory: read without following links).
std::optional<PromisedGpus> read_promised_gpus(const std::string& path);
// Replaces it whole (a temporary file renamed over it); false when it cannot.
bool write_promised_gpus(const std::string& path, const PromisedGpus& p);

}  // namespace acme::faultguard
