// libFuzzer: the checkpoint rules parser (etc/checkpoints.toml). Any input either parses or is
// refused with a "name:line: ..." error; nothing else escapes.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/recovery/checkpoints.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const auto rules = acme::recovery::parse_checkpoint_rules(text, "fuzz.toml");
        for (const auto& m : rules.markers)
            if (m.files.empty()) __builtin_trap();
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()).rfind("fuzz.toml:", 0) != 0) __builtin_trap();
    }
    return 0;
}
