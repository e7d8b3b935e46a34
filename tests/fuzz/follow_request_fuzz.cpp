// libFuzzer target for evalsched follow's inputs: the first byte picks a POST /v1/follows body
// or the checkpoint scanner's output. A body is accepted or refused with RequestError /
// SuiteError, nothing else; scanner lines parse into checkpoints directly under the follow's
// directory, never anywhere else, and plan_follow decides each at most once.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "evalsched/daemon/follow_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace acme::evalsched;
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] & 1) {
        try {
            const FollowRequest r = parse_follow(text);
            if (r.dir.empty() || r.dir[0] != '/' || r.options.every < 0 || !valid_name(r.submit.name)) std::abort();
        } catch (const RequestError&) {
        } catch (const SuiteError&) {
        }
        return 0;
    }
    const std::string dir = "/ckpt/run7";
    const auto scanned = parse_scan_output(text, dir);
    std::vector<FollowedCheckpoint> complete;
    for (const auto& s : scanned) {
        const auto& p = s.checkpoint.path;
        if (!p.starts_with(dir + "/") || p.find('/', dir.size() + 1) != std::string::npos || s.checkpoint.step < 0) std::abort();
        complete.push_back(s.checkpoint);
    }
    const FollowOptions options{static_cast<long long>(data[0] >> 2) * 100, (data[0] & 2) != 0};
    std::set<std::string> seen;
    for (const auto& d : plan_follow(complete, FollowMemory{}, options))
        if (d.submit && !seen.insert(d.checkpoint.path).second) std::abort();
    return 0;
}
