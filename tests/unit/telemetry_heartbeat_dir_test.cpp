#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "spank/gputrace/core/heartbeat_dir.hpp"
#include "spank/gputrace/core/heartbeat_dir_c.h"
#include "spank/gputrace/core/progress_probe.hpp"
#include "spank/gputrace/core/stall.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::telemetry;
using acme::test::TempDir;

namespace {

struct stat stat_of(const std::string& path) {
    struct stat st {};
    REQUIRE(lstat(path.c_str(), &st) == 0);
    return st;
}

}  // namespace

TEST_CASE("heartbeat directory: made per job, private to the job's user, removed at the end") {
    TempDir dir;
    const std::string base = dir.file("run/acme/heartbeat");
    // Root's job prolog gives it to the job's user; an unprivileged test gives it to itself.
    const uid_t uid = geteuid() == 0 ? 65534 : getuid();
    const gid_t gid = geteuid() == 0 ? 65534 : getgid();
    REQUIRE(prepare_heartbeat_dir(base, 42, uid, gid) == "");
    CHECK((stat_of(base).st_mode & 07777) == 0755);
    const auto st = stat_of(heartbeat_job_dir(base, 42));
    CHECK(S_ISDIR(st.st_mode));
    CHECK((st.st_mode & 07777) == 0700);
    CHECK(st.st_uid == uid);
    CHECK(st.st_gid == gid);
    // The second node of the job (a shared file system) finds it made and keeps it.
    std::ofstream(heartbeat_job_dir(base, 42) + "/" + heartbeat_file_name("n1")) << "";
    REQUIRE(prepare_heartbeat_dir(base, 42, uid, gid) == "");
    CHECK(std::filesystem::exists(heartbeat_job_dir(base, 42) + "/heartbeat.n1"));
    remove_heartbeat_dir(base, 42);
    CHECK_FALSE(std::filesystem::exists(heartbeat_job_dir(base, 42)));
    remove_heartbeat_dir(base, 42);  // twice: nothing there, nothing said
}

TEST_CASE("heartbeat directory: a base others may write, or a symlink on the way, is refused and nothing is made") {
    TempDir dir;
    const std::string open = dir.file("open");
    mkdir(open.c_str(), 0777);
    chmod(open.c_str(), 0777);
    const auto error = prepare_heartbeat_dir(open, 7, getuid(), getgid());
    CHECK(error.find("heartbeat_dir " + open + ": writable by group or others (mode 777)") == 0);
    CHECK_FALSE(std::filesystem::exists(open + "/7"));

    const std::string elsewhere = dir.file("elsewhere");
    mkdir(elsewhere.c_str(), 0755);
    REQUIRE(symlink(elsewhere.c_str(), dir.file("link").c_str()) == 0);
    const auto linked = prepare_heartbeat_dir(dir.file("link") + "/hb", 7, getuid(), getgid());
    CHECK(linked.find("(a symlink or not a directory)") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(elsewhere + "/hb"));

    CHECK(prepare_heartbeat_dir("relative/hb", 7, getuid(), getgid()) == "heartbeat_dir relative/hb: not an absolute path");
}

TEST_CASE("heartbeat directory: the epilog removes a user's symlink, never what it points to") {
    TempDir dir;
    const std::string base = dir.file("hb");
    REQUIRE(prepare_heartbeat_dir(base, 9, getuid(), getgid()) == "");
    const std::string precious = dir.file("precious");
    std::ofstream(precious) << "keep";
    REQUIRE(symlink(precious.c_str(), (heartbeat_job_dir(base, 9) + "/heartbeat.n1").c_str()) == 0);
    remove_heartbeat_dir(base, 9);
    CHECK(std::filesystem::exists(precious));
    CHECK_FALSE(std::filesystem::exists(heartbeat_job_dir(base, 9)));
}

TEST_CASE("the stall watcher's look at the heartbeat: a regular file only, never through a symlink") {
    TempDir dir;
    const std::string base = dir.file("hb");
    REQUIRE(prepare_heartbeat_dir(base, 3, getuid(), getgid()) == "");
    StallConfig c;
    c.heartbeat_dir = base;
    const std::string hb = heartbeat_path(c, 3, "n1");
    CHECK(hb == heartbeat_job_dir(base, 3) + "/heartbeat.n1");
    ProbePaths paths{{}, hb, ""};
    CHECK_FALSE(probe_as_user(paths, getuid(), getgid(), 5).heartbeat_mtime);
    const std::string target = dir.file("elsewhere");
    std::ofstream(target) << "";
    REQUIRE(symlink(target.c_str(), hb.c_str()) == 0);
    CHECK_FALSE(probe_as_user(paths, getuid(), getgid(), 5).heartbeat_mtime);
    unlink(hb.c_str());
    std::ofstream(hb) << "";
    CHECK(probe_as_user(paths, getuid(), getgid(), 5).heartbeat_mtime);
}

TEST_CASE("heartbeat_mtime: the quick look's stat of the node's file, never through a symlink") {
    TempDir dir;
    const std::string base = dir.file("run/acme/heartbeat");
    const uid_t uid = geteuid() == 0 ? 65534 : getuid();
    const gid_t gid = geteuid() == 0 ? 65534 : getgid();
    REQUIRE(prepare_heartbeat_dir(base, 7, uid, gid) == "");
    CHECK_FALSE(heartbeat_mtime(base, 7, "n1"));  // not touched yet
    const std::string file = heartbeat_job_dir(base, 7) + "/" + heartbeat_file_name("n1");
    std::ofstream(file) << "";
    const struct timespec times[2] = {{1000, 0}, {1234, 500000000}};
    REQUIRE(utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
    const auto m = heartbeat_mtime(base, 7, "n1");
    REQUIRE(m);
    CHECK(*m == doctest::Approx(1234.5));
    CHECK_FALSE(heartbeat_mtime(base, 7, "n2"));  // another node's name
    CHECK_FALSE(heartbeat_mtime(base, 8, "n1"));  // another job
    // A user's symlink in place of the file (to a file root could stat): not followed, not a heartbeat.
    std::filesystem::remove(file);
    std::filesystem::create_symlink(dir.file("elsewhere"), file);
    std::ofstream(dir.file("elsewhere")) << "";
    CHECK_FALSE(heartbeat_mtime(base, 7, "n1"));
}

TEST_CASE("heartbeat directory: the shim's path is heartbeat_job_dir's") {
    char out[64];
    for (const char* base : {"/run/acme/heartbeat", "/run/acme/heartbeat/", "/run//", "/", "//"}) {
        CAPTURE(base);
        REQUIRE(acme_heartbeat_job_dir(out, sizeof out, base, 4294967295LL) == 0);
        CHECK(std::string(out) == heartbeat_job_dir(base, 4294967295LL));
    }
    CHECK(acme_heartbeat_job_dir(out, 8, "/run/acme/heartbeat", 7) == -1);
}
