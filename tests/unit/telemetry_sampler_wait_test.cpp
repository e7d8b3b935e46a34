// gputrace's start_wait before the sampler's exec (sampler_wait_c.h): the look for the job's
// first work step, the pid file the waiting child claims, and the epilog stopping that child.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "spank/gputrace/core/sampler_control.hpp"
#include "spank/gputrace/core/sampler_wait_c.h"
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

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("the job has started once root's slurmstepd of a step other than extern runs") {
    test::TempDir proc;
    const auto root = proc.path().string();
    process(proc, 300, "slurmstepd: [43.extern]", 0);
    CHECK(acme_job_work_stepd_running(root.c_str(), 43) == 0);
    process(proc, 301, "slurmstepd: [43.batch]", 1000);  // a user's, titled like a step
    process(proc, 302, "slurmstepd: [430.0]", 0);         // another job's
    process(proc, 304, "slurmstepd: [4.0]", 0);           // and another's
    CHECK(acme_job_work_stepd_running(root.c_str(), 43) == 0);
    process(proc, 303, "slurmstepd: [43.batch]", 0);
    CHECK(acme_job_work_stepd_running(root.c_str(), 43) == 1);
    test::TempDir proc2;
    process(proc2, 400, "slurmstepd: [44.extern]", 0);
    process(proc2, 401, "slurmstepd: [44.0]", 0);
    CHECK(acme_job_work_stepd_running(proc2.path().string().c_str(), 44) == 1);
    CHECK(acme_job_work_stepd_running((root + "/missing").c_str(), 44) == -1);
}

TEST_CASE("a process's start time: /proc/PID/stat's 22nd field, counted from the command's last ')'") {
    test::TempDir proc;
    std::filesystem::create_directories(proc.path() / "77");
    // A command name with spaces and a ')' of its own.
    std::ofstream(proc.path() / "77" / "stat")
        << "77 (a b) c) S 1 77 77 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10 18446744073709551615\n";
    unsigned long long start = 0;
    CHECK(acme_proc_start_time(proc.path().string().c_str(), 77, &start) == 0);
    CHECK(start == 123456);
    CHECK(acme_proc_start_time(proc.path().string().c_str(), 78, &start) == -1);
    std::filesystem::create_directories(proc.path() / "79");
    std::ofstream(proc.path() / "79" / "stat") << "79 (short) S 1 2 3\n";
    CHECK(acme_proc_start_time(proc.path().string().c_str(), 79, &start) == -1);
    // This process's, twice the same.
    unsigned long long a = 0, b = 0;
    REQUIRE(acme_proc_start_time("/proc", getpid(), &a) == 0);
    REQUIRE(acme_proc_start_time("/proc", getpid(), &b) == 0);
    CHECK(a == b);
    CHECK(telemetry::is_pidfile_process(getpid(), std::to_string(a)));
    CHECK_FALSE(telemetry::is_pidfile_process(getpid(), std::to_string(a + 1)));
    CHECK_FALSE(telemetry::is_pidfile_process(getpid(), "soon"));
}

TEST_CASE("the epilog stops the prolog's child while it waits, and the stop reaches the sampler") {
    test::TempDir spool;
    const auto run = spool.path() / "run";
    const auto pidfile = run / "n1.9.sampler.pid";
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // No work step of job 4242424242 ever runs here: only the stop ends this wait.
        acme_sampler_wait_before_exec(spool.path().c_str(), run.c_str(), pidfile.c_str(), 4242424242ULL, 60);
        sigset_t pending;
        sigpending(&pending);
        _exit(sigismember(&pending, SIGTERM) ? 42 : 1);
    }
    std::string text;
    for (int i = 0; i < 500 && text.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        text = slurp(pidfile);
    }
    REQUIRE_FALSE(text.empty());
    CHECK(text.starts_with(std::to_string(child) + " "));
    CHECK(text.ends_with("\n"));
    // A pid file whose start time is not the process's: a later process with the same pid.
    const auto other = run / "n1.10.sampler.pid";
    std::ofstream(other) << child << " 1\n";
    CHECK(telemetry::stop_sampler(other.string(), 10, 1) == telemetry::StopResult::not_running);
    CHECK_FALSE(std::filesystem::exists(other));
    CHECK(telemetry::stop_sampler(pidfile.string(), 9, 10) == telemetry::StopResult::stopped);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 42);  // the SIGTERM was left pending for the sampler
}

TEST_CASE("a wait for a job that never starts ends at its deadline, the stop signals still blocked") {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        acme_sampler_wait_for_job("/proc", 4242424243ULL, 0.12);
        sigset_t blocked;
        sigprocmask(SIG_BLOCK, nullptr, &blocked);
        _exit(sigismember(&blocked, SIGTERM) && sigismember(&blocked, SIGHUP) ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
