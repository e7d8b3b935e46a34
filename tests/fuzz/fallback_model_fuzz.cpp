// libFuzzer target for the learned fallback's model parser (rules.d/fallback.model): any bytes
// either parse into a model that predicts a probability in [0, 1] for its own text, or are
// refused with a RuleError. Nothing else may escape, crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/diagnose/fallback.hpp"
#include "common/diagnose/rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        auto model = acme::diagnose::FallbackModel::parse(text, "fuzz.model");
        auto p = model.predict(text);
        if (!(p.probability >= 0.0 && p.probability <= 1.0)) __builtin_trap();
    } catch (const acme::diagnose::RuleError&) {
    }
    return 0;
}
