#include <doctest/doctest.h>

#include <cstdlib>
#include <chrono>
#include <fstream>
#include <thread>

#include "common/nvml/library.hpp"
#include "common/store/spool.hpp"
#include "common/nvml/device_selection.hpp"
#include "spank/gputrace/core/sampler.hpp"
#include "spank/gputrace/core/spool_writer.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;

namespace {

// NVML enumerates the GPUs in the order minor 3, 2, 1, 0: a sampler that used NVML indices
// for Slurm's GPU ids would read the wrong GPUs.
constexpr const char* kReversed = R"(
[[gpu]]
minor = 3
util = 30
mem_used = 3000
power_mw = 300000
[[gpu]]
minor = 2
util = 20
[[gpu]]
minor = 1
util = [10, 11]
mem_used = 1000
power_mw = 100000
[[gpu]]
minor = 0
util = 0
mem_used = 5
power_mw = 60000

[[xid]]
at = 0
minor = 1
code = 79
[[xid]]
at = 0
minor = 3
code = 48
)";

struct FakeScenario {
    test::TempDir dir;
    explicit FakeScenario(const std::string& text) {
        std::ofstream(dir.file("scenario.toml")) << text;
        setenv("ACME_FAKE_NVML_SCENARIO", dir.file("scenario.toml").c_str(), 1);
    }
    ~FakeScenario() { unsetenv("ACME_FAKE_NVML_SCENARIO"); }
};

std::unique_ptr<nvml::Library> open_fake() {
    std::string error;
    auto lib = nvml::Library::open(ACME_FAKE_NVML, error);
    REQUIRE_MESSAGE(lib, error);
    return lib;
}

}  // namespace

TEST_CASE("the job's GPUs are found by minor number, not NVML index") {
    FakeScenario scenario(kReversed);
    auto lib = open_fake();
    std::string error;
    const auto all = lib->devices(error);
    REQUIRE(all.size() == 4);
    CHECK(all[0].minor == 3);

    const auto sel = nvml::select_devices(all, {0, 1});
    REQUIRE(sel.devices.size() == 2);
    CHECK(sel.missing.empty());
    telemetry::Sampler sampler(*lib, sel.devices);
    const auto samples = sampler.sample(1000.0);
    REQUIRE(samples.size() == 2);
    CHECK(samples[0].gpu == 0);
    CHECK(samples[0].reading.util_gpu == 0.0);
    CHECK(samples[1].gpu == 1);
    CHECK(samples[1].reading.util_gpu == 10.0);
    CHECK(samples[1].reading.mem_used == 1000);
    CHECK(samples[1].reading.power_mw == 100000);
    CHECK(samples[1].reading.temp_c.has_value());
}

TEST_CASE("GPU ids NVML does not show are reported as missing") {
    FakeScenario scenario(kReversed);
    auto lib = open_fake();
    std::string error;
    const auto sel = nvml::select_devices(lib->devices(error), {1, 7});
    CHECK(sel.devices.size() == 1);
    CHECK(sel.missing == std::vector<int>{7});
}

TEST_CASE("an injected XID arrives with its GPU; XIDs on other jobs' GPUs do not") {
    FakeScenario scenario(kReversed);
    auto lib = open_fake();
    std::string error;
    const auto sel = nvml::select_devices(lib->devices(error), {0, 1});
    telemetry::Sampler sampler(*lib, sel.devices);
    REQUIRE(lib->watch_events(error));
    const auto events = sampler.events(200, 1234.5);
    REQUIRE(events.size() == 1);
    CHECK(events[0].kind == "xid");
    CHECK(events[0].code == 79);
    CHECK(events[0].gpu == 1);
    CHECK(events[0].ts == 1234.5);
    CHECK(sampler.events(50, 0).empty());
}

TEST_CASE("a GPU that falls off the bus is reported once as gpu_lost") {
    FakeScenario scenario("[[gpu]]\nminor = 0\nutil = 50\nlost_at = 0.2\n");
    auto lib = open_fake();
    std::string error;
    telemetry::Sampler sampler(*lib, nvml::select_devices(lib->devices(error), {0}).devices);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto samples = sampler.sample(1.0);
    REQUIRE(samples.size() == 1);
    CHECK(samples[0].reading.lost);
    CHECK_FALSE(samples[0].reading.util_gpu.has_value());
    const auto events = sampler.events(0, 1.0);
    REQUIRE(events.size() == 1);
    CHECK(events[0].kind == "gpu_lost");
    sampler.sample(2.0);
    CHECK(sampler.events(0, 2.0).empty());
}

TEST_CASE("a driver whose init fails, and a library that is absent, are one-line errors") {
    {
        FakeScenario scenario("[failure]\ninit = \"fail\"\n");
        std::string error;
        CHECK_FALSE(nvml::Library::open(ACME_FAKE_NVML, error));
        CHECK(error.find("init failed") != std::string::npos);
    }
    std::string error;
    CHECK_FALSE(nvml::Library::open("/nonexistent/libnvidia-ml.so.1", error));
    CHECK(error.find("/nonexistent/libnvidia-ml.so.1") != std::string::npos);
}

TEST_CASE("samples, events and the summary land in the spool with a verdict per GPU") {
    FakeScenario scenario(kReversed);
    test::TempDir spool;
    auto db = store::open_spool(store::spool_path(spool.path().string(), "n1"));
    telemetry::SpoolWriter writer(db);
    auto lib = open_fake();
    std::string error;
    const auto sel = nvml::select_devices(lib->devices(error), {0, 1});
    telemetry::Sampler sampler(*lib, sel.devices);
    REQUIRE(lib->watch_events(error));

    writer.job_started({42, 1000, 1000, "n1", "0,1", 1.0, ""}, 100.0);
    for (int tick = 0; tick < 3; ++tick) writer.write_samples(42, sampler.sample(100.0 + tick));
    for (const auto& e : sampler.events(200, 101.0)) writer.write_event(42, e);
    writer.job_finished(42, "n1", sel.devices, {0, 1}, 103.0);

    auto count = db.prepare("SELECT COUNT(*) FROM gpu_samples WHERE job_id = 42");
    count.step();
    CHECK(count.column_int(0) == 6);
    auto summary = db.prepare(
        "SELECT gpu, samples, util_max, mem_max, xids, verdict FROM gpu_summaries WHERE job_id = 42 ORDER BY gpu");
    REQUIRE(summary.step());
    CHECK(summary.column_int(0) == 0);
    CHECK(summary.column_int(1) == 3);
    CHECK(summary.column_text(5) == "idle");
    REQUIRE(summary.step());
    CHECK(summary.column_int(0) == 1);
    CHECK(summary.column_double(2) == doctest::Approx(10.0));
    CHECK(summary.column_int(3) == 1000);
    CHECK(summary.column_int(4) == 1);
    CHECK(summary.column_text(5) == "low-util");
    CHECK_FALSE(summary.step());
    auto ended = db.prepare("SELECT ended_at FROM jobs WHERE job_id = 42");
    REQUIRE(ended.step());
    CHECK(ended.column_double(0) == 103.0);
}

TEST_CASE("a GPU with no samples gets the verdict no-data, not idle") {
    test::TempDir spool;
    auto db = store::open_spool(store::spool_path(spool.path().string(), "n1"));
    telemetry::SpoolWriter writer(db);
    writer.job_started({7, 0, 0, "n1", "0", 1.0, ""}, 1.0);
    writer.telemetry_error(7, "n1", "nvml: cannot load libnvidia-ml.so.1");
    writer.job_finished(7, "n1", {}, {0}, 2.0);
    auto q = db.prepare("SELECT s.verdict, j.telemetry_error FROM gpu_summaries s JOIN jobs j USING (job_id)");
    REQUIRE(q.step());
    CHECK(q.column_text(0) == "no-data");
    CHECK(q.column_text(1).find("cannot load") != std::string::npos);
}
