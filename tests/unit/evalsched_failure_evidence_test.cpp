// Issue 38: a failed trial says why in its log's own words and where its log is, and a failure
// that will repeat is not retried. The diagnosis runs the shipped rules over the logs the
// harnesses really print; the store, the views and the CLI's text are the daemon's own.
#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/diagnose/engine.hpp"
#include "evalsched/cli/render.hpp"
#include "evalsched/cli/report.hpp"
#include "evalsched/cli/watch.hpp"
#include "evalsched/core/decisions.hpp"
#include "evalsched/daemon/sched/job_files.hpp"
#include "evalsched/daemon/state.hpp"
#include "evalsched/store/schema.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;
using nlohmann::json;

namespace {

const acme::diagnose::Engine& shipped() {
    static const auto engine = acme::diagnose::Engine::from_dir(std::string(ACME_SRCDIR) + "/rules");
    return engine;
}

// What the daemon decides for a trial's first failed run whose log is `log` and whose job
// exited `exit`: diagnose_failure as TrialKind::judge calls it, then retries().
struct Decided {
    Failure f;
    bool retried;
};
Decided decide(const std::string& log, int exit) {
    acme::test::TempDir dir;
    EvalInfo e;
    e.uid = geteuid();
    e.gid = getegid();
    const std::string file = dir.file("job.out");
    std::ofstream(file) << log;
    acme::slurm::JobView job;
    job.exit_code = static_cast<std::uint32_t>(exit) << 8;
    job.state = 5;  // JOB_FAILED
    Decided d{diagnose_failure(&shipped(), file, e, &job), false};
    d.retried = retries(d.f.category, 1, 3);
    return d;
}

}  // namespace

TEST_CASE("a missing harness is command_not_found, said in the adapter's words, and never retried") {
    const auto d = decide(
        "acme-eval-lmeval: cannot run lm_eval: No such file or directory: install the harness, or name its environment in the suite's "
        "setup = \"...\" (see evalsched-suite(5)); PATH is /usr/bin:/bin\n",
        1);
    CHECK(d.f.reason == "command_not_found");
    CHECK(d.f.category == "script");
    CHECK(d.f.evidence.find("acme-eval-lmeval: cannot run lm_eval: No such file or directory") == 0);
    CHECK_FALSE(d.retried);
}

TEST_CASE("a task lm-eval does not know is dataset_loading_error, its ERROR line the evidence, never retried") {
    // lm_eval/__main__.py's words (upstream EleutherAI/lm-evaluation-harness).
    const auto d = decide(
        "2026-12-01:10:02:19 INFO     [__main__.py:376] Selected Tasks: []\n"
        "2026-12-01:10:02:19 ERROR    [__main__.py:353] Tasks were not found: gsm8kk\n"
        "                                               Try `lm-eval --tasks list` for list of available tasks\n"
        "Traceback (most recent call last):\n"
        "  File \"/opt/venv/lib/python3.11/site-packages/lm_eval/__main__.py\", line 357, in cli_evaluate\n"
        "    raise ValueError(\n"
        "ValueError: Tasks not found: gsm8kk. Try `lm-eval --tasks list` for list of available tasks, or '--verbosity DEBUG' to "
        "troubleshoot task registration issues.\n",
        1);
    CHECK(d.f.reason == "dataset_loading_error");
    CHECK(d.f.category == "framework");
    CHECK(d.f.evidence == "2026-12-01:10:02:19 ERROR    [__main__.py:353] Tasks were not found: gsm8kk");
    CHECK_FALSE(d.retried);
}

TEST_CASE("the fake harness's unknown dataset reads as lm-eval's: exit 2 is no longer unknown and retried") {
    const auto d = decide("fake-eval: Tasks not found: gsm8kk (/srv/core.durations has no duration for it: add a line 'gsm8kk<TAB>seconds')\n", 2);
    CHECK(d.f.reason == "dataset_loading_error");
    CHECK_FALSE(d.retried);
}

TEST_CASE("an infrastructure failure is still retried; a log nothing decides gives its last line as evidence") {
    const auto ecc = decide("loading\nRuntimeError: CUDA error: uncorrectable ECC error encountered\n", 1);
    CHECK(ecc.f.category == "infrastructure");
    CHECK(ecc.f.evidence == "RuntimeError: CUDA error: uncorrectable ECC error encountered");
    CHECK(ecc.retried);
    CHECK_FALSE(retries(ecc.f.category, 3, 3));  // and only so often
    const auto odd = decide("step 1\nharness: giving up on shard 3\n\n  \n", 3);
    CHECK(odd.f.category == "unknown");
    CHECK(odd.f.reason == "exit 3");
    CHECK(odd.f.evidence == "harness: giving up on shard 3");
    CHECK(odd.retried);  // the benefit of the doubt, as before
}

namespace {

const char* kSuite =
    "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n"
    "[[dataset]]\nname = \"piqa\"\nkind = \"multiple_choice\"\nprior = \"5m\"\nmetric_command = \"score {dataset} {output}\"\n";

}  // namespace

TEST_CASE("a trial that fails for good keeps its evidence and log; its dataset's queued metric job is stopped, not run") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    const auto req = parse_submit(json{{"checkpoint", "/ckpt/run7/step-100"}, {"suite", kSuite}}.dump());
    const auto id = create_evaluation(
        db, req, alice, "/results",
        [&](const std::string& out) { return make_trials(req.suite, Checkpoint{"run7/step-100", "\"$S\"", out, ModelSpec{}}, PriorBook{}); }, 1000);
    MetricRow m = metrics_in_state(db, {"waiting"}).at(0);
    auto a = begin_attempt(db, *load_trial(db, m.trials.at(0)), "n1", 3600, 1000);
    attempt_submitted(db, a, 50);
    m = begin_metric(db, m, 1001);
    metric_submitted(db, m, 60, "50");
    Outcome bug;
    bug.node = "n1";
    bug.category = "framework";
    bug.reason = "value_error";
    bug.evidence = "ValueError: invalid literal in piqa answer key";
    bug.log = "/results/1/logs/evalsched-1-1.out";
    finish_attempt(db, a, bug, "7b", 1100);
    // The queued metric job will never score: failed, and handed to the kill loop.
    const auto kill = metrics_to_kill(db);
    REQUIRE(kill.size() == 1);
    CHECK(kill[0].job_id == 60);
    metric_killed(db, kill[0], 1101);
    CHECK(metrics_to_kill(db).empty());
    CHECK(metrics_in_state(db, {"waiting", "submitting", "queued", "running"}).empty());

    const json e = *evaluation_json(db, id, alice);
    CHECK(e["state"] == "failed");
    CHECK(e["trial_list"][0]["evidence"] == bug.evidence);
    CHECK(e["trial_list"][0]["attempt_list"][0]["log"] == bug.log);
    CHECK(e["metric_list"][0]["state"] == "failed");
    CHECK(e["metric_list"][0]["reason"].get<std::string>().find("inference failed: ") == 0);
    REQUIRE(e["dataset_list"].size() == 1);
    CHECK(e["dataset_list"][0]["evidence"] == bug.evidence);
    CHECK(e["dataset_list"][0]["log"] == bug.log);

    // status at 80 columns: the failure, then its evidence and log on lines of their own, whole.
    acme::util::TableStyle style;
    style.width = 80;
    const std::string status = render_evaluation(e, style, 1200);
    CHECK(status.find("\npiqa failed: value_error (framework)\n"
                      "    ValueError: invalid literal in piqa answer key\n"
                      "    log: /results/1/logs/evalsched-1-1.out\n") != std::string::npos);

    // The report: the cell says failed, the block below why and where.
    const json report = *report_json(db, "run7", alice);
    REQUIRE(report["failures"].size() == 1);
    CHECK(report["failures"][0]["evidence"] == bug.evidence);
    const std::string table = render_report(report, "table", style);
    CHECK(table.find("\npiqa on step-100 (evaluation " + std::to_string(id) + ") failed: value_error (framework)\n"
                     "    ValueError: invalid literal in piqa answer key\n"
                     "    log: /results/1/logs/evalsched-1-1.out\n") != std::string::npos);
}

TEST_CASE("failure lines wrap at spaces within the width and never cut a word or a path") {
    const json f{{"evidence", "RuntimeError: the quick brown fox jumps over the lazy dog while the harness waits for its turn"},
                 {"log", "/very/long/results/directory/of/an/evaluation/with/a/deep/path/logs/evalsched-7-123-1.out"}};
    const auto lines = failure_lines("arc_challenge failed: runtime_error (framework)", f, 40);
    for (const auto& l : lines)
        if (l.find("/very/long") == std::string::npos) CHECK(l.size() <= 40);
    CHECK(lines[0] == "arc_challenge failed: runtime_error");
    CHECK(lines[1] == "    (framework)");
    CHECK(lines[2] == "    RuntimeError: the quick brown fox");
    CHECK(lines[3] == "      jumps over the lazy dog while the");
    CHECK(lines.back() == "    log: /very/long/results/directory/of/an/evaluation/with/a/deep/path/logs/evalsched-7-123-1.out");
    std::string joined;
    for (const auto& l : lines) joined += l + "\n";
    CHECK(joined.find('+') == std::string::npos);
    // No width (--long, a pipe without COLUMNS): one line each.
    CHECK(failure_lines("x failed: y", f, 0).size() == 3);
}

TEST_CASE("watch in a log: a failed dataset's evidence and log under its stamped line, once; --json carries both") {
    const json e{{"id", 3},
                 {"state", "failed"},
                 {"datasets", {{"total", 1}, {"scored", 0}, {"failed", 1}}},
                 {"dataset_list",
                  {{{"dataset", "piqa"},
                    {"state", "failed"},
                    {"detail", "value_error (framework)"},
                    {"evidence", "ValueError: invalid literal in piqa answer key"},
                    {"log", "/results/3/logs/evalsched-3-22-1.out"}}}}};
    Watcher lines(Watcher::Mode::lines, 80);
    const std::string out = lines.update(e, 1000);
    const std::string stamp = clock_time(1000, 1000) + " ";
    const std::string pad(stamp.size(), ' ');
    CHECK(out.find(stamp + "piqa failed: value_error (framework)\n" + pad + "    ValueError: invalid literal in piqa answer key\n" + pad +
                   "    log: /results/3/logs/evalsched-3-22-1.out\n") == 0);
    CHECK(lines.update(e, 1001).empty());  // nothing changed: nothing printed
    Watcher events(Watcher::Mode::json, 80);
    const std::string first = events.update(e, 1000);
    const json ev = json::parse(first.substr(0, first.find('\n')));
    CHECK(ev["event"] == "dataset");
    CHECK(ev["evidence"] == "ValueError: invalid literal in piqa answer key");
    CHECK(ev["log"] == "/results/3/logs/evalsched-3-22-1.out");
}
