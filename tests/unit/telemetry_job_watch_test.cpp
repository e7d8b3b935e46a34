// The sampler's "is my job still on this node?": a slurmstepd of the job, seen in a /proc tree.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "spank/gputrace/core/job_watch.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;

namespace {

void process(const test::TempDir& proc, int pid, const std::string& cmdline, int real_uid) {
    const auto dir = proc.path() / std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "cmdline") << cmdline << '\0';
    std::ofstream(dir / "status") << "Name:\tx\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t" << pid
                                  << "\nUid:\t" << real_uid << "\t0\t0\t0\nGid:\t0\t0\t0\t0\n";
}

}  // namespace

TEST_CASE("the job is on the node while root's slurmstepd of it runs") {
    test::TempDir proc;
    process(proc, 100, "slurmstepd: [41.extern]", 0);
    process(proc, 101, "python train.py", 1000);
    CHECK(telemetry::job_has_local_stepd(41, proc.path().string()));
    CHECK_FALSE(telemetry::job_has_local_stepd(4, proc.path().string()));
    CHECK_FALSE(telemetry::job_has_local_stepd(411, proc.path().string()));
}

TEST_CASE("a user's process titled like the job's slurmstepd does not keep the job alive") {
    test::TempDir proc;
    // Real uid 1000, effective 0 in the status line: a user cannot fake the real uid.
    process(proc, 200, "slurmstepd: [42.batch]", 1000);
    CHECK_FALSE(telemetry::job_has_local_stepd(42, proc.path().string()));
    process(proc, 201, "slurmstepd: [42.0]", 0);
    CHECK(telemetry::job_has_local_stepd(42, proc.path().string()));
}
