// The node's record retrier: its rounds (core/record_retry.hpp) are bounded in number and in
// time, the same on every node of a job, and a node never has two retriers (its lock).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "spank/faultguard/core/epilog_args.hpp"
#include "spank/faultguard/core/faultguard_config.hpp"
#include "spank/faultguard/core/faultguard_paths.hpp"
#include "spank/faultguard/core/outbox_files.hpp"
#include "spank/faultguard/core/prepared_exec.hpp"
#include "spank/faultguard/core/record_retry.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::faultguard;

namespace {
std::vector<double> rounds(const RetrySchedule& s) {
    std::vector<double> out;
    for (double t = 0;;) {
        const auto next = next_retry_round(s, t);
        if (!next) break;
        REQUIRE(*next > t);
        out.push_back(*next);
        t = *next;
    }
    return out;
}
}  // namespace

TEST_CASE("the default rounds: 60 s after the end, pauses doubling up to 5 min, none at or past 30 min") {
    const RetrySchedule s;
    CHECK(s.window_s == 1800);
    CHECK(s.max_pause_s == 300);
    const std::vector<double> want = {60, 180, 420, 720, 1020, 1320, 1620};
    CHECK(rounds(s) == want);
    CHECK(retry_round_count(s) == want.size());
    CHECK(!next_retry_round(s, 1620).has_value());
    CHECK(!next_retry_round(s, 5000).has_value());
    // Between rounds: the next one, and the one a try started now belongs to.
    CHECK(*next_retry_round(s, 0) == 60);
    CHECK(*next_retry_round(s, 59.9) == 60);
    CHECK(*next_retry_round(s, 60) == 180);
    CHECK(current_retry_round(s, 10) == 0);  // the publisher's own try
    CHECK(current_retry_round(s, 60) == 60);
    CHECK(current_retry_round(s, 200) == 180);
    CHECK(current_retry_round(s, 4000) == 1620);
}

TEST_CASE("the rounds stay inside the window and their pauses inside the bound, whatever the keys") {
    for (const double window : {0.0, 5.0, 10.0, 59.0, 60.0, 61.0, 300.0, 1800.0, 7200.0, 86400.0}) {
        for (const double pause : {10.0, 20.0, 60.0, 300.0, 3600.0}) {
            CAPTURE(window);
            CAPTURE(pause);
            const RetrySchedule s{window, pause};
            const auto r = rounds(s);
            CHECK(r.size() == retry_round_count(s));
            // At most one round per 10 s of the window (the shortest pause): bounded tries.
            CHECK(static_cast<double>(r.size()) <= window / 10 + 1);
            double last = 0;
            for (const double at : r) {
                CHECK(at < window);
                CHECK(at - last <= pause + 1e-9);
                CHECK(at - last >= std::min(60.0, pause) - 1e-9);
                last = at;
            }
            // Every node of a job computes the same rounds from the job's end.
            for (const double t : r) CHECK(current_retry_round(s, t + 0.5) == t);
        }
    }
    CHECK(retry_round_count({0, 300}) == 0);
    CHECK(!next_retry_round({0, 300}, -5).has_value());
}

TEST_CASE("the hand-off's retry settings: defaults where missing, clamped where out of range") {
    CHECK(retry_schedule_of(nlohmann::json::object()) == RetrySchedule{});
    CHECK(retry_schedule_of(nullptr) == RetrySchedule{});
    CHECK(retry_schedule_of({{"retry", {{"for", 600}, {"pause", 20}}}}) == RetrySchedule{600, 20});
    CHECK(retry_schedule_of({{"retry", {{"for", 0}}}}) == RetrySchedule{0, 300});
    CHECK(retry_schedule_of({{"retry", {{"for", -5}, {"pause", 1}}}}) == RetrySchedule{0, 10});
    CHECK(retry_schedule_of({{"retry", {{"for", 1e12}, {"pause", 1e9}}}}) == RetrySchedule{86400, 3600});
    CHECK(retry_schedule_of({{"retry", {{"for", "soon"}, {"pause", nullptr}}}}) == RetrySchedule{});
    CHECK(retry_schedule_of({{"retry", 5}}) == RetrySchedule{});
    const RetrySchedule s{900, 45};
    CHECK(retry_schedule_of({{"retry", retry_schedule_json(s)}}) == s);
}

TEST_CASE("record_retry and record_retry_pause: plugstack keys, handed to the helper") {
    const Defaults d{"/r", "/h", "", "/f", "/c", "/g"};
    auto r = parse_plugstack_args({}, d);
    CHECK(r.config.record_retry == kRecordRetryDefaultSeconds);
    CHECK(r.config.record_retry_pause == kRecordRetryPauseDefaultSeconds);
    CHECK(EpilogArgs{}.record_retry == kRecordRetryDefaultSeconds);
    CHECK(EpilogArgs{}.record_retry_pause == kRecordRetryPauseDefaultSeconds);
    r = parse_plugstack_args({"record_retry=0", "record_retry_pause=20"}, d);
    CHECK(r.errors.empty());
    CHECK(r.config.record_retry == 0);
    CHECK(r.config.record_retry_pause == 20);
    r = parse_plugstack_args({"record_retry=-1", "record_retry_pause=5", "record_retry=90000"}, d);
    REQUIRE(r.errors.size() == 3);
    CHECK(r.errors[0].find("record_retry=-1: want seconds in [0, 86400]") != std::string::npos);
    CHECK(r.errors[1].find("record_retry_pause=5: want seconds in [10, 3600]") != std::string::npos);
    CHECK(r.config.record_retry == kRecordRetryDefaultSeconds);
    EpilogArgs a;
    a.job = 5;
    a.record_retry = 600;
    a.record_retry_pause = 20;
    a.retry_outbox = true;
    const auto argv = epilog_argv("/h", a);
    std::vector<std::string_view> tail(argv.begin() + 1, argv.end());
    std::string error;
    const auto back = parse_epilog_args(tail, error);
    REQUIRE_MESSAGE(back, error);
    CHECK(*back == a);
}

TEST_CASE("a node has one retrier: its lock, O_NOFOLLOW under a run directory only we may write") {
    acme::test::TempDir dir;
    const std::string spool = dir.path().string();
    REQUIRE(mkdir(run_dir(spool).c_str(), 0700) == 0);
    bool held = false;
    std::string error;
    const int first = take_retrier_lock(spool, "n1", held, error);
    REQUIRE_MESSAGE(first >= 0, error);
    // It says who holds it.
    char buf[32] = {};
    REQUIRE(::pread(first, buf, sizeof buf - 1, 0) > 0);
    CHECK(std::stol(buf) == ::getpid());
    // A second one, even in this process (another open file), is refused as held.
    CHECK(take_retrier_lock(spool, "n1", held, error) == -1);
    CHECK(held);
    // Another node's (slurmd shares the host) is its own.
    const int other = take_retrier_lock(spool, "n2", held, error);
    CHECK(other >= 0);
    // In another process too, and free again once the holder lets go.
    const pid_t child = ::fork();
    if (child == 0) {
        bool h = false;
        std::string e;
        _exit(take_retrier_lock(spool, "n1", h, e) == -1 && h ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    // A publisher asks without taking anything (the holder's own attempt must never fail on it).
    const std::string lock_path = run_dir(spool) + "/" + record_retrier_lock_name("n1");
    CHECK(lock_held(lock_path.c_str()));
    CHECK(!lock_held((run_dir(spool) + "/" + record_retrier_lock_name("n9")).c_str()));
    ::close(first);
    CHECK(!lock_held(lock_path.c_str()));
    ::close(other);
    const int again = take_retrier_lock(spool, "n1", held, error);
    CHECK(again >= 0);
    ::close(again);

    // A link planted where the lock goes is not followed, nor a run directory others may write.
    const std::string target = dir.file("elsewhere");
    REQUIRE(::symlink(target.c_str(), (run_dir(spool) + "/" + record_retrier_lock_name("n3")).c_str()) == 0);
    CHECK(take_retrier_lock(spool, "n3", held, error) == -1);
    CHECK(!held);
    CHECK(::access(target.c_str(), F_OK) != 0);
    REQUIRE(::chmod(run_dir(spool).c_str(), 0777) == 0);
    CHECK(take_retrier_lock(spool, "n1", held, error) == -1);
    CHECK(error.find("only we may write") != std::string::npos);
}

TEST_CASE("the retrier sees every part of its node, held or not, with its hand-off") {
    acme::test::TempDir dir;
    const std::string spool = dir.path().string();
    REQUIRE(mkdir(run_dir(spool).c_str(), 0700) == 0);
    std::string error;
    const auto mine = record_part_path(spool, "n1", 5, 0);
    REQUIRE(write_handoff(mine, {{"job", 5}, {"end", 100.0}, {"retry", {{"for", 600}, {"pause", 20}}}}, error));
    const auto held = record_part_path(spool, "n1", 6, 0);
    REQUIRE(write_handoff(held, {{"job", 6}}, error));
    REQUIRE(write_handoff(record_part_path(spool, "n2", 7, 0), {{"job", 7}}, error));
    {
        const int fd = ::open((run_dir(spool) + "/n1.8.0.record").c_str(), O_WRONLY | O_CREAT, 0600);
        REQUIRE(::write(fd, "{not json", 9) == 9);
        ::close(fd);
    }
    const int fd = ::open(held.c_str(), O_RDONLY);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
    const auto entries = outbox_entries(spool, "n1");
    REQUIRE(entries.size() == 3);
    int locked = 0, unparsed = 0;
    for (const auto& e : entries) {
        locked += e.locked;
        unparsed += e.handoff.is_null();
        if (e.path == mine) CHECK(retry_schedule_of(e.handoff) == RetrySchedule{600, 20});
    }
    CHECK(locked == 1);
    CHECK(unparsed == 1);
    ::close(fd);
}
