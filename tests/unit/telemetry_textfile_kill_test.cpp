// A sampler killed in the middle of writing its textfile (SIGKILL from slurmstepd's cleanup, the
// OOM killer) never leaves node_exporter a truncated .prom file: the file is always one whole
// write, the previous one or the new one, because only a complete temporary is renamed over it.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "spank/gputrace/core/textfile_writer.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;
using namespace acme::telemetry;

namespace {

// A file much larger than a pipe or page, so that a kill lands inside write(2) or between
// partial writes often; two contents that differ everywhere.
std::string content(char fill) {
    std::string text;
    for (int line = 0; line < 4000; ++line) text += "DCGM_FI_DEV_GPU_UTIL{gpu=\"" + std::to_string(line) + "\"} " + std::string(40, fill) + "\n";
    return text;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("textfile writer: a writer killed mid-write leaves the old file or the new one, never part of one") {
    test::TempDir dir;
    const std::string a = content('1'), b = content('2');
    {
        TextfileWriter first(dir.path().string(), 7);
        std::string error;
        REQUIRE(first.write(a, error));
    }
    const std::string path = dir.file("acme-gputrace-7.prom");
    std::mt19937 random(12345);
    std::uniform_int_distribution<long> delay_us(0, 3000);
    int kills = 0;
    for (int round = 0; round < 60; ++round) {
        const pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            TextfileWriter w(dir.path().string(), 7);
            std::string error;
            for (unsigned i = 0;; ++i) w.write(i % 2 ? a : b, error);
        }
        const long us = delay_us(random);
        const timespec pause{0, us * 1000};
        nanosleep(&pause, nullptr);
        kill(child, SIGKILL);
        int status = 0;
        waitpid(child, &status, 0);
        if (WIFSIGNALED(status)) ++kills;
        const std::string now = slurp(path);
        CHECK_MESSAGE((now == a || now == b), "round " << round << ": " << now.size() << " bytes, neither whole write ("
                                                      << a.size() << ")");
    }
    CHECK(kills == 60);
    // Only the target and at most the killed writer's temporary, which node_exporter does not
    // read (not *.prom) and the next writer or the epilog removes.
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
        const std::string name = e.path().filename();
        CHECK((name == "acme-gputrace-7.prom" || name == ".acme-gputrace-7.prom.tmp"));
    }
    CHECK(remove_textfile(dir.path().string(), 7));
    CHECK(std::filesystem::is_empty(dir.path()));
}
