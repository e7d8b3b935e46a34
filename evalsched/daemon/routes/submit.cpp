// POST /v1/evaluations: a checkpoint and a suite, checked field by field (api_request), cut
// into trials by the core (trials_for_submission, the same function evalsched-sim and the
// fuzz target run), stored with them in one transaction, then the scheduler is woken.
#include "common/store/evalsched_store.hpp"
#include "evalsched/core/trials.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/job_script.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/routes/route.hpp"
#include "evalsched/daemon/views.hpp"

namespace acme::evalsched {

Reply route_submit(RouteContext& ctx) {
    SubmitRequest sr;
    try {
        sr = parse_submit(ctx.body);
    } catch (const RequestError& e) {
        return error_reply(400, e.what());
    } catch (const SuiteError& e) {
        return error_reply(400, e.what());
    }
    PriorBook priors;
    for (const auto& r : store::recent_prior_runs(ctx.db)) priors.add_run({r.dataset, r.size_class, r.gpus}, r.seconds, r.fraction);
    const ModelSpec model{sr.params_b, sr.checkpoint_bytes};
    // The trials' commands name the evaluation's output directory, known once its id is.
    const std::int64_t id = create_evaluation(
        ctx.db, sr, ctx.caller, ctx.config.results_dir,
        [&](const std::string& output_dir) {
            const Checkpoint ckpt{sr.name + "/" + sr.checkpoint, std::string(kStagedVar), output_dir, model};
            return trials_for_submission(sr.suite, ckpt, priors, ctx.cluster_gpus);
        },
        ctx.now);
    log_line("evaluation {} submitted by {}: {} ({} datasets of suite {})", id, ctx.caller.user, sr.checkpoint_path,
             sr.suite.datasets.size(), sr.suite.name);
    ctx.wake();
    auto e = evaluation_json(ctx.db, id, ctx.caller);
    return json_reply(201, e ? *e : nlohmann::json{{"id", id}});
}

}  // namespace acme::evalsched
