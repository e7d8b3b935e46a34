#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "evalsched/daemon/api/api_request.hpp"
#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;

namespace {
const char* kSuite = "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n[[dataset]]\nname = \"mmlu\"\nkind = \"multiple_choice\"\nsamples = 100\n";
}

TEST_CASE("API routes: ids are numbers, names are plain") {
    CHECK((match_route("GET", "/v1/evaluations")->row->handler == &route_list));
    CHECK((match_route("GET", "/v1/evaluations/?state=running")->row->handler == &route_list));
    CHECK((match_route("POST", "/v1/evaluations")->row->handler == &route_submit));
    CHECK(match_route("GET", "/v1/evaluations/12")->id == 12);
    CHECK((match_route("GET", "/v1/evaluations/12")->row->handler == &route_show));
    CHECK((match_route("POST", "/v1/evaluations/12/cancel")->row->handler == &route_cancel));
    CHECK(match_route("POST", "/v1/evaluations/12/cancel")->id == 12);
    CHECK(match_route("GET", "/v1/report/run7")->arg == "run7");
    CHECK(match_route("GET", "/v1/priors")->arg.empty());
    CHECK(match_route("GET", "/v1/priors/mmlu")->arg == "mmlu");
    CHECK((match_route("GET", "/v1/health")->row->handler == &route_health));
    CHECK((match_route("POST", "/v1/follows")->row->handler == &route_follow));
    CHECK((match_route("GET", "/v1/follows")->row->handler == &route_follows));
    CHECK(match_route("POST", "/v1/follows/3/cancel")->id == 3);
    CHECK_FALSE(match_route("DELETE", "/v1/evaluations"));
    CHECK_FALSE(match_route("GET", "/etc/passwd"));
    CHECK_FALSE(match_route("GET", "/v1/evaluationsx"));
    CHECK_FALSE(match_route("GET", "/v1/health/x"));
    // A route's shape with the wrong method is 404, not a complaint about its argument.
    CHECK_FALSE(match_route("GET", "/v1/evaluations/12/cancel"));
    CHECK_FALSE(match_route("POST", "/v1/evaluations/12"));
    CHECK_THROWS_WITH_AS(match_route("GET", "/v1/evaluations/abc"), doctest::Contains("is not a number"), RequestError);
    CHECK_THROWS_WITH_AS(match_route("POST", "/v1/evaluations/abc/cancel"), doctest::Contains("evaluation id 'abc' is not a number"), RequestError);
    CHECK_THROWS_WITH_AS(match_route("GET", "/v1/evaluations/0"), doctest::Contains("is not a number"), RequestError);
    CHECK_THROWS_WITH_AS(match_route("POST", "/v1/follows/x/cancel"), doctest::Contains("follow id 'x'"), RequestError);
    CHECK_THROWS_AS(match_route("GET", "/v1/report/../x"), RequestError);
    CHECK_THROWS_WITH_AS(match_route("GET", "/v1/priors/a b"), doctest::Contains("priors: name a dataset"), RequestError);
    CHECK((&route_row("POST", "/v1/evaluations") == match_route("POST", "/v1/evaluations")->row));
    CHECK_THROWS_AS(route_row("PUT", "/v1/evaluations"), std::logic_error);
}

TEST_CASE("a submission names run and checkpoint from the path unless given") {
    const auto r = parse_submit(nlohmann::json{{"checkpoint", "/ckpt/run7/step-100/"}, {"suite", kSuite}, {"checkpoint_bytes", 4e9}}.dump());
    CHECK(r.name == "run7");
    CHECK(r.checkpoint == "step-100");
    CHECK(r.params_b == doctest::Approx(2));
    CHECK(r.suite.datasets.size() == 1);
}

TEST_CASE("bad submissions get one line naming the field") {
    CHECK_THROWS_WITH_AS(parse_submit("not json"), doctest::Contains("not a JSON object"), RequestError);
    CHECK_THROWS_WITH_AS(parse_submit(R"({"suite": "x"})"), doctest::Contains("field 'checkpoint' is missing"), RequestError);
    CHECK_THROWS_WITH_AS(parse_submit(nlohmann::json{{"checkpoint", "relative/x"}, {"suite", kSuite}}.dump()),
                         doctest::Contains("absolute path"), RequestError);
    CHECK_THROWS_WITH_AS(parse_submit(nlohmann::json{{"checkpoint", "/c/r/s"}, {"suite", kSuite}, {"uid", 0}}.dump()),
                         doctest::Contains("unknown field 'uid'"), RequestError);
    CHECK_THROWS_WITH_AS(parse_submit(nlohmann::json{{"checkpoint", "/c/r/s"}, {"suite", kSuite}, {"name", "a b"}}.dump()),
                         doctest::Contains("run name 'a b' is not usable"), RequestError);
    CHECK_THROWS_AS(parse_submit(nlohmann::json{{"checkpoint", "/c/r/s"}, {"suite", "[suite]\nbogus = 1\n"}}.dump()), SuiteError);
}

TEST_CASE("trial scripts quote every outside value for bash") {
    CHECK(shell_quote("a'b") == "'a'\\''b'");
    TrialScript t{"/lib/stage.sh", "/dev/shm/e", 1e9, "/ckpt/it's", "/out/a", {"/out/mmlu/result.json"}, "/out/done/7",
                  "eval \"$EVALSCHED_STAGED\""};
    const std::string s = trial_script(t);
    CHECK(s.find("'/ckpt/it'\\''s'") != std::string::npos);
    CHECK(s.find("( eval \"$EVALSCHED_STAGED\" )") != std::string::npos);
    CHECK(s.find("[ \"$rc\" -eq 0 ] && : > '/out/done/7'") != std::string::npos);
}

namespace {
// Runs a metric script with bash; its exit status.
int run_script(const acme::test::TempDir& dir, const std::string& script) {
    {
        std::ofstream f(dir.file("metric.sh"));
        f << script;
    }
    const int status = std::system(("bash " + dir.file("metric.sh") + " >/dev/null 2>&1").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
bool exists(const std::string& path) { return std::filesystem::exists(path); }
}  // namespace

TEST_CASE("a metric job scores only when every trial of its dataset finished and left predictions") {
    acme::test::TempDir dir;
    const std::string out = dir.file("longqa"), done = dir.file("done");
    std::filesystem::create_directories(out);
    std::filesystem::create_directories(done);
    MetricScript m{dir.file("attempt"), out, {{done + "/1", "run7/longqa#0of2"}, {done + "/2", "run7/longqa#1of2"}},
                   "echo '{\"scores\": {\"acc\": 1}}' > " + out + "/result.json", {}};
    // One shard still running (or failed, to be retried): wait for it.
    std::ofstream(done + "/1").put('\n');
    CHECK(run_script(dir, metric_script(m)) == kMetricNotReadyExit);
    CHECK_FALSE(exists(out + "/result.json"));
    // Both shards succeeded but wrote nothing: nothing to score.
    std::ofstream(done + "/2").put('\n');
    CHECK(run_script(dir, metric_script(m)) == kNoPredictionsExit);
    // Predictions, and a stale result from an earlier run that must not survive a failing command.
    std::filesystem::create_directories(out + "/shard-0-of-2");
    CHECK(run_script(dir, metric_script(m)) == 0);
    CHECK(exists(out + "/result.json"));
    CHECK(exists(dir.file("attempt") + "/run.json"));
    m.command = "exit 3";
    CHECK(run_script(dir, metric_script(m)) == 3);
    CHECK_FALSE(exists(out + "/result.json"));
}

// The submission worker: the event loop hands it a submission and gets the route's Reply back
// on the loop thread, through the worker's pipe.
#include <event2/event.h>

#include "evalsched/daemon/api/submit_worker.hpp"
#include "evalsched/store/schema.hpp"

TEST_CASE("submissions are built on the worker thread and answered on the event loop") {
    acme::test::TempDir dir;
    DaemonConfig config;
    config.results_dir = dir.file("results");
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    event_base* base = event_base_new();
    std::vector<std::pair<int, Reply>> replies;
    const std::thread::id loop_thread = std::this_thread::get_id();
    bool delivered_on_loop = true;
    int woken = 0;
    {
        SubmitWorker worker(base, config, acme::store::open_evalsched_store(dir.file("e.db")), [&] { ++woken; }, nullptr,
                            [&](void* token, const Reply& r) {
                                delivered_on_loop = delivered_on_loop && std::this_thread::get_id() == loop_thread;
                                replies.emplace_back(static_cast<int>(reinterpret_cast<std::intptr_t>(token)), r);
                                if (replies.size() == 2) event_base_loopbreak(base);
                            });
        Caller alice;
        alice.uid = alice.gid = 1000;
        alice.user = "alice";
        const std::string good = nlohmann::json{{"checkpoint", "/ckpt/run7/step-100"}, {"suite", kSuite}}.dump();
        REQUIRE(worker.post(reinterpret_cast<void*>(std::intptr_t{1}), alice, good, 1000.0));
        REQUIRE(worker.post(reinterpret_cast<void*>(std::intptr_t{2}), alice, "not json", 1000.0));
        timeval limit{30, 0};   // a hang fails the test rather than the suite
        event_base_loopexit(base, &limit);
        event_base_dispatch(base);
    }
    event_base_free(base);
    REQUIRE(replies.size() == 2);
    CHECK(delivered_on_loop);
    std::sort(replies.begin(), replies.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    CHECK(replies[0].second.code == 201);
    const auto created = nlohmann::json::parse(replies[0].second.text);
    CHECK(created.at("id").get<std::int64_t>() > 0);
    CHECK(replies[1].second.code == 400);
    CHECK(replies[1].second.text.find("not a JSON object") != std::string::npos);
    // The evaluation and its trials are in the store, for the loop's own connection to read.
    auto stmt = db.prepare("SELECT COUNT(*) FROM trials");
    REQUIRE(stmt.step());
    CHECK(stmt.column_int(0) >= 1);
    CHECK(woken == 1);
}

TEST_CASE("a full submission queue refuses at once instead of growing") {
    acme::test::TempDir dir;
    DaemonConfig config;
    config.results_dir = dir.file("results");
    event_base* base = event_base_new();
    {
        SubmitWorker worker(base, config, acme::store::open_evalsched_store(dir.file("e.db")), [] {}, nullptr,
                            [](void*, const Reply&) {}, 0);
        CHECK_FALSE(worker.post(nullptr, Caller{}, "{}", 0));
    }
    event_base_free(base);
}

// Issue 33: the queue of 64 was shared first come, first served, so one user's flood of
// submissions answered every other user 503 until it drained.
TEST_CASE("one user's flood holds at most a quarter of the submission queue; another user still gets in") {
    acme::test::TempDir dir;
    DaemonConfig config;
    config.results_dir = dir.file("results");
    event_base* base = event_base_new();
    {
        // The worker holds its first submission inside `wake` until released, so what is posted
        // after it stays queued and the test counts the queue, not the thread's speed.
        std::mutex m;
        std::condition_variable cv;
        bool entered = false, release = false;
        SubmitWorker worker(
            base, config, acme::store::open_evalsched_store(dir.file("e.db")),
            [&] {
                std::unique_lock lock(m);
                entered = true;
                cv.notify_all();
                cv.wait(lock, [&] { return release; });
            },
            nullptr, [](void*, const Reply&) {}, 8);
        Caller alice, bob;
        alice.uid = alice.gid = 1000;
        alice.user = "alice";
        bob.uid = bob.gid = 1001;
        bob.user = "bob";
        const std::string good = nlohmann::json{{"checkpoint", "/ckpt/run7/step-100"}, {"suite", kSuite}}.dump();
        REQUIRE(worker.post(nullptr, alice, good, 1000.0));
        {
            std::unique_lock lock(m);
            REQUIRE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return entered; }));
        }
        // The first is being built; a quarter of 8 may wait, the third is refused.
        CHECK(worker.post(nullptr, alice, good, 1000.0));
        CHECK(worker.post(nullptr, alice, good, 1000.0));
        CHECK_FALSE(worker.post(nullptr, alice, good, 1000.0));
        CHECK(worker.post(nullptr, bob, good, 1000.0));
        CHECK(worker.post(nullptr, bob, good, 1000.0));
        CHECK_FALSE(worker.post(nullptr, bob, good, 1000.0));
        {
            std::lock_guard lock(m);
            release = true;
        }
        cv.notify_all();
    }
    event_base_free(base);
}
