// libFuzzer: the resident health gate's protocol (spank/faultguard/core/gate_request.hpp). The
// gate reads requests from a socket only root can reach, but a torn or mangled line must still
// get one clear error, and whatever it accepts must read back the same once written again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "spank/faultguard/core/gate_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    std::string error;
    if (const auto r = acme::faultguard::parse_gate_request(line, error)) {
        const auto text = acme::faultguard::format_gate_request(*r);
        if (!text || text->back() != '\n') __builtin_trap();
        const auto again = acme::faultguard::parse_gate_request(std::string_view(*text).substr(0, text->size() - 1), error);
        if (!again || !(*again == *r)) __builtin_trap();
    } else if (error.empty() || error.find('\n') != std::string::npos) {
        __builtin_trap();
    }
    if (const auto a = acme::faultguard::parse_gate_answer(line)) {
        const auto text = acme::faultguard::format_gate_answer(*a);
        const auto again = acme::faultguard::parse_gate_answer(std::string_view(text).substr(0, text.size() - 1));
        if (!again || again->passed != a->passed || again->text != a->text) __builtin_trap();
    }
    return 0;
}
