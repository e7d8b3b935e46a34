#include <doctest/doctest.h>

#include "spank/gputrace/core/gputrace_config.hpp"

using namespace acme::telemetry;

namespace {
ConfigResult parse(std::vector<std::string_view> args) { return parse_plugstack_args(args, "/libexec/acme-gpu-sampler"); }
}  // namespace

TEST_CASE("plugstack arguments set every documented key") {
    const auto r = parse({"default=on", "interval=5", "min_interval=0.5", "max_interval=600", "spool=/var/tmp/acme",
                          "nvml=/opt/nvml/libnvidia-ml.so.1", "sampler=/opt/acme/sampler", "stop_timeout=3",
                          "watch_interval=30", "call_timeout=4"});
    CHECK(r.errors.empty());
    CHECK(r.config.default_on);
    CHECK(r.config.interval == 5);
    CHECK(r.config.min_interval == 0.5);
    CHECK(r.config.max_interval == 600);
    CHECK(r.config.spool == "/var/tmp/acme");
    CHECK(r.config.nvml == "/opt/nvml/libnvidia-ml.so.1");
    CHECK(r.config.sampler == "/opt/acme/sampler");
    CHECK(r.config.stop_timeout == 3);
    CHECK(r.config.watch_interval == 30);
    CHECK(r.config.call_timeout == 4);
}

TEST_CASE("defaults: off, 10 s, the build's sampler, the build's spool") {
    const auto r = parse({});
    CHECK(r.errors.empty());
    CHECK_FALSE(r.config.default_on);
    CHECK(r.config.interval == 10);
    CHECK(r.config.sampler == "/libexec/acme-gpu-sampler");
    CHECK(r.config.spool == acme::paths::kSpoolDir);  // what gpuacct reads by default too
    CHECK(r.config.start_wait == 1);
}

TEST_CASE("start_wait: seconds in [0, 600], 0 meaning the sampler starts at once") {
    CHECK(parse({"start_wait=0"}).config.start_wait == 0);
    CHECK(parse({"start_wait=2.5"}).config.start_wait == 2.5);
    for (const char* bad : {"start_wait=-1", "start_wait=601", "start_wait=soon", "start_wait="}) {
        const auto r = parse({bad});
        REQUIRE(r.errors.size() == 1);
        CHECK(r.errors[0].find("start_wait") != std::string::npos);
        CHECK(r.config.start_wait == 1);
    }
}

TEST_CASE("unknown keys and bad values are errors that name the key; the rest still applies") {
    const auto r = parse({"colour=blue", "interval=abc", "default=maybe", "spool=relative/dir", "junk", "interval=2"});
    REQUIRE(r.errors.size() == 5);
    CHECK(r.errors[0].find("colour") != std::string::npos);
    CHECK(r.errors[1].find("interval=abc") != std::string::npos);
    CHECK(r.errors[2].find("default=maybe") != std::string::npos);
    CHECK(r.errors[3].find("spool=") != std::string::npos);
    CHECK(r.errors[4].find("junk") != std::string::npos);
    CHECK(r.config.interval == 2);
    CHECK_FALSE(r.config.default_on);
}

TEST_CASE("garbage arguments (2 KB, path-like, empty) never crash and are reported") {
    const std::string garbage(2048, 'x');
    const auto r = parse({garbage, "../../etc/passwd", "", "="});
    CHECK(r.errors.size() == 4);
    for (const auto& e : r.errors) CHECK(e.size() < 400);
}

TEST_CASE("--gpu-telemetry accepts nothing, on, off, and seconds within the admin's bounds") {
    GputraceConfig c;
    c.min_interval = 1;
    c.max_interval = 60;
    std::string error;
    auto r = parse_telemetry_value("", c, "--gpu-telemetry", error);
    REQUIRE(r);
    CHECK(r->enabled);
    CHECK_FALSE(r->interval.has_value());
    r = parse_telemetry_value("off", c, "--gpu-telemetry", error);
    REQUIRE(r);
    CHECK_FALSE(r->enabled);
    r = parse_telemetry_value("2.5", c, "--gpu-telemetry", error);
    REQUIRE(r);
    CHECK(r->interval == 2.5);
}

TEST_CASE("--gpu-telemetry refuses abc, 0, -1 and values outside the admin's bounds, naming the flag") {
    GputraceConfig c;
    c.min_interval = 1;
    c.max_interval = 60;
    for (const char* bad : {"abc", "0", "-1", "0.5", "61", "1e9", "nan", "1\n2", "\x1b[31mred"}) {
        std::string error;
        CHECK_FALSE(parse_telemetry_value(bad, c, "--gpu-telemetry", error).has_value());
        CHECK_MESSAGE(error.find("--gpu-telemetry=") != std::string::npos, bad);
        CHECK(error.find('\n') == std::string::npos);
    }
    std::string error;
    parse_telemetry_value("61", c, "--gpu-telemetry", error);
    CHECK(error.find("maximum interval of 60") != std::string::npos);
}

TEST_CASE("the flag wins over the environment, which wins over the admin default") {
    GputraceConfig c;
    c.default_on = true;
    CHECK(effective_request(std::nullopt, std::nullopt, c).enabled);
    CHECK_FALSE(effective_request(std::nullopt, TelemetryRequest{false, {}}, c).enabled);
    CHECK(effective_request(TelemetryRequest{true, 3.0}, TelemetryRequest{false, {}}, c).interval == 3.0);
}

TEST_CASE("textfile_dir: off by default, an absolute directory (with %n) turns it on, a relative one is refused") {
    CHECK(parse({}).config.textfile_dir.empty());
    const auto on = parse({"textfile_dir=/var/lib/prometheus/node-exporter/%n"});
    CHECK(on.errors.empty());
    CHECK(on.config.textfile_dir == "/var/lib/prometheus/node-exporter/%n");
    const auto blank = parse({"textfile_dir="});
    CHECK(blank.errors.empty());
    CHECK(blank.config.textfile_dir.empty());
    const auto rel = parse({"textfile_dir=node-exporter"});
    REQUIRE(rel.errors.size() == 1);
    CHECK(rel.errors[0].find("textfile_dir=node-exporter") != std::string::npos);
    CHECK(rel.config.textfile_dir.empty());
}

TEST_CASE("textfile_job_labels: no by default, yes or no, anything else refused and left off") {
    CHECK_FALSE(parse({}).config.textfile_job_labels);
    CHECK(parse({"textfile_job_labels=yes"}).config.textfile_job_labels);
    CHECK_FALSE(parse({"textfile_job_labels=no"}).config.textfile_job_labels);
    const auto bad = parse({"textfile_job_labels=1"});
    REQUIRE(bad.errors.size() == 1);
    CHECK(bad.errors[0] == "gputrace: plugstack argument textfile_job_labels=1: want yes or no");
    CHECK_FALSE(bad.config.textfile_job_labels);
}
