// libFuzzer target for the suite parser: any input either parses or is refused with a
// SuiteError whose message starts with the file name; nothing else may escape, crash or hang.
// An accepted suite is also cut into trials, which renders every command template.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "evalsched/core/suite.hpp"
#include "evalsched/core/trials.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace acme::evalsched;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const Suite suite = parse_suite(text, "fuzz.toml");
        if (suite.datasets.empty()) std::abort();  // the parser promises at least one
        const PriorBook priors;
        const Checkpoint ckpt{"c", "/stage/c", "/out/c", ModelSpec{}};
        const TrialSet set = make_trials(suite, ckpt, priors, options_for(suite, priors, ckpt.model, 8));
        if (set.metrics.size() != suite.datasets.size()) std::abort();
        // Suite groups: one job per group, waiting for at least one trial of its leaves.
        if (set.group_metrics.size() != suite.groups.size()) std::abort();
        for (const auto& g : set.group_metrics)
            if (g.after.empty()) std::abort();
        // A suite that serves: its client_command renders for every dataset as well.
        if (suite.serving) make_trials(serving_suite(suite), ckpt, priors, options_for(suite, priors, ckpt.model, 8));
    } catch (const SuiteError& e) {
        if (std::string_view(e.what()).substr(0, 10) != "fuzz.toml:") std::abort();
    }
    return 0;
}
