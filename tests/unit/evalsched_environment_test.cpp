// The user's environment in trials (issue 21): what `evalsched submit` captures and carries,
// what the daemon refuses, how the job's environment is made, and the suite's env/setup.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "evalsched/core/suite.hpp"
#include "evalsched/core/trials.hpp"
#include "evalsched/core/user_environment.hpp"
#include "evalsched/daemon/api/api_request.hpp"

using namespace acme::evalsched;

TEST_CASE("the submitter's environment: Slurm's, evalsched's and the shell's own variables stay behind") {
    char a[] = "PATH=/opt/conda/envs/lm/bin:/usr/bin", b[] = "SLURM_JOB_ID=7", c[] = "HF_HOME=/data/hf", d[] = "PWD=/home/u",
         e[] = "EVALSCHED_SOCKET=/x", f[] = "noequals", g[] = "BASH_FUNC_module%%=() { :; }";
    char* envp[] = {a, b, c, d, e, f, g, nullptr};
    const auto env = capture_environment(envp);
    CHECK(env == std::vector<std::string>{"PATH=/opt/conda/envs/lm/bin:/usr/bin", "HF_HOME=/data/hf", "BASH_FUNC_module%%=() { :; }"});
    CHECK(environment_problem(env).empty());
    std::vector<std::string> big(10, "X=" + std::string(20000, 'x'));
    CHECK(environment_problem(big).find("more than the 131072 evalsched carries") != std::string::npos);
    CHECK(environment_problem(std::vector<std::string>(kMaxEnvironmentVars + 1, "A=1")).find("variables") != std::string::npos);
    CHECK(environment_problem({"=x"}).find("is not NAME=value") != std::string::npos);
}

TEST_CASE("the loader's and glibc's variables never travel: withheld by the CLI, refused by the API, dropped from a stored environment") {
    for (const char* v : {"LD_PRELOAD", "LD_AUDIT", "LD_DEBUG_OUTPUT", "LD_PROFILE", "GCONV_PATH", "GLIBC_TUNABLES", "NLSPATH", "LOCPATH",
                          "HOSTALIASES", "RESOLV_HOST_CONF", "MALLOC_TRACE"}) {
        CAPTURE(v);
        CHECK(loader_variable(v));
        CHECK_FALSE(carried_variable(v));
    }
    // Module systems and sites set these for jobs; no root process is given them.
    CHECK_FALSE(loader_variable("LD_LIBRARY_PATH"));
    CHECK_FALSE(loader_variable("TMPDIR"));
    CHECK_FALSE(loader_variable("CUDA_HOME"));
    char a[] = "LD_PRELOAD=/tmp/x.so", b[] = "LD_LIBRARY_PATH=/opt/cuda/lib64", c[] = "GCONV_PATH=/tmp/g", d[] = "HOME=/h";
    char* envp[] = {a, b, c, d, nullptr};
    std::vector<std::string> withheld;
    CHECK(capture_environment(envp, &withheld) == std::vector<std::string>{"LD_LIBRARY_PATH=/opt/cuda/lib64", "HOME=/h"});
    CHECK(withheld == std::vector<std::string>{"LD_PRELOAD", "GCONV_PATH"});
    CHECK(withheld_note(withheld).starts_with("not carried to the trials: LD_PRELOAD, GCONV_PATH (the dynamic loader's"));
    CHECK(environment_problem({"LD_PRELOAD=/tmp/x.so"}).starts_with("environment variable LD_PRELOAD steers the dynamic loader or glibc"));
    std::vector<std::string> dropped;
    CHECK(without_loader_variables({"A=1", "LD_AUDIT=/x", "B=2"}, &dropped) == std::vector<std::string>{"A=1", "B=2"});
    CHECK(dropped == std::vector<std::string>{"LD_AUDIT"});
    // A client that sends one anyway (evalsched submit never does) is refused, naming it.
    const std::string suite = "[[dataset]]\\nname = \\\"a\\\"\\nkind = \\\"generation\\\"\\ncommand = \\\"run {dataset} {output}\\\"\\n";
    CHECK_THROWS_WITH_AS(parse_submit("{\"checkpoint\": \"/ck/r/s\", \"suite\": \"" + suite + "\", \"environment\": [\"PATH=/v\", \"LD_PRELOAD=/tmp/x.so\"]}"),
                         doctest::Contains("environment variable LD_PRELOAD steers the dynamic loader"), RequestError);
}

TEST_CASE("a job's environment: the user's, with the daemon's variables replacing the user's values") {
    const auto env = merge_environment({"PATH=/venv/bin:/usr/bin", "HOME=/fake", "HF_HOME=/hf"}, {"HOME=/home/u", "EVALSCHED_EVALUATION=3"});
    CHECK(env == std::vector<std::string>{"PATH=/venv/bin:/usr/bin", "HF_HOME=/hf", "HOME=/home/u", "EVALSCHED_EVALUATION=3"});
}

TEST_CASE("the API carries the environment it is sent, checked again, and refuses a malformed one") {
    const std::string suite = "[[dataset]]\\nname = \\\"a\\\"\\nkind = \\\"generation\\\"\\ncommand = \\\"run {dataset} {output}\\\"\\n";
    const std::string body = "{\"checkpoint\": \"/ck/run/step-1\", \"suite\": \"" + suite + "\", \"environment\": [\"PATH=/v/bin\", \"SLURM_JOB_ID=9\"]}";
    const SubmitRequest r = parse_submit(body);
    CHECK(r.environment == std::vector<std::string>{"PATH=/v/bin"});
    CHECK_THROWS_WITH_AS(parse_submit("{\"checkpoint\": \"/ck/r/s\", \"suite\": \"" + suite + "\", \"environment\": \"PATH=/x\"}"),
                         doctest::Contains("field 'environment' must be an array"), RequestError);
    CHECK_THROWS_WITH_AS(parse_submit("{\"checkpoint\": \"/ck/r/s\", \"suite\": \"" + suite + "\", \"environment\": [\"=x\"]}"),
                         doctest::Contains("is not NAME=value"), RequestError);
}

TEST_CASE("suite env and setup come before every command; {samples} is the dataset's size") {
    const Suite s = parse_suite(R"toml(
[suite]
command = "acme-eval-lmeval run --checkpoint {checkpoint} --task {dataset} --samples {samples} --out {output}"
metric_command = "acme-eval-lmeval score --task {dataset} --out {output}"
setup = "source /opt/conda/bin/activate lm"
env = { HF_DATASETS_OFFLINE = "1", NOTE = "it's" }

[[dataset]]
name = "arc_easy"
kind = "multiple_choice"
samples = 2376
)toml", "s.toml");
    CHECK(s.setup == "source /opt/conda/bin/activate lm");
    REQUIRE(s.env.size() == 2);
    const TrialSet set = make_trials(s, Checkpoint{"r/c", "/stage/c", "/out", ModelSpec{}}, PriorBook{}, TrialOptions{});
    REQUIRE(set.trials.size() == 1);
    const std::string& cmd = set.trials[0].command;
    CHECK(cmd.starts_with("set +u; export HF_DATASETS_OFFLINE='1'; export NOTE='it'\\''s'; { source /opt/conda/bin/activate lm\n} || "));
    CHECK(cmd.find("--samples 2376 --out /out/arc_easy") != std::string::npos);
    CHECK(set.metrics[0].command.find("source /opt/conda/bin/activate lm") != std::string::npos);

    CHECK_THROWS_WITH_AS(parse_suite("[suite]\nenv = { SLURM_X = \"1\" }\n[[dataset]]\nname = \"a\"\nkind = \"generation\"\ncommand = \"x\"\n", "e.toml"),
                         doctest::Contains("e.toml:2: env name \"SLURM_X\""), SuiteError);
    CHECK_THROWS_WITH_AS(parse_suite("[suite]\nenv = { A = 1 }\n[[dataset]]\nname = \"a\"\nkind = \"generation\"\ncommand = \"x\"\n", "e.toml"),
                         doctest::Contains("must be a string"), SuiteError);
    CHECK_THROWS_WITH_AS(parse_suite("[[dataset]]\nname = \"a\"\nkind = \"generation\"\ncommand = \"x {samples}\"\n", "e.toml"),
                         doctest::Contains("e.toml:4: dataset \"a\" has no samples but its command mentions {samples}"), SuiteError);
    // A suite without env or setup renders its commands unchanged.
    const Suite plain = parse_suite("[[dataset]]\nname = \"a\"\nkind = \"generation\"\ncommand = \"x {output}\"\n", "p.toml");
    CHECK(plain.wrap("x /o") == "x /o");
}

#include <filesystem>
#include <fstream>

#include "evalsched/core/checkpoint_files.hpp"
#include "tests/unit/temp_dir.hpp"

TEST_CASE("the model's size comes from its weight files and safetensors headers, not optimizer state") {
    CHECK(weight_file("model-00001-of-00002.safetensors"));
    CHECK(weight_file("pytorch_model-00001-of-00003.bin"));
    CHECK_FALSE(weight_file("optimizer.pt"));
    CHECK_FALSE(weight_file("training_args.bin"));
    CHECK_FALSE(weight_file("global_step100/mp_rank_00_model_states.pt"));
    CHECK_FALSE(weight_file("global_step100/model.safetensors"));
    CHECK(safetensors_parameters(R"({"__metadata__": {"format": "pt"}, "w": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 64]}, "b": {"dtype": "BF16", "shape": [8], "data_offsets": [64, 80]}})") == 40);
    CHECK_FALSE(safetensors_parameters("{\"w\": {\"shape\": \"x\"}}"));
    acme::test::TempDir dir;
    const std::string header = R"({"w": {"dtype": "BF16", "shape": [1000, 1000], "data_offsets": [0, 2000000]}})";
    {
        std::ofstream f(dir.file("model.safetensors"), std::ios::binary);
        std::uint64_t n = header.size();
        for (int i = 0; i < 8; ++i) f.put(static_cast<char>((n >> (8 * i)) & 0xff));
        f << header << std::string(2000000, '\0');
    }
    std::ofstream(dir.file("optimizer.pt")) << std::string(5000000, 'o');
    std::ofstream(dir.file("config.json")) << "{}";
    const ModelFiles m = model_files(dir.path().string());
    CHECK(m.weight_bytes == doctest::Approx(8 + header.size() + 2000000));
    REQUIRE(m.parameters);
    CHECK(*m.parameters == 1e6);
}
