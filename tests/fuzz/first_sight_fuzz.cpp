// libFuzzer target for the first-sight record reader (tests/data/first-sight/*.tsv, read by the
// diagnosis bench): any bytes either parse into a record whose figures are proportions, or are
// refused with std::runtime_error. Nothing else may escape, crash or hang.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "common/diagnose/corpus.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        auto record = acme::diagnose::corpus::parse_first_sight(text, "fuzz.tsv");
        const auto& s = record.score;
        if (s.category_accuracy() < 0 || s.category_accuracy() > 1 || s.infrastructure_precision() > 1 ||
            s.infrastructure_recall() > 1)
            __builtin_trap();
    } catch (const std::runtime_error&) {
    }
    return 0;
}
