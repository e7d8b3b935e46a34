#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>
#include <vector>

#include "common/util/spawn.hpp"
#include "tests/unit/temp_dir.hpp"

namespace {

std::string wait_for_file(const std::string& path) {
    for (int i = 0; i < 200; ++i) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        if (ss.str().find("done") != std::string::npos) return ss.str();
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return {};
}

}  // namespace

TEST_CASE("a detached helper inherits no blocked or ignored signal, no descriptor, no session, no environment") {
    acme::test::TempDir dir;
    const std::string report = dir.file("report");
    // What slurmstepd does to its children: block and ignore signals, hold descriptors open.
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old);
    auto old_int = signal(SIGUSR2, SIG_IGN);
    const int leak = ::open("/dev/null", O_RDONLY);  // not O_CLOEXEC: a careless exec keeps it
    setenv("ACME_SECRET_FROM_JOB", "1", 1);

    std::string error;
    const bool ok = acme::util::spawn_detached(
        {"/bin/sh", "-c",
         "grep -E '^(SigBlk|SigIgn):' /proc/self/status > " + report + "; ls /proc/self/fd | wc -l >> " + report +
             "; ps -o sid= -p $$ >> " + report + "; env | grep -c ACME_SECRET >> " + report + "; echo $FOO >> " +
             report + "; echo done >> " + report},
        {"PATH=/usr/bin:/bin", "FOO=bar"}, dir.file("log"), error);

    sigprocmask(SIG_SETMASK, &old, nullptr);
    signal(SIGUSR2, old_int);
    ::close(leak);
    unsetenv("ACME_SECRET_FROM_JOB");
    REQUIRE_MESSAGE(ok, error);

    const std::string text = wait_for_file(report);
    REQUIRE_FALSE(text.empty());
    CHECK(text.find("SigBlk:\t0000000000000000") != std::string::npos);
    CHECK(text.find("SigIgn:\t0000000000000000") != std::string::npos);
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);
    std::getline(lines, line);
    std::getline(lines, line);
    CHECK_MESSAGE(std::stoi(line) <= 4, "descriptors: 0, 1, 2 and the one ls opens");
    std::getline(lines, line);
    CHECK(std::stol(line) != getsid(0));
    std::getline(lines, line);
    CHECK(line == "0");
    std::getline(lines, line);
    CHECK(line == "bar");
}

TEST_CASE("a program that cannot be run is an error, not a silent fork") {
    std::string error;
    CHECK_FALSE(acme::util::spawn_detached({"/nonexistent/acme-gpu-sampler"}, {}, "", error));
    CHECK(error.find("/nonexistent/acme-gpu-sampler") != std::string::npos);
}

namespace {

// A real uninterruptible helper: cgroup v1's freezer holds a frozen task in D state, where even
// SIGKILL waits until it is thawed, which is what a wedged NVML call or a read from a hung NFS
// or FUSE mount looks like to the caller. Needs root and a writable freezer hierarchy.
struct Freezer {
    std::string dir = "/sys/fs/cgroup/freezer/acme-unit-" + std::to_string(getpid());
    bool ok = false;
    Freezer() { ok = ::mkdir(dir.c_str(), 0755) == 0 && ::access((dir + "/freezer.state").c_str(), W_OK) == 0; }
    void thaw() const { std::ofstream(dir + "/freezer.state") << "THAWED\n"; }
    std::vector<pid_t> members() const {
        std::ifstream in(dir + "/cgroup.procs");
        std::vector<pid_t> pids;
        for (pid_t p; in >> p;) pids.push_back(p);
        return pids;
    }
    ~Freezer() {
        if (!ok) return;
        thaw();
        for (int i = 0; i < 200 && !members().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ::rmdir(dir.c_str());
    }
};

}  // namespace

TEST_CASE("run_bounded returns within its timeout and the grace when the helper cannot die (D state)") {
    Freezer freezer;
    if (!freezer.ok) {
        MESSAGE("no writable cgroup v1 freezer here (needs root): the D-state case is not exercised");
        return;
    }
    // The helper moves itself into the freezer cgroup and freezes it: it is then in D state.
    const std::string script = "echo $$ > " + freezer.dir + "/cgroup.procs && echo FROZEN > " + freezer.dir +
                               "/freezer.state; sleep 60";
    auto run = std::async(std::launch::async, [&] { return acme::util::run_bounded({"/bin/sh", "-c", script}, {}, "", 1.0); });
    if (run.wait_for(std::chrono::seconds(15)) != std::future_status::ready) {
        freezer.thaw();  // lets the old unbounded wait finish, so the test can report
        run.wait();
        FAIL("run_bounded was still waiting 15 s after a 1 s timeout for a helper in D state");
    }
    const auto r = run.get();
    CHECK(r.started);
    CHECK(r.timed_out);
    // The helper is still there, frozen, and no longer our child: thawed, it dies of the pending
    // SIGKILL and init reaps it.
    const auto frozen = freezer.members();
    REQUIRE(frozen.size() == 1);
    std::ifstream stat("/proc/" + std::to_string(frozen[0]) + "/stat");
    std::string pid, comm, state;
    pid_t ppid = 0;
    stat >> pid >> comm >> state >> ppid;
    CHECK(ppid != getpid());
    CHECK(state == "D");
}

TEST_CASE("a background helper runs at nice 10 and its session's autogroup too; a normal one keeps its parent's") {
    acme::test::TempDir dir;
    const std::string report = dir.file("report");
    const std::string script = "cut -d' ' -f19 /proc/self/stat > " + report +
                               "; (cat /proc/self/autogroup 2>/dev/null || echo none) >> " + report +
                               "; echo done >> " + report;
    std::string error;
    REQUIRE_MESSAGE(acme::util::spawn_detached({"/bin/sh", "-c", script}, {"PATH=/usr/bin:/bin"}, dir.file("log"), error,
                                               acme::util::Priority::background),
                    error);
    std::string text = wait_for_file(report);
    REQUIRE_FALSE(text.empty());
    std::istringstream lines(text);
    std::string nice, group;
    std::getline(lines, nice);
    std::getline(lines, group);
    CHECK(nice == "10");
    // A kernel without autogroup has no such file; where it has one, its nice is ours too.
    if (group != "none") CHECK_MESSAGE(group.ends_with("nice 10"), group);

    ::unlink(report.c_str());
    REQUIRE_MESSAGE(acme::util::spawn_detached({"/bin/sh", "-c", script}, {"PATH=/usr/bin:/bin"}, dir.file("log"), error),
                    error);
    text = wait_for_file(report);
    REQUIRE_FALSE(text.empty());
    std::istringstream again(text);
    std::getline(again, nice);
    CHECK(std::stoi(nice) == getpriority(PRIO_PROCESS, 0));
}

TEST_CASE("reset_inherited: what a helper keeps of its starter (faultguard's record retrier calls it after an exec)") {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // A starter's state: a blocked and an ignored signal, a handler, a descriptor left open.
        sigset_t block;
        sigemptyset(&block);
        sigaddset(&block, SIGTERM);
        sigprocmask(SIG_BLOCK, &block, nullptr);
        signal(SIGUSR2, SIG_IGN);
        signal(SIGALRM, [](int) {});
        const int leak = ::open("/dev/null", O_RDONLY);
        const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        acme::util::reset_inherited(devnull, devnull, STDERR_FILENO);
        int bad = 0;
        sigset_t now;
        sigprocmask(SIG_SETMASK, nullptr, &now);
        if (sigismember(&now, SIGTERM)) bad |= 1;
        struct sigaction sa {};
        sigaction(SIGUSR2, nullptr, &sa);
        if (sa.sa_handler != SIG_DFL) bad |= 2;
        sigaction(SIGALRM, nullptr, &sa);
        if (sa.sa_handler != SIG_DFL) bad |= 4;
        if (fcntl(leak, F_GETFD) != -1 || fcntl(devnull, F_GETFD) != -1) bad |= 8;  // closed: above 2
        struct stat in {}, null {};
        if (fstat(STDIN_FILENO, &in) != 0 || stat("/dev/null", &null) != 0 || in.st_rdev != null.st_rdev) bad |= 16;
        if (fcntl(STDERR_FILENO, F_GETFD) == -1) bad |= 32;  // kept
        _exit(bad);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK_MESSAGE(WEXITSTATUS(status) == 0, "failed checks (bits): ", WEXITSTATUS(status));
}

TEST_CASE("run_bounded lets a helper that answers the release go on past the timeout, and kills one that does not") {
    acme::test::TempDir dir;
    const auto done = dir.file("done");
    const acme::util::Release release{SIGWINCH, "GO-ON"};
    // Answers: its ack on stdout, then stdout elsewhere, then the rest of its work, unhurried.
    const std::string answering = "trap 'echo; echo GO-ON; exec >/dev/null; sleep 0.5; echo done > " + done +
                                  "; exit 0' WINCH; echo started; while :; do sleep 0.1; done";
    auto r = acme::util::run_bounded({"/bin/sh", "-c", answering}, {}, "", 0.5, 4096, release);
    CHECK(r.started);
    CHECK(r.released);
    CHECK_FALSE(r.timed_out);
    CHECK(r.output == "started");
    CHECK(wait_for_file(done) == "done\n");
    // Does not know the signal (ignored by default, as by a helper not that far yet): killed.
    r = acme::util::run_bounded({"/bin/sh", "-c", "echo started; while :; do sleep 0.1; done"}, {}, "", 0.5, 4096, release);
    CHECK(r.timed_out);
    CHECK_FALSE(r.released);
    CHECK(r.output == "started");
}
