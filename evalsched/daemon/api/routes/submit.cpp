// POST /v1/evaluations: a checkpoint and a suite, checked field by field (api_request), cut
// into trials by the core (trials_for_submission, the same function evalsched-sim and the
// fuzz target run), stored with them in one transaction, then the scheduler is woken.
#include <stdexcept>

#include <fmt/format.h>

#include "evalsched/core/trials.hpp"
#include "evalsched/core/window_fit.hpp"
#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/log.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/views.hpp"
#include "evalsched/store/priors.hpp"

namespace acme::evalsched {
namespace {

// An evaluation over max_trials, or with a trial no window can hold, found once its trials
// are built (inside the transaction, which it rolls back).
struct TooManyTrials : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace

Reply route_submit(RouteContext& ctx) {
    SubmitRequest sr;
    try {
        sr = parse_submit(ctx.body);
    } catch (const RequestError& e) {
        return error_reply(400, e.what());
    } catch (const SuiteError& e) {
        return error_reply(400, e.what());
    }
    // One evaluation is built and stored in one go: its size is bounded (evalsched.conf(5)).
    if (sr.suite.datasets.size() > static_cast<std::size_t>(ctx.config.max_datasets))
        return error_reply(400, fmt::format("suite {} has {} datasets, more than max_datasets={} allows per evaluation: split it into "
                                            "several suites, or raise max_datasets in evalsched.conf",
                                            printable(sr.suite.name), sr.suite.datasets.size(), ctx.config.max_datasets));
    // One user's loop of submissions cannot hold the scheduler for everyone: active evaluations per user are bounded.
    if (const int active = active_evaluations_of(ctx.db, ctx.caller.uid); active >= ctx.config.max_evaluations_per_user)
        return error_reply(429, fmt::format("you have {} active evaluations, the most evalschedd takes per user (max_evaluations_per_user={}): "
                                            "wait for some to finish, or evalsched cancel some",
                                            active, ctx.config.max_evaluations_per_user));
    // Pilots that serve (evalsched-suite(5)): the trials run the suite's client_command against
    // their pilot's server; in mode = trials the serving keys are ignored.
    sr.served = ctx.config.pilots && sr.suite.serving.has_value();
    const Suite suite = sr.served ? serving_suite(sr.suite) : sr.suite;
    PriorBook priors;
    priors.add_window(store::recent_priors(ctx.db));
    const ModelSpec model{sr.params_b, sr.checkpoint_bytes};
    // The trials' commands name the evaluation's output directory, known once its id is.
    std::int64_t id = 0;
    std::vector<std::string> notes;  // trials whose --time was capped to fit a window
    try {
        id = create_evaluation(
            ctx.db, sr, ctx.caller, ctx.config.results_dir,
            [&](const std::string& output_dir) {
                const Checkpoint ckpt{sr.name + "/" + sr.checkpoint, std::string(kStagedVar), output_dir, model};
                TrialSet set = trials_for_submission(suite, ckpt, priors, ctx.cluster_gpus);
                if (set.trials.size() > static_cast<std::size_t>(ctx.config.max_trials))
                    throw TooManyTrials(fmt::format("suite {} makes {} trials, more than max_trials={} allows per evaluation: shard "
                                                    "less, split the suite, or raise max_trials in evalsched.conf",
                                                    printable(sr.suite.name), set.trials.size(), ctx.config.max_trials));
                // No trial held forever: capped to the longest window, or the submission refused.
                WindowFit fit = fit_to_window(set, ctx.config.bf_window_s, ctx.config.margin_fraction, ctx.config.margin_s);
                if (fit.refusal) throw TooManyTrials(*fit.refusal);
                notes = std::move(fit.notes);
                return set;
            },
            ctx.now);
    } catch (const TooManyTrials& e) {
        return error_reply(400, e.what());
    }
    log_line("evaluation {} submitted by {}: {} ({} datasets of suite {})", id, ctx.caller.user, printable(sr.checkpoint_path, 200),
             sr.suite.datasets.size(), printable(sr.suite.name));
    for (const auto& n : notes) log_line("evaluation {}: {}", id, n);
    ctx.wake();
    auto e = evaluation_json(ctx.db, id, ctx.caller);
    nlohmann::json body = e ? *e : nlohmann::json{{"id", id}};
    if (!notes.empty()) body["notes"] = notes;
    return json_reply(201, body);
}

}  // namespace acme::evalsched
