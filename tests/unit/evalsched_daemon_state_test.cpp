#include <doctest/doctest.h>

#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/sched/job_files.hpp"
#include "evalsched/daemon/sched/trial_kind.hpp"
#include "evalsched/daemon/state.hpp"
#include "evalsched/store/schema.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;

namespace {

const char* kSuite =
    "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n"
    "[[dataset]]\nname = \"mmlu\"\nkind = \"multiple_choice\"\nsamples = 100\n[[dataset]]\nname = \"gsm8k\"\nkind = \"generation\"\nsamples = 50\n";

std::int64_t submit_as(acme::store::Database& db, const Caller& c) {
    const auto req = parse_submit(nlohmann::json{{"checkpoint", "/ckpt/run7/step-100"}, {"suite", kSuite}}.dump());
    return create_evaluation(
        db, req, c, "/results",
        [&](const std::string& out) {
            Checkpoint ck{"run7/step-100", "\"$S\"", out, ModelSpec{}};
            return make_trials(req.suite, ck, PriorBook{});
        },
        1000);
}

// A dataset long enough for two shards (50 min of a 7B model over 1800 s shards), scored by a
// metric job; a short one scored in its trial.
const char* kShardedSuite =
    "[suite]\nname = \"m\"\ncommand = \"eval {checkpoint} {dataset} {shard} {num_shards} {output}\"\n"
    "[[dataset]]\nname = \"longqa\"\nkind = \"generation\"\nprior = \"50m\"\nshard = true\n"
    "metric_command = \"score {dataset} {output}\"\n"
    "[[dataset]]\nname = \"piqa\"\nkind = \"multiple_choice\"\nprior = \"10m\"\n";

std::int64_t submit_sharded(acme::store::Database& db, const Caller& c) {
    const auto req = parse_submit(nlohmann::json{{"checkpoint", "/ckpt/run7/step-100"}, {"suite", kShardedSuite}}.dump());
    return create_evaluation(
        db, req, c, "/results",
        [&](const std::string& out) { return make_trials(req.suite, Checkpoint{"run7/step-100", "\"$S\"", out, ModelSpec{}}, PriorBook{}); },
        1000);
}

// Submits and finishes trial `t` successfully (its own scores, if any).
void run_trial(acme::store::Database& db, const TrialRow& t, std::int64_t job, std::vector<Outcome::Score> scores = {}) {
    auto a = begin_attempt(db, t, "n1", 3600, 1000);
    attempt_submitted(db, a, job);
    Outcome ok;
    ok.success = true;
    ok.node = "n1";
    ok.scores = std::move(scores);
    finish_attempt(db, a, ok, "7b", 1100);
}

}  // namespace

TEST_CASE("users see and cancel only their own evaluations; admins see all") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false}, bob{1002, 1002, "bob", false}, admin{0, 0, "root", true};
    const auto id = submit_as(db, alice);
    CHECK(evaluation_json(db, id, alice));
    CHECK_FALSE(evaluation_json(db, id, bob));
    CHECK(evaluation_json(db, id, admin));
    CHECK(list_json(db, bob).empty());
    CHECK(list_json(db, admin).size() == 1);
    CHECK(cancel_evaluation(db, id, bob, 1001) == CancelResult::not_found);
    CHECK(cancel_evaluation(db, id, alice, 1001) == CancelResult::cancelled);
    CHECK(cancel_evaluation(db, id, alice, 1002) == CancelResult::already_finished);
}

TEST_CASE("an attempt lost between marking and submitting is forgotten, and the trial is pending again") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = submit_as(db, Caller{1001, 1001, "alice", false});
    auto pending = trials_in_state(db, {"pending"});
    REQUIRE(pending.size() == 2);
    CHECK(pending[0].command.find("/results/" + std::to_string(id) + "/") != std::string::npos);
    const AttemptRow a = begin_attempt(db, pending[0], "n1", 300, 1000);
    CHECK(a.tag == attempt_tag(instance_id(db), id, pending[0].id, 1));
    CHECK(instance_id(db).size() == 8);
    CHECK(open_attempts(db).size() == 1);
    attempt_never_submitted(db, a, "");
    CHECK(open_attempts(db).empty());
    CHECK(trials_in_state(db, {"pending"}).size() == 2);
    CHECK(load_trial(db, pending[0].id)->attempts == 0);
}

TEST_CASE("finished trials store scores and priors; an infrastructure failure retries without the node") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    const auto id = submit_as(db, alice);
    auto pending = trials_in_state(db, {"pending"});
    auto a = begin_attempt(db, pending[0], "n1", 300, 1000);
    attempt_submitted(db, a, 42);
    Outcome fail;
    fail.node = "n1";
    fail.category = "infrastructure";
    fail.reason = "gpu_ecc";
    fail.retry = true;
    fail.exclude_node = "n1";
    finish_attempt(db, a, fail, "7b", 1010);
    auto t = load_trial(db, pending[0].id);
    CHECK(t->state == "pending");
    CHECK(t->excluded_nodes == "n1");
    a = begin_attempt(db, *t, "n2", 300, 1020);
    CHECK(a.number == 2);
    attempt_submitted(db, a, 43);
    Outcome ok;
    ok.success = true;
    ok.node = "n2";
    ok.scores = {{t->datasets, "accuracy", 0.5}};
    ok.run_s = 30;
    ok.stage = Outcome::Stage{true, 1000, 1};
    finish_attempt(db, a, ok, "7b", 1050);
    CHECK(load_trial(db, pending[0].id)->state == "done");
    const auto report = report_json(db, "run7", alice);
    REQUIRE(report);
    CHECK((*report)["checkpoints"].size() == 1);
    CHECK(acme::store::recent_prior_runs(db).size() == 1);
    CHECK((*evaluation_json(db, id, alice))["shared_bytes_read"] == 1000);
}

TEST_CASE("the list counts every evaluation's trials and stagings apart, as showing each one does") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false}, bob{1002, 1002, "bob", false}, admin{0, 0, "root", true};
    const auto first = submit_as(db, alice);
    const auto second = submit_as(db, bob);
    const auto third = submit_as(db, alice);
    // first: one trial done with a copy, one running; second: cancelled; third: untouched.
    auto pending = trials_in_state(db, {"pending"});
    REQUIRE(pending.size() == 6);
    auto a = begin_attempt(db, pending[0], "n1", 300, 1000);
    attempt_submitted(db, a, 42);
    Outcome ok;
    ok.success = true;
    ok.node = "n1";
    ok.scores = {{pending[0].datasets, "accuracy", 0.5}};
    ok.stage = Outcome::Stage{true, 1000, 1};
    finish_attempt(db, a, ok, "7b", 1050);
    auto b = begin_attempt(db, pending[1], "n2", 300, 1060);
    attempt_submitted(db, b, 43);
    attempt_running(db, b, "n2");
    CHECK(cancel_evaluation(db, second, bob, 1070) == CancelResult::cancelled);

    const auto all = list_json(db, admin);
    REQUIRE(all.size() == 3);
    for (const auto& e : all) {
        auto shown = *evaluation_json(db, e["id"].get<std::int64_t>(), admin);
        shown.erase("trial_list");
        shown.erase("metric_list");
        shown.erase("stage_list");
        shown.erase("pilot_list");
        // What only showing one evaluation lists: its datasets one by one, its retries.
        shown.erase("dataset_list");
        shown.erase("retries");
        CHECK(e == shown);
    }
    CHECK(all[0]["id"] == first);
    CHECK(all[0]["trials"]["done"] == 1);
    CHECK(all[0]["trials"]["running"] == 1);
    CHECK(all[0]["trials"]["pending"] == 0);
    CHECK(all[0]["running_gpus"] == pending[1].gpus);
    CHECK(all[0]["remaining_gpu_s"] == doctest::Approx(pending[1].gpus * (pending[1].startup_s + pending[1].median_s)));
    CHECK(all[0]["shared_bytes_read"] == 1000);
    CHECK(all[0]["copies"] == 1);
    CHECK(all[1]["trials"]["cancelled"] == 2);
    CHECK(all[1]["remaining_gpu_s"] == 0);
    CHECK(all[2]["trials"]["pending"] == 2);
    CHECK(all[2]["copies"] == 0);
    const auto mine = list_json(db, alice);
    REQUIRE(mine.size() == 2);
    CHECK(mine[0]["id"] == first);
    CHECK(mine[1]["id"] == third);
}

TEST_CASE("the priors cache answers what priors_json does and rereads only when a prior run is added or pruned") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    PriorsCache cache;
    CHECK(cache.get(db, "").empty());
    acme::store::record_prior_run(db, {"mmlu", "7b", 1, 100, 1, "run7/a", "n1", 10});
    acme::store::record_prior_run(db, {"gsm8k", "7b", 1, 50, 1, "run7/a", "n1", 11});
    CHECK(cache.get(db, "") == priors_json(db, ""));
    CHECK(cache.rebuilds() == 2);
    CHECK(cache.get(db, "gsm8k") == priors_json(db, "gsm8k"));
    CHECK(cache.get(db, "nope") == priors_json(db, "nope"));
    CHECK(cache.rebuilds() == 2);
    // A state change without a prior run keeps the cache.
    submit_as(db, Caller{1001, 1001, "alice", false});
    cache.get(db, "");
    CHECK(cache.rebuilds() == 2);
    for (int i = 0; i < 3; ++i) acme::store::record_prior_run(db, {"mmlu", "7b", 1, 200.0 + i, 1, "run7/b", "n1", 20.0 + i});
    CHECK(cache.get(db, "mmlu") == priors_json(db, "mmlu"));
    CHECK(cache.rebuilds() == 3);
    CHECK(acme::store::prune_prior_runs(db, 1) == 3);
    CHECK(cache.get(db, "") == priors_json(db, ""));
    CHECK(cache.rebuilds() == 4);
}

TEST_CASE("a sharded dataset's metric job is chained to every shard's job and scores the dataset once") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    const auto id = submit_sharded(db, alice);
    auto trials = trials_in_state(db, {"pending"});
    REQUIRE(trials.size() == 3);  // longqa#0of2, longqa#1of2, piqa
    CHECK(metric_datasets(db, id) == std::set<std::string>{"longqa"});
    auto waiting = metrics_in_state(db, {"waiting"});
    REQUIRE(waiting.size() == 1);
    MetricRow m = waiting[0];
    CHECK(m.dataset == "longqa");
    CHECK(m.command == "score longqa /results/" + std::to_string(id) + "/longqa");
    REQUIRE(m.trials.size() == 2);

    // Nothing to chain to until both shards are jobs in Slurm's queue.
    CHECK(decide_metric(metric_trial_progress(db, m)).kind == MetricDecision::Kind::wait);
    auto a0 = begin_attempt(db, *load_trial(db, m.trials[0]), "n1", 3600, 1000);
    attempt_submitted(db, a0, 50);
    CHECK(decide_metric(metric_trial_progress(db, m)).kind == MetricDecision::Kind::wait);
    auto a1 = begin_attempt(db, *load_trial(db, m.trials[1]), "n2", 3600, 1000);
    CHECK(decide_metric(metric_trial_progress(db, m)).kind == MetricDecision::Kind::wait);  // submitting: no job id yet
    attempt_submitted(db, a1, 51);
    auto d = decide_metric(metric_trial_progress(db, m));
    CHECK(d.kind == MetricDecision::Kind::submit);
    CHECK(d.after == std::vector<std::int64_t>{50, 51});

    m = begin_metric(db, m, 1001);
    CHECK(m.tag == metric_tag(instance_id(db), id, m.id, 1));
    metric_submitted(db, m, 60, "50:51");
    CHECK(metrics_in_state(db, {"queued"}).size() == 1);

    // Inference done everywhere (piqa scored in its trial): the evaluation waits for the metric job.
    Outcome ok;
    ok.success = true;
    ok.node = "n1";
    finish_attempt(db, a0, ok, "7b", 1100);
    finish_attempt(db, a1, ok, "7b", 1100);
    run_trial(db, trials[2], 52, {{"piqa", "accuracy", 0.7}});
    auto e = *evaluation_json(db, id, alice);
    CHECK(e["state"] == "active");
    CHECK(e["trials"]["done"] == 3);
    CHECK(e["metric_jobs"]["queued"] == 1);
    auto report = *report_json(db, "run7", alice);
    bool scoring = false;
    for (const auto& r : report["rows"])
        if (r["dataset"] == "longqa") scoring = r["values"][std::to_string(id)] == "scoring";
    CHECK(scoring);

    metric_running(db, m, "n3");
    MetricOutcome done;
    done.kind = MetricOutcome::Kind::done;
    done.node = "n3";
    done.scores = {{"longqa", "exact_match", 0.4}};
    finish_metric(db, m, done, 1200);
    e = *evaluation_json(db, id, alice);
    CHECK(e["state"] == "done");
    CHECK(e["metric_list"][0]["state"] == "done");
    CHECK(e["metric_list"][0]["node"] == "n3");
    report = *report_json(db, "run7", alice);
    std::map<std::string, nlohmann::json> value;
    for (const auto& r : report["rows"]) value[r["dataset"].get<std::string>() + "/" + r["metric"].get<std::string>()] = r["values"][std::to_string(id)];
    CHECK(value["longqa/exact_match"] == 0.4);  // the whole dataset's score, not a shard's share
    CHECK(value["piqa/accuracy"] == 0.7);
    CHECK(value.size() == 2);
}

TEST_CASE("a metric job chained to a failed shard waits for the retry, and gives up when the shard fails for good") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    const auto id = submit_sharded(db, alice);
    MetricRow m = metrics_in_state(db, {"waiting"})[0];
    auto a0 = begin_attempt(db, *load_trial(db, m.trials[0]), "n1", 3600, 1000);
    attempt_submitted(db, a0, 50);
    auto a1 = begin_attempt(db, *load_trial(db, m.trials[1]), "n2", 3600, 1000);
    attempt_submitted(db, a1, 51);
    m = begin_metric(db, m, 1001);
    metric_submitted(db, m, 60, "50:51");
    // Shard 1 hit a bad GPU and is retried elsewhere; the metric job ran after it and refused.
    Outcome infra;
    infra.node = "n2";
    infra.category = "infrastructure";
    infra.reason = "gpu_ecc";
    infra.retry = true;
    infra.exclude_node = "n2";
    finish_attempt(db, a1, infra, "7b", 1100);
    MetricOutcome not_ready;
    not_ready.kind = MetricOutcome::Kind::not_ready;
    not_ready.reason = "a trial of the dataset had not succeeded when it ran";
    finish_metric(db, m, not_ready, 1101);
    m = metrics_in_state(db, {"waiting"}).at(0);
    CHECK(m.failures == 0);  // waiting is not failing
    CHECK(decide_metric(metric_trial_progress(db, m)).kind == MetricDecision::Kind::wait);  // the retry is pending

    // The retry fails with the evaluation's own bug: the dataset is reported, never scored.
    auto retry = begin_attempt(db, *load_trial(db, m.trials[1]), "n3", 3600, 1200);
    CHECK(retry.number == 2);
    attempt_submitted(db, retry, 70);
    Outcome bug;
    bug.node = "n3";
    bug.category = "script";
    bug.reason = "value_error";
    finish_attempt(db, retry, bug, "7b", 1300);
    const auto d = decide_metric(metric_trial_progress(db, m));
    REQUIRE(d.kind == MetricDecision::Kind::give_up);
    CHECK(d.state == "failed");
    CHECK(d.reason.find("inference failed: run7/step-100/longqa#1of2") == 0);
    metric_given_up(db, m, d.state, d.reason, 1301);
    // piqa still pending keeps the evaluation open; a cancel ends it.
    CHECK((*evaluation_json(db, id, alice))["state"] == "active");
    CHECK(cancel_evaluation(db, id, alice, 1400) == CancelResult::cancelled);
    const auto e = *evaluation_json(db, id, alice);
    CHECK(e["metric_list"][0]["state"] == "failed");  // a decided fate stays
    const auto report = *report_json(db, "run7", alice);
    std::string longqa;
    for (const auto& r : report["rows"])
        if (r["dataset"] == "longqa") longqa = r["values"][std::to_string(id)].get<std::string>();
    CHECK(longqa.find("failed: ") == 0);
}

TEST_CASE("cancelling an evaluation cancels its metric jobs and asks for the queued one to be killed") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    const auto id = submit_sharded(db, alice);
    MetricRow m = metrics_in_state(db, {"waiting"})[0];
    m = begin_metric(db, m, 1001);
    CHECK(metrics_to_kill(db).empty());
    CHECK(cancel_evaluation(db, id, alice, 1002) == CancelResult::cancelled);
    // Cancelled while being submitted: the job the submission returns is recorded, then killed.
    metric_submitted(db, m, 60, "");
    auto kill = metrics_to_kill(db);
    REQUIRE(kill.size() == 1);
    CHECK(kill[0].job_id == 60);
    CHECK(kill[0].state == "cancelled");
    metric_killed(db, kill[0], 1003);
    CHECK(metrics_to_kill(db).empty());
    // Whatever the killed job reported afterwards, it stays cancelled.
    MetricOutcome done;
    done.kind = MetricOutcome::Kind::done;
    done.scores = {{"longqa", "exact_match", 0.4}};
    finish_metric(db, kill[0], done, 1004);
    CHECK(metrics_in_state(db, {"cancelled"}).size() == 1);
    CHECK((*report_json(db, "run7", alice))["rows"].dump().find("exact_match") == std::string::npos);
}

TEST_CASE("v4 turns a v3 trial's own metric job into a dataset metric job, keeping the job in flight") {
    acme::test::TempDir dir;
    {
        acme::store::Database db(dir.file("e.db"));
        acme::store::migrate(db, acme::store::evalsched_migrations().first(3));
        db.exec(
            "INSERT INTO evaluations (id, name, checkpoint, path, suite_name, suite_file, uid, gid, user, params_b, checkpoint_bytes,"
            " output_dir, state, submitted_at) VALUES (1, 'run7', 'step-100', '/c', 's', '', 1001, 1001, 'alice', 7, 14e9, '/r/1', 'active', 1);"
            "INSERT INTO trials (id, evaluation, trial_key, datasets, gpus, median_s, p90_s, startup_s, command, metric_command, state, attempts)"
            " VALUES (10, 1, 'run7/step-100/humaneval', 'humaneval', 1, 60, 90, 25, 'eval', 'score humaneval /r/1/humaneval', 'running', 1),"
            "        (11, 1, 'run7/step-100/mbpp', 'mbpp', 1, 60, 90, 25, 'eval', 'score mbpp /r/1/mbpp', 'pending', 0),"
            "        (12, 1, 'run7/step-100/piqa', 'piqa', 1, 60, 90, 25, 'eval', '', 'pending', 0);"
            "INSERT INTO attempts (trial, number, tag, job_id, metric_job, node, state) VALUES (10, 1, 'evalsched-ab-1-10-1', 40, 41, 'n1', 'running');");
    }
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    auto queued = metrics_in_state(db, {"queued"});
    REQUIRE(queued.size() == 1);
    CHECK(queued[0].dataset == "humaneval");
    CHECK(queued[0].tag == "evalsched-ab-1-10-1-metric");  // found again by the name v3 gave it
    CHECK(queued[0].job_id == 41);
    CHECK(queued[0].trials == std::vector<std::int64_t>{10});
    auto waiting = metrics_in_state(db, {"waiting"});
    REQUIRE(waiting.size() == 1);
    CHECK(waiting[0].dataset == "mbpp");
    CHECK(waiting[0].command == "score mbpp /r/1/mbpp");
    CHECK(metric_datasets(db, 1) == std::set<std::string>{"humaneval", "mbpp"});
    // The next submission of the old job's dataset gets a v4 tag.
    CHECK(begin_metric(db, queued[0], 5).tag == metric_tag(instance_id(db), 1, queued[0].id, 2));
}

TEST_CASE("the status list is rebuilt only for the evaluations that changed, and always equals a fresh one") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    // The scheduler's connection: its commits are what the API's cache must notice.
    auto sched = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false}, bob{1002, 1002, "bob", false}, admin{0, 0, "root", true};
    const auto first = submit_as(db, alice);
    const auto second = submit_sharded(db, bob);
    submit_as(db, alice);
    auto fresh = [&](const Caller& c) { return list_json(db, c).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
    SummaryCache cache;
    CHECK(cache.list_text(db, admin) == fresh(admin));
    CHECK(cache.rebuilt() == 3);
    CHECK(cache.list_text(db, admin) == fresh(admin));
    CHECK(cache.rebuilt() == 3);

    // A trial of the first starts and finishes: only its summary is rebuilt.
    const auto v0 = *evaluation_version(db, first, alice);
    auto t = trials_in_state(sched, {"pending"}).front();
    REQUIRE(t.evaluation == first);
    run_trial(sched, t, 42, {{t.datasets, "accuracy", 0.5}});
    CHECK(*evaluation_version(db, first, alice) > v0);
    CHECK_FALSE(evaluation_version(db, first, bob));
    CHECK(cache.list_text(db, admin) == fresh(admin));
    CHECK(cache.rebuilt() == 4);

    // A metric job moving and a cancellation are changes too; a report's stamp follows them.
    const std::string stamp = report_versions(db, "run7", admin);
    MetricRow m = metrics_in_state(sched, {"waiting"}).at(0);
    REQUIRE(m.evaluation == second);
    begin_metric(sched, m, 1100);
    CHECK(report_versions(db, "run7", admin) != stamp);
    CHECK(cancel_evaluation(sched, second, bob, 1200) == CancelResult::cancelled);
    CHECK(cache.list_text(db, admin) == fresh(admin));
    CHECK(cache.rebuilt() == 5);
    // Another caller sees only theirs, from the same kept summaries.
    CHECK(cache.list_text(db, bob) == fresh(bob));
    CHECK(cache.list_text(db, alice) == fresh(alice));
    CHECK(cache.rebuilt() == 5);
}

TEST_CASE("the suite's sample counts are stored with the evaluation and counted as its trials finish") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    const auto id = submit_as(db, alice);  // mmlu 100 samples, gsm8k 50
    auto e = *evaluation_json(db, id, alice);
    CHECK(e["datasets"]["samples_total"] == 150);
    CHECK(e["datasets"]["samples_done"] == 0);
    CHECK(e["datasets"]["samples_datasets"] == 2);
    auto pending = trials_in_state(db, {"pending"});
    REQUIRE(pending.size() == 2);
    run_trial(db, pending[0], 42, {{pending[0].datasets, "acc", 0.5}});
    e = *evaluation_json(db, id, alice);
    CHECK(e["datasets"]["samples_done"] == (pending[0].datasets == "mmlu" ? 100 : 50));
    // The list counts them the same way.
    CHECK(list_json(db, alice)[0]["datasets"] == e["datasets"]);
}

TEST_CASE("a job slurmctld refused is trouble on the evaluation, with Slurm's reason, until it is submitted") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    const auto id = submit_as(db, alice);
    auto pending = trials_in_state(db, {"pending"});
    const AttemptRow a = begin_attempt(db, pending[0], "n1", 300, 1000);
    DaemonConfig config;
    TrialKind(config, db, nullptr).refused(a, "Invalid account or account/partition combination specified");
    auto e = *evaluation_json(db, id, alice);
    REQUIRE(e["retries"].size() == 1);
    CHECK(e["retries"][0]["kind"] == "refused");
    CHECK(e["retries"][0]["text"] == pending[0].datasets +
                                         ": slurmctld refused the trial's job: Invalid account or account/partition combination specified; "
                                         "evalschedd submits it again every round");
    attempt_submitted(db, begin_attempt(db, pending[0], "n1", 300, 1001), 43);
    CHECK((*evaluation_json(db, id, alice))["retries"].empty());
}

TEST_CASE("a trial's startup is its wall time beyond the inference its parts reported, learned when it succeeds") {
    // run.json: 12.5 s around the command; the parts said 3 s and 4.5 s of inference.
    RunRecord run;
    run.seconds = 12.5;
    CHECK(measured_startup(run, 7.5) == doctest::Approx(5));
    // A part that did not say (nullopt), no run.json, or a harness whose inference_s exceeds
    // the wall time (its clock, not ours): nothing is learned.
    CHECK_FALSE(measured_startup(run, std::nullopt));
    CHECK_FALSE(measured_startup(RunRecord{}, 7.5));
    CHECK_FALSE(measured_startup(run, 13));

    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    submit_as(db, alice);
    auto pending = trials_in_state(db, {"pending"});
    REQUIRE(pending.size() == 2);
    // A failed attempt teaches nothing; a successful one its startup, per size class and GPUs.
    auto a = begin_attempt(db, pending[0], "n1", 300, 1000);
    attempt_submitted(db, a, 42);
    Outcome fail;
    fail.node = "n1";
    fail.category = "script";
    fail.startup_s = 99;
    finish_attempt(db, a, fail, "7b", 1010);
    CHECK(acme::store::recent_startups(db).empty());
    a = begin_attempt(db, pending[1], "n2", 300, 1020);
    attempt_submitted(db, a, 43);
    Outcome ok;
    ok.success = true;
    ok.node = "n2";
    ok.run_s = 30;
    ok.startup_s = 4.7;
    finish_attempt(db, a, ok, "7b", 1050);
    const auto learned = acme::store::recent_startups(db);
    REQUIRE(learned.size() == 1);
    CHECK(learned[0].size_class == "7b");
    CHECK(learned[0].gpus == 1);
    CHECK(learned[0].seconds == doctest::Approx(4.7));
    CHECK(learned[0].node == "n2");
    CHECK(learned[0].checkpoint == "run7/step-100");
    // The next submission's trials carry it, and `evalsched priors` lists it first.
    PriorBook book;
    book.add_window(acme::store::recent_priors(db));
    const auto req = parse_submit(nlohmann::json{{"checkpoint", "/ckpt/run7/step-200"}, {"suite", kSuite}}.dump());
    for (const auto& t : make_trials(req.suite, Checkpoint{"run7/step-200", "x", "/out", ModelSpec{}}, book).trials) CHECK(t.startup_s == doctest::Approx(4.7));
    const auto priors = priors_json(db, "");
    REQUIRE(priors.size() == 2);
    CHECK(priors[0]["dataset"] == "(startup)");
    CHECK(priors[0]["kind"] == "startup");
    CHECK(priors[0]["median_s"] == doctest::Approx(4.7));
    CHECK(priors[1]["kind"] == "run");
    CHECK(priors_json(db, pending[1].datasets).size() == 1);
    PriorsCache cache;
    CHECK(cache.get(db, "") == priors);
    acme::store::record_startup(db, {"7b", 1, 5.1, "run7/step-200", "n1", 1200});
    CHECK(cache.get(db, "") == priors_json(db, ""));
    CHECK(cache.rebuilds() == 2);
}
