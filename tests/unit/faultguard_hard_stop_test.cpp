// A helper stopped at its hard limit says so in one line (the helpers' log is its stderr) and
// exits, where SIGALRM's default action ended it without a word: a record publisher stopped so
// left its part unsaid (tests/bench/record-scale 256, 255 of 256 parts and no line).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "spank/faultguard/core/hard_stop.hpp"
#include "spank/faultguard/core/prepared_exec.hpp"
#include "tests/unit/temp_dir.hpp"

namespace {

struct Ended {
    int status = -1;
    std::string stderr_text;
};

// Runs `body` in a child whose stderr is a pipe; what it wrote and how it ended.
template <class Body>
Ended in_child(Body body) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        ::dup2(fds[1], STDERR_FILENO);
        body();
        _exit(0);
    }
    ::close(fds[1]);
    Ended out;
    char buf[512];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.stderr_text.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    REQUIRE(::waitpid(pid, &out.status, 0) == pid);
    return out;
}

}  // namespace

TEST_CASE("a hard stop writes its line and exits with its code; re-arming replaces the line") {
    const auto ended = in_child([] {
        acme::faultguard::arm_hard_stop(30, "the first line, replaced\n");
        acme::faultguard::arm_hard_stop(1, "job 7 on n1: record not in AdminComment: stopped; kept\n", 3);
        for (;;) ::pause();  // a libslurm call that does not return
    });
    REQUIRE(WIFEXITED(ended.status));
    CHECK(WEXITSTATUS(ended.status) == 3);
    CHECK(ended.stderr_text == "job 7 on n1: record not in AdminComment: stopped; kept\n");
}

TEST_CASE("a disarmed hard stop never fires") {
    const auto ended = in_child([] {
        acme::faultguard::arm_hard_stop(1, "not to be seen\n");
        acme::faultguard::arm_hard_stop(0, {});
        ::sleep(2);
    });
    REQUIRE(WIFEXITED(ended.status));
    CHECK(WEXITSTATUS(ended.status) == 0);
    CHECK(ended.stderr_text.empty());
}

TEST_CASE("a hard stop starts what it was given (the node's record retrier), in a session of its own") {
    acme::test::TempDir dir;
    const std::string mark = dir.file("started");
    static acme::faultguard::PreparedExec then;  // static: the handler reads it
    // What the started program says: its pid and its session's (/proc/PID/stat, field 6).
    REQUIRE(then.prepare({"/bin/sh", "-c", "echo \"$$ $(cut -d' ' -f6 /proc/$$/stat)\" >" + mark + ".tmp && mv " + mark + ".tmp " + mark},
                         {"PATH=/usr/bin:/bin"}));
    const auto ended = in_child([&] {
        acme::faultguard::arm_hard_stop(1, "stopped; kept\n", 1, &then);
        for (;;) ::pause();
    });
    REQUIRE(WIFEXITED(ended.status));
    CHECK(WEXITSTATUS(ended.status) == 1);
    CHECK(ended.stderr_text == "stopped; kept\n");
    std::string text;
    for (int i = 0; i < 100 && text.empty(); ++i) {
        std::ifstream in(mark);
        std::getline(in, text);
        if (text.empty()) ::usleep(50 * 1000);
    }
    REQUIRE(!text.empty());
    std::istringstream fields(text);
    long pid = 0, sid = 0;
    fields >> pid >> sid;
    CHECK(pid == sid);  // setsid(): the leader of its own session
    CHECK(sid != ::getsid(0));

    // Too much to hold: nothing is prepared, and nothing would start.
    acme::faultguard::PreparedExec big;
    CHECK(!big.prepare({std::string(acme::faultguard::PreparedExec::kMaxBytes, 'x')}, {}));
    CHECK(!big.prepared());
    CHECK(big.start() == -1);
}
