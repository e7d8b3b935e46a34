// libFuzzer target for faultdiag --suggest-rule's drafter: any evidence line (the bytes up to
// the first newline) and any reason index (the first byte) must give a draft that either parses
// and matches its own line or says why not, in bounded time (the drafter once looped forever on
// a hex run with a digit). A draft that claims to match must really hold one [[rule]].
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/diagnose/rule_draft.hpp"
#include "common/diagnose/taxonomy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const auto reasons = acme::diagnose::reasons();
    const auto& reason = reasons[data[0] % reasons.size()];
    std::string_view line(reinterpret_cast<const char*>(data + 1), size - 1);
    if (const auto nl = line.find('\n'); nl != std::string_view::npos) line = line.substr(0, nl);
    const auto draft = acme::diagnose::draft_rule(reason, line, "site.fuzz.1", "fuzz");
    if (draft.toml.find("[[rule]]") == std::string::npos) __builtin_trap();
    if (!draft.matches && draft.problem.empty()) __builtin_trap();
    (void)acme::diagnose::evidence_pattern(line);
    return 0;
}
