// The wall clock as the stores keep it: seconds since the Unix epoch, with the fraction. Every
// row time (spool samples, records, diagnoses, evaluation events) is one of these, so tools
// on other hosts can compare them; durations use a monotonic clock instead.
#pragma once

#include <chrono>

namespace acme::util {

inline double wall_now() noexcept {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace acme::util
