// evalsched follow (issue 21): which checkpoints of a run are complete (recovery's rules),
// which are evaluated (--every, --keep-up), the request, what the store remembers across a
// restart, and the report's chart per dataset over steps.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "common/recovery/checkpoints.hpp"
#include "evalsched/cli/report_html.hpp"
#include "evalsched/core/follow_plan.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/follows.hpp"
#include "evalsched/daemon/state.hpp"
#include "evalsched/store/schema.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;
namespace fs = std::filesystem;

namespace {

const char* kRules =
    "[[marker]]\nname = \"complete-marker\"\nfiles = [\".complete\"]\n"
    "[[marker]]\nname = \"huggingface\"\nfiles = [\"model.safetensors\"]\n"
    "[[pointer]]\nname = \"megatron\"\nfile = \"latest_checkpointed_iteration.txt\"\nformat = \"iter_{:07d}\"\n";

const char* kSuite = "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n"
                     "[[dataset]]\nname = \"mmlu\"\nkind = \"multiple_choice\"\nsamples = 100\n";

void touch(const fs::path& p, const std::string& text = "") {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

std::vector<FollowedCheckpoint> at(std::initializer_list<long long> steps) {
    std::vector<FollowedCheckpoint> out;
    for (auto s : steps) out.push_back({s, "/c/step-" + std::to_string(s)});
    return out;
}

std::vector<long long> submitted(const std::vector<FollowDecision>& ds) {
    std::vector<long long> out;
    for (const auto& d : ds)
        if (d.submit) out.push_back(d.checkpoint.step);
    return out;
}

}  // namespace

TEST_CASE("follow sees the complete checkpoints oldest first: a half-written one and a symlink are not") {
    acme::test::TempDir t;
    const auto rules = acme::recovery::parse_checkpoint_rules(kRules, "rules");
    touch(t.path() / "step-200" / ".complete");
    touch(t.path() / "step-100" / ".complete");
    touch(t.path() / "step-300" / "model.safetensors.tmp");  // still being written
    touch(t.path() / "checkpoint-50" / "model.safetensors");
    fs::create_directory_symlink(t.path() / "step-100", t.path() / "step-900");
    touch(t.path() / "best" / ".complete");                   // no step: cannot be ordered
    const auto found = acme::recovery::all_complete(t.path(), rules);
    REQUIRE(found.size() == 3);
    CHECK(found[0].step == 50);
    CHECK(found[0].rule == "huggingface");
    CHECK(found[1].step == 100);
    CHECK(found[2].step == 200);
    CHECK_THROWS_WITH_AS(acme::recovery::all_complete(t.path() / "gone", rules), doctest::Contains("cannot read"), std::runtime_error);
}

TEST_CASE("follow: a Megatron pointer vouches for its iteration and the older ones, not a newer one being written") {
    acme::test::TempDir t;
    const auto rules = acme::recovery::parse_checkpoint_rules(kRules, "rules");
    for (const char* d : {"iter_0000100", "iter_0000200", "iter_0000300"}) fs::create_directories(t.path() / d);
    touch(t.path() / "latest_checkpointed_iteration.txt", "200\n");
    const auto found = acme::recovery::all_complete(t.path(), rules);
    REQUIRE(found.size() == 2);
    CHECK(found[1].step == 200);
    CHECK(found[1].rule == "megatron");
}

TEST_CASE("follow decides each checkpoint once, in order; --every skips those too close; --keep-up only the newest") {
    CHECK(submitted(plan_follow(at({100, 200, 300}), {}, {})) == std::vector<long long>{100, 200, 300});
    // Only those after the last decided step.
    CHECK(submitted(plan_follow(at({100, 200, 300}), {200, 200, false}, {})) == std::vector<long long>{300});
    // --every 1000 from step 500: 1000 is too close, 1500 is not.
    const auto every = plan_follow(at({500, 1000, 1500, 2000}), {}, {1000, false});
    CHECK(submitted(every) == std::vector<long long>{500, 1500});
    CHECK(every[1].reason == "--every 1000: step 1000 is fewer than 1000 steps after step 500");
    // --keep-up: nothing while an evaluation runs, then the newest; the others skipped with why.
    CHECK(plan_follow(at({100, 200, 300}), {0, 0, true}, {0, true}).empty());
    const auto up = plan_follow(at({100, 200, 300}), {0, 0, false}, {0, true});
    CHECK(submitted(up) == std::vector<long long>{300});
    CHECK(up.size() == 3);
    CHECK(up[0].reason == "--keep-up: step 300 was complete too");
}

TEST_CASE("follow requests: the directory absolute, every a whole number, the submission's own checks on the rest") {
    const auto r = parse_follow(nlohmann::json{{"dir", "/ckpt/run7/"}, {"suite", kSuite}, {"every", 500}, {"keep_up", true}}.dump());
    CHECK(r.dir == "/ckpt/run7");
    CHECK(r.submit.name == "run7");
    CHECK(r.options.every == 500);
    CHECK(r.options.keep_up);
    CHECK_THROWS_WITH_AS(parse_follow(R"({"dir": "ckpt", "suite": "x"})"), doctest::Contains("absolute path"), RequestError);
    CHECK_THROWS_WITH_AS(parse_follow(nlohmann::json{{"dir", "/c"}, {"suite", kSuite}, {"every", -1}}.dump()), doctest::Contains("'every'"),
                         RequestError);
    CHECK_THROWS_WITH_AS(parse_follow(nlohmann::json{{"dir", "/c"}, {"suite", kSuite}, {"evry", 1}}.dump()),
                         doctest::Contains("unknown field 'evry'"), RequestError);
    CHECK_THROWS_AS(parse_follow(nlohmann::json{{"dir", "/c"}, {"suite", "[suite]\n"}}.dump()), SuiteError);
}

#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/daemon/caches.hpp"

TEST_CASE("a follow is refused, and nothing stored, while evalschedd's follow helper is not executable") {
    acme::test::TempDir t;
    auto db = acme::store::open_evalsched_store(t.file("e.db"));
    DaemonConfig config;
    config.follow_helper = t.file("evalsched-ckpt-scan");  // not installed
    Caller alice;
    alice.uid = alice.gid = 1000;
    alice.user = "alice";
    RouteMatch match;
    ApiCaches caches;
    const std::function<void()> wake = [] {};
    const std::string body = nlohmann::json{{"dir", "/ckpt/run7"}, {"suite", kSuite}}.dump();
    RouteContext ctx{db, config, alice, match, body, caches, wake};
    Reply r = route_follow(ctx);
    CHECK(r.code == 503);
    CHECK(r.text.find("follow_helper " + config.follow_helper + " is not executable: ask an admin to install it") != std::string::npos);
    auto count = db.prepare("SELECT COUNT(*) FROM follows");
    REQUIRE(count.step());
    CHECK(count.column_int(0) == 0);
    std::ofstream(config.follow_helper) << "#!/bin/sh\n";
    chmod(config.follow_helper.c_str(), 0755);
    r = route_follow(ctx);
    CHECK(r.code == 201);
}

TEST_CASE("a follow remembers its decisions: a restart finds an evaluation submitted but not recorded, and never submits it again") {
    acme::test::TempDir t;
    auto db = acme::store::open_evalsched_store(t.file("e.db"));
    const Caller alice{1001, 1001, "alice", false}, bob{1002, 1002, "bob", false};
    const auto req = parse_follow(nlohmann::json{{"dir", "/ckpt/run7"}, {"suite", kSuite}}.dump());
    const auto id = create_follow(db, req, alice, 1000);
    REQUIRE(id);
    const auto follows = active_follows(db);
    REQUIRE(follows.size() == 1);
    const FollowRow& f = follows[0];
    CHECK(follow_memory(db, *id).last_step == -1);
    // Evaluation of step-100 stored, then the daemon killed before the follow recorded it.
    const auto sub = parse_submit(nlohmann::json{{"checkpoint", "/ckpt/run7/step-100"}, {"name", "run7"}, {"suite", kSuite}}.dump());
    const auto eval = create_evaluation(
        db, sub, alice, "/results",
        [&](const std::string& out) { return make_trials(sub.suite, Checkpoint{"run7/step-100", "\"$S\"", out, ModelSpec{}}, PriorBook{}); },
        1001);
    CHECK(orphaned_evaluation(db, f, "/ckpt/run7/step-100") == eval);
    CHECK_FALSE(orphaned_evaluation(db, f, "/ckpt/run7/step-200"));
    record_decision(db, *id, {{100, "/ckpt/run7/step-100"}, true, ""}, eval, 1002);
    CHECK_FALSE(orphaned_evaluation(db, f, "/ckpt/run7/step-100"));
    const auto m = follow_memory(db, *id);
    CHECK(m.last_step == 100);
    CHECK(m.last_submitted == 100);
    CHECK(m.evaluating);
    // Only its owner (or an admin) sees and stops it.
    CHECK(follows_json(db, bob).empty());
    CHECK(follows_json(db, alice)[0]["checkpoints"][0]["evaluation"] == eval);
    CHECK_FALSE(cancel_follow(db, *id, bob, 1003));
    CHECK(cancel_follow(db, *id, alice, 1003));
    CHECK(active_follows(db).empty());
    CHECK_FALSE(cancel_follow(db, *id, alice, 1004));
}

TEST_CASE("a user's follows are bounded") {
    acme::test::TempDir t;
    auto db = acme::store::open_evalsched_store(t.file("e.db"));
    const Caller alice{1001, 1001, "alice", false};
    const auto req = parse_follow(nlohmann::json{{"dir", "/ckpt/run7"}, {"suite", kSuite}}.dump());
    for (int i = 0; i < kMaxFollowsPerUser; ++i) CHECK(create_follow(db, req, alice, 1000));
    CHECK_FALSE(create_follow(db, req, alice, 1000));
}

TEST_CASE("report --format html: a line per dataset over steps, user text escaped, steps ordered by the label's number") {
    const nlohmann::json report{{"name", "run7"},
                                {"checkpoints", {{{"id", 2}, {"checkpoint", "step-200"}}, {{"id", 1}, {"checkpoint", "step-100"}}}},
                                {"rows", {{{"dataset", "mmlu<script>"}, {"metric", "acc"}, {"values", {{"1", 0.25}, {"2", 0.5}}}},
                                          {{"dataset", "gsm8k"}, {"metric", ""}, {"values", {{"1", "running"}}}}}}};
    const std::string html = render_report_html(report);
    CHECK(html.find("<script>") == std::string::npos);
    CHECK(html.find("mmlu&lt;script&gt;") != std::string::npos);
    CHECK(html.find("data-step=\"100\" data-score=\"0.25\"") != std::string::npos);
    CHECK(html.find("data-step=\"200\" data-score=\"0.5\"") != std::string::npos);
    CHECK(html.find("data-points=\"2\"") != std::string::npos);
    CHECK(html.find("<th data-step=\"100\">step-100</th><th data-step=\"200\">step-200</th>") != std::string::npos);
    CHECK(label_step("iter_0012000") == 12000);
    CHECK(label_step("best") == -1);
}

// Issue 33: follows were scanned one after another on one thread, so one user's hung file
// system held every other follow for its whole scan timeout. Here the first follow's scan can
// only finish once the second's has run: scanned in turn, the first times out ("no answer").
#include <sys/stat.h>
#include <unistd.h>

#include "evalsched/daemon/follow_watcher.hpp"

TEST_CASE("follow scans run side by side: a scan that hangs never holds another user's follow") {
    if (geteuid() != 0) return;  // each scan runs as the follow's user: root's to show
    acme::test::TempDir t;
    REQUIRE(chmod(t.path().c_str(), 0755) == 0);
    const fs::path marks = t.path() / "marks";
    fs::create_directories(marks);
    REQUIRE(chmod(marks.c_str(), 01777) == 0);
    const fs::path helper = t.path() / "scan";
    // A stand-in for evalsched-ckpt-scan (its flags; no checkpoint found): the "slow" directory
    // answers only after the "fast" one was scanned, for up to 20 s.
    touch(helper, "#!/bin/sh\ncase \"$2\" in\n"
                  "*/fast) : > '" + (marks / "fast").string() + "' ;;\n"
                  "*/slow) i=0; while [ ! -e '" + (marks / "fast").string() + "' ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done ;;\n"
                  "esac\nexit 0\n");
    REQUIRE(chmod(helper.c_str(), 0755) == 0);

    DaemonConfig config;
    config.results_dir = t.file("results");
    config.follow_helper = helper.string();
    config.follow_scan_timeout_s = 8;
    auto db = acme::store::open_evalsched_store(t.file("e.db"));
    const Caller alice{65534, 65534, "nobody", false}, admin{0, 0, "root", true};
    REQUIRE(create_follow(db, parse_follow(nlohmann::json{{"dir", "/ckpt/slow"}, {"suite", kSuite}}.dump()), alice, 1000));
    REQUIRE(create_follow(db, parse_follow(nlohmann::json{{"dir", "/ckpt/fast"}, {"suite", kSuite}}.dump()), alice, 1000));

    FollowWatcher watcher(config, acme::store::open_evalsched_store(t.file("e.db")), [] {}, nullptr);
    watcher.scan_all(2000);
    const auto follows = follows_json(db, admin);
    REQUIRE(follows.size() == 2);
    for (const auto& f : follows) {
        INFO(f["dir"]);
        CHECK(f["problem"] == "");
        CHECK(f["scanned_at"] == 2000.0);
    }
}
