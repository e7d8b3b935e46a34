#include <doctest/doctest.h>

#include <array>
#include <string>
#include <string_view>

#include "acct/gpuacct/core/format_spec.hpp"
#include "acct/gpuacct/core/job_states.hpp"

using namespace acme::acct;

namespace {
constexpr std::array<std::string_view, 4> kKnown = {"JobID", "JobName", "State", "GPUUtil"};
}

TEST_CASE("--format names fields without regard to case, with optional widths") {
    std::string error;
    const auto spec = parse_format_spec("jobid,JOBNAME%30,State%-8, gpuutil", kKnown, error);
    REQUIRE(spec);
    REQUIRE(spec->size() == 4);
    CHECK((*spec)[0].name == "JobID");
    CHECK_FALSE((*spec)[0].width.has_value());
    CHECK((*spec)[1].name == "JobName");
    CHECK((*spec)[1].width == 30);
    CHECK((*spec)[2].width == -8);
    CHECK((*spec)[3].name == "GPUUtil");
}

TEST_CASE("an unknown field or a bad width is named in the error") {
    std::string error;
    CHECK_FALSE(parse_format_spec("JobID,Foo", kKnown, error));
    CHECK(error == "Invalid field requested: \"Foo\"");
    CHECK_FALSE(parse_format_spec("JobID%abc", kKnown, error));
    CHECK(error.find("Invalid field width in \"JobID%abc\"") == 0);
    CHECK_FALSE(parse_format_spec("JobID%0", kKnown, error));
    CHECK_FALSE(parse_format_spec(",,", kKnown, error));
    CHECK(error.find("No fields requested") == 0);
}

TEST_CASE("-s takes sacct's state codes and names") {
    std::string error;
    const auto states = parse_state_list("CD,f,timeout,OOM", error);
    REQUIRE(states);
    CHECK(*states == std::vector<std::string>{"COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY"});
    CHECK_FALSE(parse_state_list("CD,DONE", error));
    CHECK(error.find("Invalid state: \"DONE\"") == 0);
    CHECK(state_is("CANCELLED by 0", "CANCELLED"));
    CHECK(state_is_failure("NODE_FAIL"));
    CHECK_FALSE(state_is_failure("COMPLETED"));
}
