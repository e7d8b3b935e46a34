// libFuzzer: gpuacct's argument parsers (sacct times for -S/-E, the --format list, -s states,
// -k/-K time limits) and gpuacct.toml's [detail].
// Input: a selector byte, then the text. Properties: no crash, no UB; an accepted --format
// names only known fields; an error is one line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "acct/gpuacct/core/format_spec.hpp"
#include "acct/gpuacct/core/job_detail.hpp"
#include "acct/gpuacct/core/sacct_filters.hpp"
#include "acct/gpuacct/core/job_states.hpp"
#include "acct/gpuacct/core/sacct_time.hpp"

namespace {
constexpr std::string_view kKnown[] = {"JobID", "JobName", "State", "GPUUtil", "GPUUtilMax", "Reason"};
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    std::string error;
    switch (data[0] % 5) {
        case 0: {
            const auto t = acme::acct::parse_sacct_time(text, 1795966200, error);
            if (t) (void)acme::acct::format_sacct_time(static_cast<double>(*t));
            else if (error.empty() || error.find('\n') != std::string::npos) std::abort();
            break;
        }
        case 1: {
            const auto spec = acme::acct::parse_format_spec(text, kKnown, error);
            if (spec) {
                for (const auto& f : *spec) {
                    bool known = false;
                    for (auto k : kKnown) known = known || k == f.name;
                    if (!known || (f.width && (*f.width == 0 || *f.width > 1024 || *f.width < -1024))) std::abort();
                }
            } else if (error.empty() || error.find('\n') != std::string::npos) {
                std::abort();
            }
            break;
        }
        case 3:
            if (!acme::acct::parse_time_limit(text, error) && (error.empty() || error.find('\n') != std::string::npos))
                std::abort();
            break;
        case 4: {
            const auto t = acme::acct::parse_detail_config(text, error);
            if (!t && (error.empty() || error.find('\n') != std::string::npos)) std::abort();
            break;
        }
        default:
            if (!acme::acct::parse_state_list(text, error) && (error.empty() || error.find('\n') != std::string::npos))
                std::abort();
    }
    return 0;
}
