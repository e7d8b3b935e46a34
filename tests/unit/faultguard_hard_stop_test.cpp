// A helper stopped at its hard limit says so in one line (the helpers' log is its stderr) and
// exits, where SIGALRM's default action ended it without a word: a record publisher stopped so
// left its part unsaid (tests/bench/record-scale 256, 255 of 256 parts and no line).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "spank/faultguard/core/hard_stop.hpp"

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
