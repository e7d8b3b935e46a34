// libFuzzer target for the rule-file parser: any bytes either parse into rules the engine can
// compile and run, or are refused with a RuleError. Nothing else may escape, crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/diagnose/engine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        acme::diagnose::Engine engine(acme::diagnose::parse_rules(text, "fuzz.toml"));
        // Run what was parsed over its own text: patterns meet input they were not written for.
        acme::diagnose::JobEnd job;
        job.log = text;
        job.job_exit = acme::diagnose::ExitStatus{1, 0};
        auto d = engine.diagnose(job);
        if (d.confidence < 0.0 || d.confidence > 1.0) __builtin_trap();
    } catch (const acme::diagnose::RuleError&) {
    }
    return 0;
}
