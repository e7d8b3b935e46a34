// libFuzzer target for the acme job record as readers meet it: any AdminComment text (an
// admin's note, another tool's token, a cut or edited ACME1 token). Checks: no crash, no
// unbounded inflation, a decoded record re-encodes to a token that decodes to the same JSON,
// and with_token keeps every other token.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/record/codec.hpp"
#include "common/record/record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace acme::record;
    const std::string_view field(reinterpret_cast<const char*>(data), size);
    std::string error;
    // The field may also be a token's payload alone: try it both ways.
    for (const std::string& candidate : {std::string(field), std::string(kTokenPrefix) + base64_encode(field)}) {
        const auto text = decode_token(candidate, error);
        if (!text) continue;
        if (text->size() > kMaxJsonBytes) __builtin_trap();
        const auto record = parse_record(*text, error);
        if (!record) continue;
        missing_nodes(*record);
        const auto again = decode_token(encode_token(record->dump()), error);
        if (!again || parse_record(*again, error) != record) __builtin_trap();
    }
    const std::string replaced = with_token(field, "ACME1:x");
    if (replaced.find("ACME1:x") == std::string::npos) __builtin_trap();
    return 0;
}
