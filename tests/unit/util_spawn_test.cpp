#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

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
