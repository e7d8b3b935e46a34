// Pilots that serve (mode = pilots, a suite with serve_command; evalsched-suite(5)): the model
// is loaded once per pilot. The pilot's first step, started as the user like any other, stages
// the checkpoint and runs the suite's serve_command in the background on a port of its own; the
// step itself probes the server on its node (HTTP GET of serve_probe on 127.0.0.1, the node the
// pilot holds: a head node need not reach compute nodes' ports) until it answers or
// serve_timeout passes, and records server.json once it does. Only then does the pilot take
// trials, as client steps whose "$EVALSCHED_BASE_URL" is that server. A client step that fails
// while the server no longer answers its probe exits kServerLostExit: the trial's lease ends,
// not its chances, and the pilot is released (its server goes with its allocation).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "evalsched/core/suite.hpp"

namespace acme::evalsched {

// A client step whose server stopped answering (sysexits' EX_PROTOCOL).
inline constexpr int kServerLostExit = 76;
// Servers of one evaluation that never answered, in a row, before its pending trials fail.
inline constexpr int kMaxServeFailures = 3;
// How long past serve_timeout the daemon waits for a server step that neither answered nor
// ended (its own deadline should have ended it) before releasing the pilot.
inline constexpr double kServeGraceS = 120;

// The server step's command, run by the trial wrapper after staging ("$EVALSCHED_STAGED"):
// serve_command (in the suite's env and setup) in the background, probed until it answers, then
// server.json {"ready": true, "port": N, "base_url": ...} in "$attempt_dir", then it waits for
// the server. Exits non-zero when the server ends before answering or the timeout passes.
std::string server_command(const Suite& suite, int gpus, int port);

// A client step's command around the trial's rendered one: first a check that every listener
// on `port` is the user's own (else kServerLostExit: another user's program took the port,
// and the trial's prompts must not reach it); on failure, a probe of the server decides
// whether the trial failed (its status) or its server is gone (kServerLostExit).
std::string client_command(const std::string& command, const Serving& serving, int port);

// A shell function, evalsched_port_owner: exit 0 when something listens on 127.0.0.1:`port`
// (or a wildcard address) and every such listener is owned by the calling uid; exit 1, printing
// the other uid, when one is not; exit 2 when nothing listens. The server step waits on it
// before it believes its probe, and each client step checks it before it sends a prompt.
std::string port_owner_check(int port);

// The server's address as client steps see it: on the pilot's own node.
std::string base_url(int port);

// The port for pilot `pilot`'s server: the first in [lo, hi] from an offset that rotates with
// the pilot's id (a port another program holds is not retried by the next pilot), skipping
// `taken` (the servers of other running pilots on its node). -1 when every port is taken.
int choose_port(int lo, int hi, std::int64_t pilot, const std::set<int>& taken);

}  // namespace acme::evalsched
