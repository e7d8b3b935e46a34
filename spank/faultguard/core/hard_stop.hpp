// A helper's hard stop that says so: alarm(2) with a SIGALRM handler that writes a line made
// beforehand to stderr (the helpers' log) and exits, where SIGALRM's default action ended the
// process without a word (a record publisher stopped so left its part in the outbox unsaid:
// tests/bench/record-scale 256 lost a part with no line anywhere).
#pragma once

#include <string_view>

#include "spank/faultguard/core/prepared_exec.hpp"

namespace acme::faultguard {

// Arms (or re-arms, replacing the line and the time) the stop: after `seconds`, `line` (cut to
// 1 KiB; end it with a newline) is written to stderr, `then` (when given; it must outlive the
// arming) is started, and the process exits with `exit_code`. 0 seconds disarms it.
// Async-signal-safe at the stop: write(2), PreparedExec::start() and _exit(2) only.
void arm_hard_stop(unsigned seconds, std::string_view line, int exit_code = 1, const PreparedExec* then = nullptr) noexcept;

}  // namespace acme::faultguard
