// A pilot's step as the daemon starts it (pilot_steps.hpp): the child becomes the user before
// anything runs, so a loader variable in the user's environment (LD_PRELOAD) never runs the
// user's code as root; the daemon's descriptors stay behind; srun's own output lands in the
// attempt's directory, not in the daemon's log. Needs root (it becomes another user) and a C
// compiler (for the preloaded library), else it says so and checks nothing.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "evalsched/daemon/sched/pilot_steps.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;
namespace fs = std::filesystem;

namespace {
std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::optional<int> wait_for(StepRunner& r, std::int64_t attempt) {
    for (int i = 0; i < 1000; ++i) {
        if (auto s = r.exited(attempt)) return s;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
}
}  // namespace

TEST_CASE("a step runs as its user from its first instruction: an LD_PRELOAD library never sees euid 0") {
    if (geteuid() != 0) {
        MESSAGE("not root: the step cannot become another user; not checked");
        return;
    }
    acme::test::TempDir tmp;
    chmod(tmp.path().c_str(), 0777);
    // The attacker's library: its constructor appends "<euid> <comm>" to $MARKS in every process it is loaded into.
    const std::string src = tmp.file("mark.c"), lib = tmp.file("libmark.so"), marks = tmp.file("marks");
    std::ofstream(src) << "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n"
                          "__attribute__((constructor)) static void mark(void) {\n"
                          "  const char* p = getenv(\"MARKS\"); if (!p) return;\n"
                          "  FILE* f = fopen(p, \"a\"); if (!f) return;\n"
                          "  fprintf(f, \"%d\\n\", (int)geteuid()); fclose(f);\n}\n";
    if (std::system(("cc -shared -fPIC -o " + lib + " " + src + " 2>/dev/null").c_str()) != 0) {
        MESSAGE("no C compiler: not checked");
        return;
    }
    chmod(lib.c_str(), 0755);
    { std::ofstream(marks) << ""; }
    chmod(marks.c_str(), 0666);
    // A descriptor of the daemon's (its database, say) that must not reach the step.
    const int secret = open(tmp.file("db").c_str(), O_RDWR | O_CREAT, 0600);
    REQUIRE(secret >= 0);

    StepRunner runner([] {});
    StepLaunch l;
    l.argv = {"/bin/sh", "-c", "id -u > " + tmp.file("uid") + "; ls /proc/$$/fd > " + tmp.file("fds") + "; echo srun-says-this >&2"};
    l.env = {"PATH=/usr/bin:/bin", "LD_PRELOAD=" + lib, "MARKS=" + marks};
    l.who = UserIdentity{65534, 65534, {65534}};
    l.dir = tmp.file("attempt");
    std::string error;
    REQUIRE(runner.start(1, l, error));
    const auto status = wait_for(runner, 1);
    REQUIRE(status);
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
    CHECK(slurp(tmp.file("uid")) == "65534\n");
    // The library did load (the test can fail), and never as root.
    const std::string m = slurp(marks);
    CHECK_FALSE(m.empty());
    std::istringstream lines(m);
    for (std::string line; std::getline(lines, line);) CHECK(line == "65534");
    // Only stdin, stdout, stderr (and ls's own directory) are open in the step.
    std::istringstream fds(slurp(tmp.file("fds")));
    int open_fds = 0;
    for (std::string fd; std::getline(fds, fd);) ++open_fds;
    CHECK(open_fds <= 4);
    // srun's own output: in the attempt's directory, the user's file.
    CHECK(slurp(l.dir + "/srun.out") == "srun-says-this\n");
    struct stat st {};
    REQUIRE(stat((l.dir + "/srun.out").c_str(), &st) == 0);
    CHECK(st.st_uid == 65534);
    close(secret);
}

TEST_CASE("a step's program that cannot run exits 127 and says why in its own file") {
    if (geteuid() != 0) return;
    acme::test::TempDir tmp;
    chmod(tmp.path().c_str(), 0777);
    StepRunner runner([] {});
    StepLaunch l;
    l.argv = {"/nonexistent/srun"};
    l.who = UserIdentity{65534, 65534, {65534}};
    l.dir = tmp.file("attempt");
    std::string error;
    REQUIRE(runner.start(2, l, error));
    const auto status = wait_for(runner, 2);
    REQUIRE(status);
    CHECK(WEXITSTATUS(*status) == kStepCannotExec);
    CHECK(slurp(l.dir + "/srun.out") == "evalschedd: cannot exec the step's srun: errno 2\n");
    // A relative program is refused before anything is forked.
    l.argv = {"srun"};
    CHECK_FALSE(runner.start(3, l, error));
    CHECK(error == "the step's program is not an absolute path");
}
