#include <doctest/doctest.h>

#include "spank/faultguard/core/epilog_args.hpp"

using namespace acme::faultguard;

namespace {

std::optional<EpilogArgs> reparse(const std::vector<std::string>& argv, std::string& error) {
    REQUIRE(!argv.empty());
    const std::vector<std::string_view> tail(argv.begin() + 1, argv.end());
    return parse_epilog_args(tail, error);
}

}  // namespace

TEST_CASE("the epilog helper's argv round-trips through its parser") {
    EpilogArgs a;
    a.job = 4242;
    a.node = "n2";
    a.spool = "/var/spool/acme";
    a.rules = "/etc/acme/rules.d";
    a.labels = "/var/lib/acme/labels.db";
    a.job_type = "pretrain";
    a.auto_recover = 3;
    a.gpucheck = "/usr/bin/gpucheck";
    a.admin_comment = true;
    a.uid = 1000;
    a.gid = 100;
    a.restart = 2;
    a.exit_code2 = "0:9";
    a.gpus = "0,2-3";
    a.nodelist = "n[1-3]";
    a.work_dir = "/home/alice/run 7";
    a.stdout_pattern = "/scratch/%u/%x-%j.log";
    a.stderr_pattern = "--not-a-flag";
    a.user = "alice";
    a.log_bytes = 4096;
    a.read_timeout = 1.25;
    const auto argv = epilog_argv("/libexec/acme-faultguard-epilog", a);
    CHECK(argv.front() == "/libexec/acme-faultguard-epilog");
    std::string error;
    const auto back = reparse(argv, error);
    REQUIRE_MESSAGE(back, error);
    CHECK(*back == a);

    // Defaults stay off the command line and come back as defaults.
    EpilogArgs plain;
    plain.job = 1;
    plain.node = "n1";
    plain.spool = "/s";
    plain.rules = "/r";
    const auto short_argv = epilog_argv("h", plain);
    CHECK(short_argv == std::vector<std::string>{"h", "--job", "1", "--node", "n1", "--spool", "/s", "--rules", "/r"});
    const auto plain_back = reparse(short_argv, error);
    REQUIRE(plain_back);
    CHECK(*plain_back == plain);
    CHECK(plain_back->auto_recover == -1);
    CHECK(!plain_back->admin_comment);
}

TEST_CASE("the epilog helper refuses unknown flags, missing values and values out of range") {
    std::string error;
    CHECK(parse_epilog_args({"--job=7", "--admin-comment", "--exit-code2", ""}, error));
    CHECK(parse_epilog_args({"--release", "9", "--restart", "1"}, error)->release == 9);
    CHECK(parse_epilog_args({"--publish", "/s/run/n1.7.0.record"}, error)->publish == "/s/run/n1.7.0.record");
    CHECK(parse_epilog_args({"--detached", "20"}, error)->detached == 20);
    CHECK_FALSE(parse_epilog_args({"--detached", "-1"}, error));
    CHECK(!parse_epilog_args({"--colour", "red"}, error));
    CHECK(error.find("--colour") != std::string::npos);
    CHECK(!parse_epilog_args({"--node"}, error));
    CHECK(error == "--node: needs a value");
    CHECK(!parse_epilog_args({"--job", "0"}, error));
    CHECK(!parse_epilog_args({"--job", "7x"}, error));
    CHECK(!parse_epilog_args({"--log-bytes", "12"}, error));
    CHECK(!parse_epilog_args({"--read-timeout", "0.01"}, error));
    CHECK(!parse_epilog_args({"--auto-recover", "-2"}, error));
    CHECK(epilog_usage().find("--stdout-pattern") != std::string::npos);
}
