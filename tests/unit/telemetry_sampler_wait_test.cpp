// gputrace's start of a job's sampler: the prolog's fork and the pid file it writes
// (sampler_spawn_c.h), start_wait before the helper's exec (sampler_wait_c.h), the look for the
// job's first work step, and the epilog stopping the child while it waits.
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
#include "spank/gputrace/core/sampler_spawn_c.h"
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

namespace {

// The SIGTERM bit (bit 14) of a "Name:\tHEX" line of /proc/PID/status, as a helper wrote it.
bool sigterm_in(const std::string& status, const std::string& name) {
    const auto at = status.find(name + ":\t");
    if (at == std::string::npos) return false;
    return (std::stoull(status.substr(at + name.size() + 2, 16), nullptr, 16) >> (SIGTERM - 1)) & 1;
}

bool gone(const std::string& pidfile_text) {
    const long pid = std::stol(pidfile_text);
    std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
    const auto paren = stat.rfind(')');
    return stat.empty() || (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z');
}

}  // namespace

// The prolog's fork (sampler_spawn_c.h) with sed as the helper (a real program standing in for
// acme-gpu-sampler-start: it writes its own signal state and ends).
TEST_CASE("the prolog's pid file names the detached child; the epilog's stop while it waits reaches the helper") {
    test::TempDir spool;
    const auto run = spool.path() / "run";
    const auto pidfile = run / "n1.9.sampler.pid";
    const auto out = spool.path() / "signals";
    // sed, not a shell: dash clears its signal mask as it starts. `w FILE` writes the lines.
    std::string script = "/^\\(SigBlk\\|ShdPnd\\|SigPnd\\):/w " + out.string();
    char sed[] = "sed", n[] = "-n", status[] = "/proc/self/status";
    char* const argv[] = {sed, n, script.data(), status, nullptr};
    const auto log = spool.file("n1.sampler.log");
    // No work step of job 4242424242 ever runs here: only the stop ends this wait.
    const acme_sampler_spawn s{"/bin/sed", argv, spool.path().c_str(), run.c_str(), pidfile.c_str(), log.c_str(),
                               4242424242ULL, 60};
    char error[256] = {0};
    REQUIRE(acme_sampler_spawn_detached(&s, error, sizeof error) == 0);
    // In place when the prolog returns: "PID START\n", the start time the process's own.
    const std::string text = slurp(pidfile);
    REQUIRE(text.ends_with("\n"));
    const auto space = text.find(' ');
    REQUIRE(space != std::string::npos);
    const long pid = std::stol(text.substr(0, space));
    CHECK(telemetry::is_pidfile_process(pid, text.substr(space + 1, text.size() - space - 2)));
    // A pid file whose start time is not the process's: a later process with the same pid.
    const auto other = run / "n1.10.sampler.pid";
    std::ofstream(other) << pid << " 1\n";
    CHECK(telemetry::stop_sampler(other.string(), 10, 1) == telemetry::StopResult::not_running);
    CHECK_FALSE(std::filesystem::exists(other));
    CHECK(telemetry::stop_sampler(pidfile.string(), 9, 10) == telemetry::StopResult::stopped);
    CHECK_FALSE(std::filesystem::exists(pidfile));  // the helper ended without a sampler: the epilog removes it
    std::string signals;
    for (int i = 0; i < 300 && signals.empty(); ++i) {
        signals = slurp(out);
        if (signals.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    INFO(signals);
    CHECK(sigterm_in(signals, "SigBlk"));  // still blocked for the sampler's handlers
    CHECK((sigterm_in(signals, "ShdPnd") || sigterm_in(signals, "SigPnd")));  // and pending for them
}

TEST_CASE("a helper that ends at once: its pid file names nothing the epilog could stop") {
    test::TempDir spool;
    const auto run = spool.path() / "run";
    const auto pidfile = run / "n2.11.sampler.pid";
    char t[] = "true";
    char* const argv[] = {t, nullptr};
    const auto log = spool.file("n2.sampler.log");
    acme_sampler_spawn s{"/bin/true", argv, spool.path().c_str(), run.c_str(), pidfile.c_str(), log.c_str(), 11, 0};
    char error[256] = {0};
    REQUIRE(acme_sampler_spawn_detached(&s, error, sizeof error) == 0);
    const std::string text = slurp(pidfile);
    REQUIRE_FALSE(text.empty());
    for (int i = 0; i < 300 && !gone(text); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(telemetry::stop_sampler(pidfile.string(), 11, 1) == telemetry::StopResult::not_running);
    CHECK_FALSE(std::filesystem::exists(pidfile));
    // A helper that cannot be executed: one line, no child, no pid file.
    const auto missing = spool.file("no-such-helper");
    s.helper = missing.c_str();
    CHECK(acme_sampler_spawn_detached(&s, error, sizeof error) == -1);
    CHECK(std::string(error).find("no-such-helper is not executable") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(pidfile));
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
