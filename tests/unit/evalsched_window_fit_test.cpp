// No trial held forever (issue 21): what a submission does with a trial whose --time no
// backfill window (bf_window) can hold.
#include <doctest/doctest.h>

#include <cmath>

#include <functional>

#include <nlohmann/json.hpp>

#include "evalsched/core/window_fit.hpp"
#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/store/schema.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;

namespace {

Trial trial(const std::string& dataset, double p90_s, PriorSource source, int num_shards = 1) {
    Trial t;
    t.id = "run7/step-1/" + dataset;
    t.parts = {{dataset, 0, num_shards}};
    t.prior = Estimate{p90_s / 2, p90_s, source, 0};
    t.startup_s = 60;
    return t;
}

}  // namespace

TEST_CASE("a trial that fits the window is left alone") {
    TrialSet set{{trial("mmlu", 1200, PriorSource::history)}, {}, {}};
    const auto fit = fit_to_window(set, 3600, 0.2, 120);
    CHECK(fit.notes.empty());
    CHECK_FALSE(fit.refusal);
    CHECK(set.trials[0].prior.p90_s == 1200);
}

TEST_CASE("a guessed estimate (no prior, no samples) too long for any window is capped to fit it, with a note naming the dataset") {
    TrialSet set{{trial("mmlu", 1200, PriorSource::history), trial("newqa", 7200, PriorSource::unknown)}, {}, {}};
    const auto fit = fit_to_window(set, 3600, 0.2, 120);
    CHECK_FALSE(fit.refusal);
    REQUIRE(fit.notes.size() == 1);
    CHECK(fit.notes[0].find("newqa: no measured run time and no samples count") == 0);
    CHECK(fit.notes[0].find("its --time is capped at 1h") != std::string::npos);
    const Trial& t = set.trials[1];
    // The planner's limit (startup + p90 x 1.2 + margin, whole minutes) now fits 1 h exactly.
    CHECK(std::ceil((t.startup_s + t.prior.p90_s * 1.2 + 120) / 60) * 60 <= 3600);
    CHECK(t.prior.median_s <= t.prior.p90_s);
}

TEST_CASE("a measured estimate too long for any window refuses the submission, naming the dataset and what to do") {
    TrialSet set{{trial("longbench", 7200, PriorSource::history)}, {}, {}};
    const auto fit = fit_to_window(set, 3600, 0.2, 120);
    REQUIRE(fit.refusal);
    CHECK(fit.refusal->find("dataset longbench needs a") == 0);
    CHECK(fit.refusal->find("bf_window=1h") != std::string::npos);
    CHECK(fit.refusal->find("set shard = true for it in the suite") != std::string::npos);
    // Nothing changed: a refused submission stores nothing.
    CHECK(set.trials[0].prior.p90_s == 7200);
    TrialSet sharded{{trial("longbench", 7200, PriorSource::samples, 8)}, {}, {}};
    const auto s = fit_to_window(sharded, 3600, 0.2, 120);
    REQUIRE(s.refusal);
    CHECK(s.refusal->find("even in 8 shards") != std::string::npos);
}

TEST_CASE("submit: a dataset whose known run time no window holds is refused naming it; a guessed one is capped with a note") {
    acme::test::TempDir t;
    auto db = acme::store::open_evalsched_store(t.file("e.db"));
    DaemonConfig config;
    config.results_dir = t.file("results");
    const Caller alice{1001, 1001, "alice", false};
    ApiCaches caches;
    const std::function<void()> wake = [] {};
    RouteMatch match;
    match.row = &route_row("POST", "/v1/evaluations");
    auto submit = [&](const std::string& suite) {
        const std::string body = nlohmann::json{{"checkpoint", "/ckpt/run7/step-100"}, {"suite", suite}, {"params_b", 7}}.dump();
        RouteContext ctx{db, config, alice, match, body, caches, wake, 8, 1000};
        return route_submit(ctx);
    };
    const std::string head = "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n";
    const Reply refused = submit(head + "[[dataset]]\nname = \"longbench\"\nkind = \"generation\"\nprior = \"3h\"\n");
    CHECK(refused.code == 400);
    CHECK(refused.text.find("dataset longbench needs a") != std::string::npos);
    auto n = db.prepare("SELECT COUNT(*) FROM evaluations");
    n.step();
    CHECK(n.column_int(0) == 0);
    const Reply capped = submit(head + "[[dataset]]\nname = \"newqa\"\nkind = \"generation\"\n");
    REQUIRE(capped.code == 201);
    const auto body = nlohmann::json::parse(capped.text);
    REQUIRE(body.contains("notes"));
    CHECK(body["notes"][0].get<std::string>().find("newqa: no measured run time") == 0);
    auto p90 = db.prepare("SELECT p90_s, startup_s FROM trials");
    REQUIRE(p90.step());
    CHECK(std::ceil((p90.column_double(1) + p90.column_double(0) * (1 + config.margin_fraction) + config.margin_s) / 60) * 60 <= config.bf_window_s);
}
