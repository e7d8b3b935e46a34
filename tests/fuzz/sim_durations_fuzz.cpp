// libFuzzer target for evalsched-sim --durations (evalsched/sim/durations.cpp): any bytes either
// parse into positive, finite seconds per named dataset or are refused with one line naming the
// file; nothing else escapes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "evalsched/sim/durations.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        for (const auto& [name, seconds] : acme::evalsched::sim::parse_durations(text, "fuzz.durations"))
            if (name.empty() || !std::isfinite(seconds) || seconds <= 0) __builtin_trap();
    } catch (const std::invalid_argument& e) {
        const std::string_view what = e.what();
        if (what.rfind("fuzz.durations", 0) != 0 || what.find('\n') != std::string_view::npos) __builtin_trap();
    }
    return 0;
}
