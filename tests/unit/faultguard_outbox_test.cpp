// The outbox scan a node's epilog makes for record parts slurmdbd did not take: only the parts
// no publisher has now are worth another process (issue #41: each start is a whole helper's
// exec on the node that is starting the next job).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <string>

#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/core/outbox_files.hpp"
#include "tests/unit/temp_dir.hpp"

namespace {

std::string put_part(const std::string& spool, const std::string& name, std::time_t age_s) {
    const std::string path = acme::faultguard::run_dir(spool) + "/" + name;
    std::string error;
    REQUIRE_MESSAGE(acme::faultguard::write_handoff(path, {{"job", 1}}, error), error);
    const std::time_t then = std::time(nullptr) - age_s;
    const struct timespec times[2] = {{then, 0}, {then, 0}};
    utimensat(AT_FDCWD, path.c_str(), times, 0);
    return path;
}

}  // namespace

TEST_CASE("a later epilog retries only the outbox parts no publisher holds, oldest first") {
    acme::test::TempDir dir;
    const std::string spool = dir.path().string();
    REQUIRE(mkdir(acme::faultguard::run_dir(spool).c_str(), 0700) == 0);
    const auto oldest = put_part(spool, "n1.3.0.record", 600);
    const auto held = put_part(spool, "n1.4.0.record", 300);
    const auto older = put_part(spool, "n1.5.0.record", 60);
    const auto fresh = put_part(spool, "n1.6.0.record", 0);   // its own publisher is starting
    put_part(spool, "n2.7.0.record", 900);                    // another node's (slurmd shares the host)
    const auto own = put_part(spool, "n1.8.0.record", 900);   // this epilog's own part

    // A live publisher holds its part's lock for as long as it works on it.
    const int fd = ::open(held.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);

    auto parts = acme::faultguard::outbox_parts(spool, "n1", own, 8);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0] == oldest);
    CHECK(parts[1] == older);

    // The publisher ended without publishing (slurmdbd down): its part is another try's again.
    ::close(fd);
    parts = acme::faultguard::outbox_parts(spool, "n1", own, 8);
    REQUIRE(parts.size() == 3);
    CHECK(parts[1] == held);
    CHECK(acme::faultguard::outbox_parts(spool, "n1", own, 1).size() == 1);
    (void)fresh;
}
