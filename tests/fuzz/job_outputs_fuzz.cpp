// libFuzzer target for the records a job's user writes in its attempt directory (job_outputs):
// stage.json, run.json, step.json, server.json, result.json. Whatever the text, each reader
// answers a record or one line naming the file, never throws (a throw once stopped every
// scheduling round), and what it answers is in range: an exit status 0-255, a TCP port, a
// non-negative step, a finite non-negative run time.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "evalsched/daemon/sched/job_outputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace acme::evalsched;
    UserText t;
    t.status = UserText::ok;
    t.text.assign(reinterpret_cast<const char*>(data), size);
    auto object = [&](std::string_view file) {
        auto j = parse_user_object(t, file, 1000);
        if (!j.value && j.problem.empty() && t.status == UserText::ok) std::abort();  // present text is a record or a problem
        if (j.bad() && !j.problem.starts_with(file)) std::abort();
        return j;
    };
    const auto stage = stage_record_of(object("stage.json"));
    if (stage.value && (!std::isfinite(stage.value->bytes) || !std::isfinite(stage.value->seconds))) std::abort();
    std::string problem;
    const RunRecord run = run_record_of(object("run.json"), &problem);
    if (run.exit_code && (*run.exit_code < 0 || *run.exit_code > 255)) std::abort();
    if (run.seconds && !(*run.seconds >= 0)) std::abort();
    if (!problem.empty() && !problem.starts_with("run.json")) std::abort();
    if (const auto step = step_record_of(object("step.json")); step.value && *step.value < 0) std::abort();
    if (const auto server = server_record_of(object("server.json")); server.value && server.value->port && (*server.value->port < 1 || *server.value->port > 65535))
        std::abort();
    const auto result = result_record_of(object("result.json"), "result.json");
    if (result.value && result.value->contains("inference_s") && !(*result.value)["inference_s"].is_number()) std::abort();
    return 0;
}
