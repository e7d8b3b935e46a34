// The node's resident health gate (acme-health-gate --serve) and the prolog's question to it.
// Every GPU job's prolog waits for the gate, and srun polls for the prolog at widening
// intervals: a gate process (fork, exec, loading its libraries and NVML's) pushed the prolog
// past srun's first poll every time (issue #41). The resident gate keeps NVML's library loaded
// and the spool open, and answers each job over a root-only Unix socket in a few milliseconds.
// It initialises NVML afresh for each job and shuts it down after, so each verdict sees what a
// gate process would and no device is held open between jobs. It only ever passes a node: on
// anything it finds, or cannot tell, it sends the prolog to the gate process, which alone
// records the failure, drains and requeues.
#pragma once

#include <string>

#include "spank/faultguard/core/gate_request.hpp"

namespace acme::faultguard {

struct ResidentGateOptions {
    std::string node, spool, nvml, rules;
    double idle_s = 300;         // ends after this long without a job to check
    double check_limit_s = 10;   // a check that takes longer ends the gate (a hung driver call)
    double client_limit_s = 1;   // a prolog that sends no whole request within this is dropped
};

// Serves until idle, its program file is replaced (a package upgrade), a prolog asks with
// other settings (nvml, rules), or its socket is taken away; each of those ends it so the next
// prolog starts a current one. 0 when it served or found another serving the node; 1 with a
// line on stderr when it could not start (no NVML, socket path too long, ...).
int serve_resident_gate(const ResidentGateOptions& o);

}  // namespace acme::faultguard
