// The suite's serving keys (evalsched-suite(5), issue 18): serve_command, client_command,
// serve_probe, serve_timeout, refused with file:line and what to do; and the serving form the
// daemon cuts a served evaluation's trials from.
#include <doctest/doctest.h>

#include <string>

#include "evalsched/core/suite.hpp"

using namespace acme::evalsched;

namespace {

std::string suite_with(const std::string& keys, const std::string& datasets =
                                                     "[[dataset]]\nname = \"gsm8k\"\nkind = \"generation\"\n"
                                                     "[[dataset]]\nname = \"mmlu\"\nkind = \"multiple_choice\"\nshard = true\nsamples = 100\n"
                                                     "command = \"eval {checkpoint} {dataset} {shard} {num_shards}\"\n") {
    return "[suite]\nname = \"s\"\ncommand = \"eval {checkpoint} {dataset}\"\nbundle_command = \"eval {checkpoint} {datasets}\"\n" + keys + datasets;
}

const std::string kServe =
    "serve_command = \"vllm serve {checkpoint} --port {port} --tensor-parallel-size {gpus}\"\n"
    "client_command = \"lm_eval --model local-completions --model_args base_url={base_url}/v1/completions,num_concurrent=8 "
    "--tasks {dataset} --shard {shard}/{num_shards} --output_path {output}\"\n";

std::string refusal(const std::string& text) {
    try {
        parse_suite(text, "s.toml");
    } catch (const SuiteError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a suite that serves: its keys parsed, defaults for the probe and the timeout") {
    const Suite s = parse_suite(suite_with(kServe + "serve_timeout = \"15m\"\n"), "s.toml");
    REQUIRE(s.serving);
    CHECK(s.serving->probe == "/health");
    CHECK(s.serving->ready_timeout_s == doctest::Approx(900));
    CHECK(s.serving->serve_command.find("{port}") != std::string::npos);
    const Suite p = parse_suite(suite_with(kServe + "serve_probe = \"/v1/models\"\n"), "s.toml");
    CHECK(p.serving->probe == "/v1/models");
    CHECK(p.serving->ready_timeout_s == doctest::Approx(600));
    CHECK_FALSE(parse_suite(suite_with(""), "s.toml").serving);
}

TEST_CASE("the serving form: every dataset runs client_command against the step's server, nothing bundled") {
    const Suite s = serving_suite(parse_suite(suite_with(kServe), "s.toml"));
    CHECK_FALSE(s.bundle_command);
    for (const Dataset& d : s.datasets) {
        CHECK(d.command.find("base_url=\"$EVALSCHED_BASE_URL\"/v1/completions") != std::string::npos);
        CHECK(d.command.find("--tasks {dataset} --shard {shard}/{num_shards}") != std::string::npos);
    }
    // Literal braces stay literal for make_trials.
    const Suite b = serving_suite(parse_suite(
        suite_with("serve_command = \"srv {port}\"\nclient_command = \"cli {base_url} --gen '{{\\\"n\\\": 1}}' {dataset} {shard} {num_shards}\"\n"), "s.toml"));
    CHECK(b.datasets[0].command == "cli \"$EVALSCHED_BASE_URL\" --gen '{{\"n\": 1}}' {dataset} {shard} {num_shards}");
}

TEST_CASE("serving keys refused with the line and what to do") {
    CHECK(refusal(suite_with("serve_command = \"vllm serve {checkpoint} --port {port}\"\n")).find("s.toml:5: serve_command in [suite] without client_command") == 0);
    CHECK(refusal(suite_with("client_command = \"c {base_url}\"\n")).find("client_command in [suite] without serve_command") != std::string::npos);
    CHECK(refusal(suite_with("serve_command = \"vllm serve {checkpoint}\"\nclient_command = \"c {base_url} {shard} {num_shards}\"\n"))
              .find("never mentions {port}") != std::string::npos);
    CHECK(refusal(suite_with("serve_command = \"srv {port}\"\nclient_command = \"c {dataset} {shard} {num_shards}\"\n")).find("never mentions {base_url}") !=
          std::string::npos);
    CHECK(refusal(suite_with("serve_command = \"srv {port} {dataset}\"\nclient_command = \"c {base_url}\"\n")).find("unknown placeholder {dataset}") !=
          std::string::npos);
    CHECK(refusal(suite_with("serve_command = \"srv {port}\"\nclient_command = \"c {base_url}\"\n")).find("dataset \"mmlu\" may be sharded but client_command") !=
          std::string::npos);
    CHECK(refusal(suite_with(kServe + "serve_probe = \"health\"\n")).find("serve_probe in [suite] must be an HTTP path") != std::string::npos);
    CHECK(refusal(suite_with(kServe + "serve_timeout = 0\n")).find("serve_timeout in [suite] must be a duration") != std::string::npos);
    CHECK(refusal(suite_with("serve_probe = \"/health\"\n")).find("serve_probe in [suite] without serve_command") != std::string::npos);
    CHECK(refusal(suite_with(kServe + "serve_port = 1\n")).find("unknown key \"serve_port\" in [suite]") != std::string::npos);
}
