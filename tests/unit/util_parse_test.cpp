#include <doctest/doctest.h>

#include "common/util/cli_checks.hpp"
#include "common/util/parse.hpp"

using namespace acme::util;

TEST_CASE("numbers parse strictly: no trailing junk, no blanks, no infinities") {
    CHECK(parse_double("2.5") == 2.5);
    CHECK(parse_double("10") == 10.0);
    CHECK_FALSE(parse_double("").has_value());
    CHECK_FALSE(parse_double("1s").has_value());
    CHECK_FALSE(parse_double(" 1").has_value());
    CHECK_FALSE(parse_double("inf").has_value());
    CHECK_FALSE(parse_double("nan").has_value());
    CHECK(parse_int("-3") == -3);
    CHECK_FALSE(parse_int("3.0").has_value());
    CHECK_FALSE(parse_int("99999999999999999999999").has_value());
}

TEST_CASE("booleans accept the usual words and nothing else") {
    CHECK(parse_bool("YES") == true);
    CHECK(parse_bool("off") == false);
    CHECK_FALSE(parse_bool("2").has_value());
    CHECK_FALSE(parse_bool("").has_value());
}

TEST_CASE("key=value splits at the first '='") {
    auto kv = split_key_value("nvml=/a=b");
    REQUIRE(kv);
    CHECK(kv->first == "nvml");
    CHECK(kv->second == "/a=b");
    CHECK_FALSE(split_key_value("=x").has_value());
    CHECK_FALSE(split_key_value("novalue").has_value());
}

TEST_CASE("lists keep their non-empty items in order") {
    CHECK(split_list("bf_interval=1,,bf_resolution=60,") == std::vector<std::string>{"bf_interval=1", "bf_resolution=60"});
    CHECK(split_list(",a") == std::vector<std::string>{"a"});
    CHECK(split_list("a:b", ':') == std::vector<std::string>{"a", "b"});
    CHECK(split_list("").empty());
    CHECK(split_list(",,").empty());
}

TEST_CASE("Slurm id lists expand ranges, sort and drop repeats") {
    CHECK(parse_id_list("0,1") == std::vector<int>{0, 1});
    CHECK(parse_id_list("3,0-2,2") == std::vector<int>{0, 1, 2, 3});
    CHECK(parse_id_list("") == std::vector<int>{});
    CHECK_FALSE(parse_id_list("1,,2").has_value());
    CHECK_FALSE(parse_id_list("2-1").has_value());
    CHECK_FALSE(parse_id_list("a").has_value());
    CHECK_FALSE(parse_id_list("0-100000", 64).has_value());
}

TEST_CASE("command-line errors in a person's words: a value that is not a number, the command typed") {
    CHECK(usage_problem(CLI::ConversionError("ID", std::vector<std::string>{"abc"})) == "ID: 'abc' is not a number");
    CHECK(usage_problem(CLI::ConversionError("ID", std::vector<std::string>{std::string(60, '9')})) ==
          "ID: '" + std::string(40, '9') + "...' is too large a number");
    CHECK(usage_problem(CLI::RequiredError("--suite")) == "--suite is required");
    char a0[] = "evalsched", a1[] = "--socket", a2[] = "/run/x.sock", a3[] = "frobnicate", a4[] = "1";
    char* argv[] = {a0, a1, a2, a3, a4};
    CHECK(first_command_word(5, argv, {"--socket"}) == "frobnicate");
    CHECK(first_command_word(3, argv, {"--socket"}).empty());
    CHECK(first_command_word(5, argv, {}) == "/run/x.sock");  // without knowing --socket takes a value
}
