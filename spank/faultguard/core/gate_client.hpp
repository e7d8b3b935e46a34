// The job prolog's question to the node's resident health gate (resident_gate.hpp): compiled
// into faultguard.so, so sockets and the protocol only, every step bounded.
#pragma once

#include <string>

#include "spank/faultguard/core/gate_request.hpp"

namespace acme::faultguard {

enum class GateReply {
    answered,  // `answer` holds the verdict
    absent,    // nothing listens on the socket: start a resident gate
    failed,    // no answer within the time (why says what happened)
};

// Asks the resident gate at `socket_path`, bounded by timeout_s in all (connect, send, answer).
GateReply ask_resident_gate(const std::string& socket_path, const std::string& request, double timeout_s,
                            GateAnswer& answer, std::string& why);

}  // namespace acme::faultguard
