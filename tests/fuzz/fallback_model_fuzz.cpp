// libFuzzer target for the learned fallback's model parser (rules.d/fallback.model, versions 1 and
// 2): any bytes either parse into a model whose threshold is in (0, 1], that predicts a
// probability in [0, 1] for its own text and whose own text reads back with the same threshold
// and reasons, or are refused with a RuleError. Nothing else may escape, crash or hang.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/diagnose/fallback.hpp"
#include "common/diagnose/rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        auto model = acme::diagnose::FallbackModel::parse(text, "fuzz.model");
        if (!(model.threshold() > 0.0 && model.threshold() <= 1.0)) __builtin_trap();
        auto p = model.predict(text);
        if (!(p.probability >= 0.0 && p.probability <= 1.0)) __builtin_trap();
        std::string own = model.to_text();
        try {
            auto again = acme::diagnose::FallbackModel::parse(own, "fuzz.model");
            if (again.threshold() != model.threshold() || again.reasons() != model.reasons()) __builtin_trap();
        } catch (const acme::diagnose::RuleError&) {
            __builtin_trap();  // what it wrote, it must read
        }
    } catch (const acme::diagnose::RuleError&) {
    }
    return 0;
}
