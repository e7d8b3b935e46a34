// What the job prolog and the resident health gate (acme-health-gate --serve) say to each other
// on the node's root-only Unix socket: one request line, one answer line. The prolog asks the
// resident gate instead of starting a gate process for every GPU job (each start cost ~25 ms of
// a prolog srun waits for, issue #41); a gate that cannot answer, or finds anything wrong, sends
// the prolog to the gate process, which alone drains and requeues.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace acme::faultguard {

// A line longer than this is not ours: the resident gate reads no further.
inline constexpr std::size_t kGateLineMax = 4096;

struct GateRequest {
    long long job = 0;
    std::string gpus;   // the job's GPU ids on the node (SLURM_JOB_GPUS)
    std::string nvml;   // the NVML library the prolog would give a gate process
    std::string rules;  // the rules directory, likewise
    bool operator==(const GateRequest&) const = default;
};

// "acme-gate 1\tjob=N\tgpus=...\tnvml=...\trules=...\n". nullopt when a value holds a tab,
// a newline or a NUL (it could not be read back as sent).
std::optional<std::string> format_gate_request(const GateRequest& r);
// One line without its newline; nullopt with error (one line) for anything else.
std::optional<GateRequest> parse_gate_request(std::string_view line, std::string& error);

struct GateAnswer {
    bool passed = false;  // passed: the job may run. Otherwise: run the gate process
    std::string text;     // for slurmd's log (passed) or why the gate process must decide
};

// "ok\tTEXT\n" or "gate\tTEXT\n"; tabs and newlines in TEXT become spaces.
std::string format_gate_answer(const GateAnswer& a);
// One line without its newline; nullopt for anything that is not an answer.
std::optional<GateAnswer> parse_gate_answer(std::string_view line);

}  // namespace acme::faultguard
