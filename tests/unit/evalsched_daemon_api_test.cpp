#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "evalsched/daemon/api_request.hpp"
#include "evalsched/daemon/job_script.hpp"

using namespace acme::evalsched;

namespace {
const char* kSuite = "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n[[dataset]]\nname = \"mmlu\"\nkind = \"multiple_choice\"\nsamples = 100\n";
}

TEST_CASE("API routes: ids are numbers, names are plain") {
    CHECK(match_route("GET", "/v1/evaluations")->route == Route::list);
    CHECK(match_route("POST", "/v1/evaluations")->route == Route::submit);
    CHECK(match_route("GET", "/v1/evaluations/12")->id == 12);
    CHECK(match_route("POST", "/v1/evaluations/12/cancel")->route == Route::cancel);
    CHECK(match_route("GET", "/v1/report/run7")->arg == "run7");
    CHECK_FALSE(match_route("DELETE", "/v1/evaluations"));
    CHECK_FALSE(match_route("GET", "/etc/passwd"));
    CHECK_THROWS_WITH_AS(match_route("GET", "/v1/evaluations/abc"), doctest::Contains("is not a number"), RequestError);
    CHECK_THROWS_AS(match_route("GET", "/v1/report/../x"), RequestError);
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
    TrialScript t{"/lib/stage.sh", "/dev/shm/e", 1e9, "/ckpt/it's", "/out/a", {"/out/mmlu/result.json"}, "eval \"$EVALSCHED_STAGED\""};
    const std::string s = trial_script(t);
    CHECK(s.find("'/ckpt/it'\\''s'") != std::string::npos);
    CHECK(s.find("( eval \"$EVALSCHED_STAGED\" )") != std::string::npos);
    CHECK(metric_script("/out/mmlu", "score").find("nothing to score") != std::string::npos);
}
