// What the root daemon does in a directory its user owns: no chown through a symlink the user
// swaps in, no read with root's groups, one line when the user's directory is not usable; and
// the job scripts hand the user's paths to bash unchanged, refusing a squatted stage directory.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "evalsched/daemon/sched/job_files.hpp"
#include "evalsched/daemon/sched/job_outputs.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/user_files.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;
namespace fs = std::filesystem;

namespace {
constexpr uid_t kUser = 65534;  // nobody: the evaluation's owner in these tests
constexpr gid_t kGroup = 65534;

uid_t owner_of(const std::string& path) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0 ? st.st_uid : static_cast<uid_t>(-1);
}

// A root-owned results_dir (as installed) that nobody may traverse, and in it the evaluation's
// output directory, already the user's (it is after the first trial).
struct Results {
    acme::test::TempDir tmp;
    EvalInfo e;
    std::string target;  // root's, outside: what a planted symlink points at
    Results() {
        chmod(tmp.path().c_str(), 0755);
        e.id = 7;
        e.uid = kUser;
        e.gid = kGroup;
        e.output_dir = tmp.file("7");
        fs::create_directory(e.output_dir);
        REQUIRE(chown(e.output_dir.c_str(), kUser, kGroup) == 0);
        target = tmp.file("root-only");
        fs::create_directory(target);
        chmod(target.c_str(), 0700);
    }
};

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs a script with bash; its exit status, stderr in `err`.
int run_bash(const acme::test::TempDir& dir, const std::string& script, std::string& err) {
    {
        std::ofstream(dir.file("job.sh")) << script;
    }
    const int status = std::system(("bash " + dir.file("job.sh") + " >/dev/null 2>" + dir.file("job.err")).c_str());
    err = slurp(dir.file("job.err"));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

TEST_CASE("root never chowns through a symlink the user swaps in for logs/") {
    if (geteuid() != 0) return;  // the race is root's: nothing to show without it
    Results r;
    const std::string logs = r.e.output_dir + "/logs";
    // The user, as fast as it can: logs/ a directory of theirs one moment, a symlink to root's
    // directory the next (the old lstat-then-chown let the chown land on the symlink).
    std::atomic<bool> stop{false};
    std::thread swapper([&] {
        while (!stop) {
            rmdir(logs.c_str());  // whatever is there now, the daemon's or the user's own
            unlink(logs.c_str());
            if (mkdir(logs.c_str(), 0750) == 0) rmdir(logs.c_str());
            if (symlink(r.target.c_str(), logs.c_str()) == 0) unlink(logs.c_str());
        }
    });
    // Tries until the chown lands or ACME_RACE_TRIES (default 3000) are spent; the odds per
    // try are small, so showing the old code's race takes more (e.g. 1000000).
    const char* tries_env = std::getenv("ACME_RACE_TRIES");
    const long tries = tries_env ? std::atol(tries_env) : 3000;
    for (long i = 0; i < tries && owner_of(r.target) == 0; ++i) (void)ensure_dirs(r.e);
    stop = true;
    swapper.join();
    CHECK(owner_of(r.target) == 0);
}

TEST_CASE("a symlink in place of logs/ refuses the evaluation with one line, its target untouched") {
    if (geteuid() != 0) return;
    Results r;
    REQUIRE(symlink(r.target.c_str(), (r.e.output_dir + "/logs").c_str()) == 0);
    const auto refused = ensure_dirs(r.e);
    REQUIRE(refused);
    CHECK(*refused == r.e.output_dir + "/logs is not a directory owned by uid 65534 (a symlink or a file?): remove it, then submit again");
    CHECK(owner_of(r.target) == 0);
    // A symlink in place of the output directory itself: refused, not chowned through.
    fs::remove_all(r.e.output_dir);
    REQUIRE(symlink(r.target.c_str(), r.e.output_dir.c_str()) == 0);
    const auto refused_dir = ensure_dirs(r.e);
    REQUIRE(refused_dir);
    CHECK(*refused_dir == "output directory " + r.e.output_dir + " is not a directory (a symlink): remove it, then submit again");
    CHECK(owner_of(r.target) == 0);
}

TEST_CASE("the output directory and its subdirectories are made the user's") {
    if (geteuid() != 0) return;
    Results r;
    fs::remove_all(r.e.output_dir);
    CHECK_FALSE(ensure_dirs(r.e));
    for (const char* d : {"", "/logs", "/attempts", "/inference-done"}) CHECK(owner_of(r.e.output_dir + d) == kUser);
    CHECK_FALSE(ensure_dirs(r.e));  // again: all there, nothing to do
}

TEST_CASE("results are read as the user alone: not with root's groups, not through a symlink") {
    if (geteuid() != 0) return;
    Results r;
    // Readable by a group of the daemon's (root's supplementary groups: say, a site's "shadow"
    // or "backup"); setfsuid/setfsgid alone would keep it.
    constexpr gid_t kDaemonGroup = 4242;
    std::vector<gid_t> saved(static_cast<std::size_t>(getgroups(0, nullptr)));
    REQUIRE(getgroups(static_cast<int>(saved.size()), saved.data()) == static_cast<int>(saved.size()));
    std::vector<gid_t> with = saved;
    with.push_back(kDaemonGroup);
    REQUIRE(setgroups(with.size(), with.data()) == 0);
    struct Restore {
        std::vector<gid_t>& g;
        ~Restore() { setgroups(g.size(), g.data()); }
    } restore{saved};
    const std::string secret = r.tmp.file("group-root-secret");
    std::ofstream(secret) << "{\"scores\": {\"acc\": 1}}";
    REQUIRE(chown(secret.c_str(), 0, kDaemonGroup) == 0);
    chmod(secret.c_str(), 0640);
    const std::string dir = r.e.output_dir + "/mmlu";
    REQUIRE(symlink(r.tmp.path().c_str(), dir.c_str()) == 0);
    CHECK_FALSE(read_as_user(dir + "/group-root-secret", kUser, kGroup, 1 << 20));
    REQUIRE(symlink(secret.c_str(), (r.e.output_dir + "/result.json").c_str()) == 0);
    CHECK_FALSE(read_as_user(r.e.output_dir + "/result.json", kUser, kGroup, 1 << 20));
    // The user's own file: read, its tail when large.
    const std::string own = r.e.output_dir + "/run.json";
    std::ofstream(own) << "0123456789";
    REQUIRE(chown(own.c_str(), kUser, kGroup) == 0);
    chmod(own.c_str(), 0600);
    CHECK(read_as_user(own, kUser, kGroup, 4) == "6789");
    CHECK(read_as_user(own, kUser, kGroup, 1 << 20) == "0123456789");
    // A FIFO where a result belongs does not hang the read.
    REQUIRE(mkfifo((r.e.output_dir + "/fifo").c_str(), 0600) == 0);
    REQUIRE(chown((r.e.output_dir + "/fifo").c_str(), kUser, kGroup) == 0);
    CHECK_FALSE(read_as_user(r.e.output_dir + "/fifo", kUser, kGroup, 1 << 20));
}

TEST_CASE("a checkpoint path with quote, dollar, space and newline reaches the stage helper unchanged") {
    acme::test::TempDir dir;
    const std::string ckpt = dir.file("ck\"pt $HOME `id` it's\nx");
    // A stage helper that records what it was given and fails, as a broken copy would.
    const std::string helper = dir.file("stage.sh");
    std::ofstream(helper) << "evalsched_private_dir() { printf '%s\\n' \"$1/$2\"; }\n"
                             "evalsched_stage() { printf '%s' \"$1\" > " << shell_quote(dir.file("got")) << "; return 1; }\n";
    TrialScript t{helper, dir.file("stage"), 1e9, ckpt, dir.file("attempt"), {}, dir.file("done"), "true"};
    std::string err;
    CHECK(run_bash(dir, trial_script(t), err) == kStageFailedExit);
    CHECK(slurp(dir.file("got")) == ckpt);
    CHECK(err == "evalsched: staging " + ckpt + " failed\n");
    // The metric job's message about the dataset's output directory, likewise.
    const std::string out = dir.file("out \"$x\"");
    fs::create_directory(out);
    MetricScript m{dir.file("mattempt"), out, {}, "true", {}};
    CHECK(run_bash(dir, metric_script(m), err) == kNoPredictionsExit);
    CHECK(err == "evalsched: no predictions in " + out + ": inference wrote nothing, nothing to score\n");
}

TEST_CASE("a stage directory another user made first is refused with one line naming its owner") {
    if (geteuid() != 0) return;
    acme::test::TempDir dir;
    const std::string stage = dir.file("shm"), helper = std::string(ACME_SRCDIR) + "/evalsched/daemon/evalsched-stage.sh";
    fs::create_directory(stage);
    chmod(stage.c_str(), 01777);
    auto private_dir = [&](std::string& err) {
        return run_bash(dir, ". " + shell_quote(helper) + "\nevalsched_private_dir " + shell_quote(stage) + " evalsched-root\n", err);
    };
    std::string err;
    // Fresh: made 0700, the user's.
    CHECK(private_dir(err) == 0);
    CHECK(err.empty());
    fs::remove(stage + "/evalsched-root");
    // Squatted by uid 65534, open to all: refused, nothing copied into it.
    REQUIRE(mkdir((stage + "/evalsched-root").c_str(), 0777) == 0);
    chmod((stage + "/evalsched-root").c_str(), 0777);
    REQUIRE(chown((stage + "/evalsched-root").c_str(), 65534, 65534) == 0);
    CHECK(private_dir(err) == 1);
    CHECK(err == "evalsched: staging directory " + stage +
                     "/evalsched-root is owned by uid 65534 with mode 777, not by you (uid 0) with mode 700: ask the node's admin to remove it\n");
    // A symlink planted in its place.
    fs::remove(stage + "/evalsched-root");
    REQUIRE(symlink(dir.path().c_str(), (stage + "/evalsched-root").c_str()) == 0);
    CHECK(private_dir(err) == 1);
    CHECK(err.find("is not a directory (a symlink or a file?)") != std::string::npos);
}

TEST_CASE("a staging failure's reason is the wrapper's line: a squatted directory names its owner") {
    acme::test::TempDir dir;
    EvalInfo e;
    e.uid = geteuid();
    e.gid = getegid();
    const std::string log = dir.file("job.out");
    std::ofstream(log) << "starting\nevalsched: staging directory /dev/shm/evalsched-alice is owned by uid 1001 with mode 777, not by you"
                          " (uid 1000) with mode 700: ask the node's admin to remove it\n";
    acme::slurm::JobView job;
    job.exit_code = static_cast<std::uint32_t>(kStageFailedExit) << 8;
    job.state = 5;  // JOB_FAILED
    const Failure f = diagnose_failure(nullptr, log, e, &job);
    CHECK(f.category == "infrastructure");
    CHECK(f.reason ==
          "staging_failed: staging directory /dev/shm/evalsched-alice is owned by uid 1001 with mode 777, not by you (uid 1000) with mode 700:"
          " ask the node's admin to remove it");
}

namespace {
// A file of the user's in the evaluation's output directory.
void write_user_file(const Results& r, const std::string& name, const std::string& text) {
    const std::string path = r.e.output_dir + "/" + name;
    std::ofstream(path) << text;
    REQUIRE(chown(path.c_str(), kUser, kGroup) == 0);
}
}  // namespace

TEST_CASE("a job's records in any shape its user can give them: one line naming the file, never a throw") {
    Results r;
    const std::string dir = r.e.output_dir;
    // Missing: nothing, and nothing wrong (the job never got that far).
    CHECK_FALSE(read_stage_record(dir, r.e).value);
    CHECK_FALSE(read_stage_record(dir, r.e).bad());
    std::string problem;
    CHECK_FALSE(read_run(dir, r.e, &problem).exit_code);
    CHECK(problem.empty());

    write_user_file(r, "stage.json", R"({"copied": 1, "bytes": 2048, "seconds": 0.5})");
    auto stage = read_stage_record(dir, r.e);
    REQUIRE(stage.value);
    CHECK(stage.value->copied);
    CHECK(stage.value->bytes == 2048);
    // Wrong types: what used to throw nlohmann's type_error out of the scheduling round.
    write_user_file(r, "stage.json", R"({"copied": "yes", "bytes": null})");
    stage = read_stage_record(dir, r.e);
    CHECK_FALSE(stage.value);
    CHECK(stage.problem == "stage.json: field 'copied' is a string, not 0, 1 or a boolean");
    write_user_file(r, "stage.json", R"({"copied": 0, "bytes": null})");
    CHECK(read_stage_record(dir, r.e).problem == "stage.json: field 'bytes' is null, not a number");

    write_user_file(r, "run.json", R"({"exit_code": 0, "start": 100.5, "end": 130.5})");
    const RunRecord run = read_run(dir, r.e, &problem);
    CHECK(run.exit_code == 0);
    CHECK(run.seconds == doctest::Approx(30));
    CHECK(problem.empty());
    write_user_file(r, "run.json", R"({"exit_code": null})");
    CHECK_FALSE(read_run(dir, r.e, &problem).exit_code);
    CHECK(problem == "run.json: field 'exit_code' is null, not an integer");
    write_user_file(r, "run.json", R"({"exit_code": 0, "start": 1, "end": "later"})");
    read_run(dir, r.e, &problem);
    CHECK(problem == "run.json: field 'end' is a string, not a number");
    write_user_file(r, "run.json", R"({"exit_code": 4096})");
    read_run(dir, r.e, &problem);
    CHECK(problem == "run.json: exit_code 4096 is not an exit status (0-255)");
    // Truncated, not an object, empty.
    write_user_file(r, "run.json", R"({"exit_code": 0, "sta)");
    read_run(dir, r.e, &problem);
    CHECK(problem == "run.json: not JSON (truncated?)");
    write_user_file(r, "run.json", "[0]");
    read_run(dir, r.e, &problem);
    CHECK(problem == "run.json: an array, not a JSON object");

    write_user_file(r, "server.json", R"({"ready": true, "port": 20100})");
    auto server = read_server_record(dir, r.e);
    REQUIRE(server.value);
    CHECK(server.value->port == 20100);
    write_user_file(r, "server.json", R"({"ready": "true", "port": 20100})");
    CHECK(read_server_record(dir, r.e).problem == "server.json: field 'ready' is a string, not 0, 1 or a boolean");
    write_user_file(r, "server.json", R"({"ready": true, "port": 70000})");
    CHECK(read_server_record(dir, r.e).problem == "server.json: port 70000 is not a TCP port");
    write_user_file(r, "server.json", R"({"ready": true, "port": 1.5})");
    CHECK(read_server_record(dir, r.e).problem == "server.json: field 'port' is a number, not an integer");

    // Huge: refused whole, never parsed from its tail.
    write_user_file(r, "stage.json", std::string(kMaxRecordBytes + 1, ' '));
    CHECK(read_stage_record(dir, r.e).problem == fmt::format("stage.json: larger than {} bytes", kMaxRecordBytes));
    // A FIFO: refused without hanging (no writer ever comes).
    const std::string fifo = dir + "/server.json";
    fs::remove(fifo);
    REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
    REQUIRE(chown(fifo.c_str(), kUser, kGroup) == 0);
    CHECK(read_server_record(dir, r.e).problem == "server.json: not a regular file (a symlink, a FIFO or a directory)");
    // A symlink to root's file: not followed.
    fs::remove(dir + "/stage.json");
    fs::create_symlink("/etc/shadow", dir + "/stage.json");
    CHECK(read_stage_record(dir, r.e).problem == "stage.json: not a regular file (a symlink, a FIFO or a directory)");

    // step.json: the wrapper's null outside a step is no fault.
    write_user_file(r, "step.json", R"({"job": 5, "step": null})");
    CHECK_FALSE(read_step_record(dir, r.e).value);
    CHECK_FALSE(read_step_record(dir, r.e).bad());
    write_user_file(r, "step.json", R"({"job": 5, "step": 3})");
    CHECK(read_step_record(dir, r.e).value == 3);
    write_user_file(r, "step.json", R"({"step": "3"})");
    CHECK(read_step_record(dir, r.e).problem == "step.json: field 'step' is a string, not an integer");

    write_user_file(r, "result.json", R"({"scores": {"acc": 0.5}, "inference_s": "fast"})");
    CHECK(read_result_record(dir + "/result.json", r.e).problem == "result.json: field 'inference_s' is a string, not a number");
}

TEST_CASE("a user who left the evaluation's group since submitting no longer runs as it: groups are read at each launch") {
    // nobody was never in root's group 0: a stored gid 0 (what a submission made while the
    // user was in it would hold) gives way to the user's primary group.
    const UserIdentity who = identity_of(kUser, 0);
    CHECK(who.uid == kUser);
    CHECK(who.gid == kGroup);
    CHECK(std::find(who.groups.begin(), who.groups.end(), gid_t{0}) == who.groups.end());
    // A gid the user still has stands.
    CHECK(identity_of(kUser, kGroup).gid == kGroup);
}
