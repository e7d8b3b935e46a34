// libFuzzer target for evalschedd's request parsing: the first byte picks a path against one of
// the route table's pattern shapes, or a submission body. Any input is routed, parsed, or refused with RequestError / SuiteError;
// nothing else may escape, crash or hang. An accepted submission is cut into trials, as the
// daemon does next.
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>

#include "evalsched/core/trials.hpp"
#include "evalsched/daemon/api/api_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace acme::evalsched;
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        if (data[0] & 1) {
            // The shapes routes/table.cpp uses: literals only, {id} in the middle, {id} or
            // {name} taking the rest of the path.
            static constexpr std::string_view kShapes[] = {"/v1/evaluations", "/v1/evaluations/{id}", "/v1/evaluations/{id}/cancel",
                                                           "/v1/report/{name}", "/v1/priors/{name}"};
            const std::string_view shape = kShapes[(data[0] >> 1) % std::size(kShapes)];
            const auto args = match_path(shape, text, "bad '{}'");
            if (args && shape.find("{id}") != std::string_view::npos && args->id <= 0) std::abort();
            if (args && !args->arg.empty() && !valid_name(args->arg)) std::abort();
        } else {
            const SubmitRequest req = parse_submit(text);
            if (!valid_name(req.name) || !valid_name(req.checkpoint) || req.checkpoint_path.empty() || req.checkpoint_path[0] != '/')
                std::abort();
            const PriorBook priors;
            const Checkpoint ckpt{req.name + "/" + req.checkpoint, "\"$EVALSCHED_STAGED\"", "/out/1", ModelSpec{req.params_b, req.checkpoint_bytes}};
            // As the submit route does; data[0]'s high bits stand in for the cluster's GPUs.
            (void)trials_for_submission(req.suite, ckpt, priors, data[0] >> 2);
        }
    } catch (const RequestError&) {
    } catch (const SuiteError&) {
    }
    return 0;
}
