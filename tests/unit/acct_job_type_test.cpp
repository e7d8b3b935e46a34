#include <doctest/doctest.h>

#include "common/slurm/job_type.hpp"

using acme::acct::classify_job_type;

TEST_CASE("an explicit --llm-job-type wins, then the comment's tag, then evalsched, then the name") {
    CHECK(classify_job_type({"SFT", "llm-job-type=pretrain", "eval-run"}).type == "sft");
    CHECK(classify_job_type({"SFT", "", ""}).source == "tag");
    CHECK(classify_job_type({"", "team=x llm-job-type=pretrain", "eval-run"}).type == "pretrain");
    CHECK(classify_job_type({"", "llm-job-type=pretrain", ""}).source == "comment");
    CHECK(classify_job_type({"", "evalsched trial 12", "x"}).type == "eval");
    CHECK(classify_job_type({"bogus", "", "llama7b-sft-v2"}).type == "sft");
}

TEST_CASE("the name heuristic matches whole words only") {
    CHECK(classify_job_type({"", "", "llama-eval-7b"}).type == "eval");
    CHECK(classify_job_type({"", "", "medieval-texts"}).type == "other");
    CHECK(classify_job_type({"", "", "internlm_pretrain_stage2"}).type == "pretrain");
    CHECK(classify_job_type({"", "", "mllm-sft"}).type == "mllm");
    CHECK(classify_job_type({"", "", "interactive"}).type == "debug");
    CHECK(classify_job_type({"", "", "wrap"}).type == "other");
    CHECK(classify_job_type({"", "", "wrap"}).source == "default");
}
