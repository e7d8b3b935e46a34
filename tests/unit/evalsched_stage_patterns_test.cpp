// Staging copies only what the harness reads (issue 21): the suite's stage = [...] globs, the
// default that leaves optimizer state and global_step*/ behind, and the trial script that
// hands them to evalsched-stage.sh.
#include <doctest/doctest.h>

#include <algorithm>

#include "evalsched/core/suite.hpp"
#include "evalsched/daemon/sched/job_script.hpp"

using namespace acme::evalsched;

namespace {
const std::string kHead = "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\n";
const std::string kData = "[[dataset]]\nname = \"mmlu\"\nkind = \"multiple_choice\"\nsamples = 100\n";
}  // namespace

TEST_CASE("stage = [...] in a suite: globs inside the checkpoint, '!' excludes; none: the default") {
    CHECK(parse_suite(kHead + kData, "s.toml").stage.empty());
    const Suite s = parse_suite(kHead + "stage = [\"*.safetensors\", \"*.json\", \"extra/*\", \"!optimizer*\"]\n" + kData, "s.toml");
    CHECK(s.stage == std::vector<std::string>{"*.safetensors", "*.json", "extra/*", "!optimizer*"});
    CHECK_THROWS_WITH_AS(parse_suite(kHead + "stage = [\"/etc/*\"]\n" + kData, "s.toml"), doctest::Contains("no leading '/'"), SuiteError);
    CHECK_THROWS_WITH_AS(parse_suite(kHead + "stage = [\"../x\"]\n" + kData, "s.toml"), doctest::Contains("no '..'"), SuiteError);
    CHECK_THROWS_WITH_AS(parse_suite(kHead + "stage = []\n" + kData, "s.toml"), doctest::Contains("list of 1-64 globs"), SuiteError);
    CHECK_THROWS_AS(parse_suite(kHead + "stage = \"*.bin\"\n" + kData, "s.toml"), SuiteError);
    // The default keeps optimizer, scheduler and RNG state and DeepSpeed's global_step*/ out.
    for (const char* g : {"!optimizer*", "!global_step*", "!scheduler*", "!rng_state*", "!training_args*"})
        CHECK(std::find(kDefaultStage.begin(), kDefaultStage.end(), g) != kDefaultStage.end());
}

TEST_CASE("the trial script passes the stage globs to evalsched_stage, quoted") {
    TrialScript t;
    t.stage_helper = "/usr/libexec/acme/evalsched-stage.sh";
    t.stage_dir = "/dev/shm";
    t.checkpoint_path = "/ckpt/run7/step-100";
    t.attempt_dir = "/r/1/a";
    t.done_marker = "/r/1/done";
    t.command = "eval";
    t.stage_patterns = "*.safetensors\n!optimizer*";
    CHECK(trial_script(t).find("\"$attempt_dir/stage.json\" '*.safetensors\n!optimizer*' ||") != std::string::npos);
}
