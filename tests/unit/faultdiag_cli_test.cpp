// faultdiag as a user runs it: its output, its exit status, its one-line errors.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "acct/faultdiag/cli.hpp"
#include "common/store/labels_store.hpp"
#include "common/store/spool.hpp"
#include "common/util/version.hpp"
#include "tests/unit/temp_dir.hpp"

namespace {

struct Result {
    int status;
    std::string out, err;
};

std::string rules_dir() {
    const char* srcdir = std::getenv("srcdir");
    return std::string(srcdir && *srcdir ? srcdir : ".") + "/rules";
}

Result faultdiag(const acme::test::TempDir& dir, std::vector<std::string> args, const std::string& stdin_text = "") {
    acme::faultdiag::Defaults defaults{rules_dir(), dir.file("spool"), dir.file("labels.db"), false};
    std::istringstream in(stdin_text);
    std::ostringstream out, err;
    int status = acme::faultdiag::run(args, defaults, in, out, err);
    return {status, out.str(), err.str()};
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("faultdiag FILE prints one readable block with the cause and the deciding line") {
    acme::test::TempDir dir;
    write(dir.file("slurm-42.out"), "step 1\n[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n");
    auto r = faultdiag(dir, {dir.file("slurm-42.out")});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == dir.file("slurm-42.out") +
                       "\n"
                       "  cause:      out_of_memory (framework)\n"
                       "  confidence: 0.95\n"  // fw.gpu_oom, and vocab.memory agreeing on the same line
                       "  action:     fix_code\n"
                       "  evidence:\n"
                       "    line 2: [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n");
}

TEST_CASE("faultdiag --json prints one object per input, stdin included") {
    acme::test::TempDir dir;
    write(dir.file("a.log"), "NameError: name 'x' is not defined\n");
    auto r = faultdiag(dir, {"--json", "--exit-code", "1:0", dir.file("a.log"), "-"}, "bash: line 1: srun2: command not found\n");
    REQUIRE(r.status == 0);
    std::istringstream lines(r.out);
    std::string first, second, extra;
    std::getline(lines, first);
    std::getline(lines, second);
    CHECK_FALSE(std::getline(lines, extra));
    auto a = nlohmann::json::parse(first), b = nlohmann::json::parse(second);
    CHECK(a["input"] == dir.file("a.log"));
    CHECK(a["reason"] == "name_error");
    CHECK(a["category"] == "script");
    CHECK(a["action"] == "fix_code");
    CHECK(a["evidence"][0]["line"] == 1);
    CHECK(a["evidence"][1]["line"].is_null());
    CHECK(a["evidence"][1]["text"] == "exit code 1");
    CHECK(b["input"] == "(stdin)");
    CHECK(b["reason"] == "command_not_found");
}

TEST_CASE("faultdiag --version prints the version line on stdout and diagnoses nothing") {
    acme::test::TempDir dir;
    const auto r = faultdiag(dir, {"--version"}, "NCCL error: unhandled system error\n");
    CHECK(r.status == 0);
    CHECK(r.out == acme::version_line("faultdiag") + "\n");
    CHECK(r.err.empty());
}

TEST_CASE("faultdiag -V is --version; a job id that is not a number is a usage error, in one line") {
    acme::test::TempDir dir;
    auto r = faultdiag(dir, {"-V"});
    CHECK(r.status == 0);
    CHECK(r.out == acme::version_line("faultdiag") + "\n");
    r = faultdiag(dir, {"--job", "abc"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "faultdiag: --job: want a whole number from 1, got 'abc': see faultdiag --help\n");
}

TEST_CASE("a missing file stops faultdiag before it prints anything") {
    acme::test::TempDir dir;
    write(dir.file("ok.log"), "ValueError: x\n");
    auto r = faultdiag(dir, {dir.file("ok.log"), dir.file("nope.log")});
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err == "faultdiag: cannot read " + dir.file("nope.log") + ": No such file or directory: check the path\n");
}

TEST_CASE("a FIFO, a device or a directory is refused with one line, never read") {
    acme::test::TempDir dir;
    // Before the check, the FIFO hung faultdiag in open() and /dev/zero ended in bad_alloc.
    REQUIRE(mkfifo(dir.file("fifo.log").c_str(), 0600) == 0);
    for (const auto& path : {dir.file("fifo.log"), std::string("/dev/zero"), dir.path().string()}) {
        auto r = faultdiag(dir, {path});
        CHECK(r.status == 1);
        CHECK(r.out.empty());
        CHECK(r.err == "faultdiag: cannot read " + path + ": not a regular file: give a log file, or - for standard input\n");
    }
}

TEST_CASE("of a log over 64 MiB faultdiag diagnoses the tail, where the failure is") {
    acme::test::TempDir dir;
    {
        std::ofstream log(dir.file("big.log"));
        const std::string line(1023, 'x');
        for (int i = 0; i < 70 * 1024; ++i) log << line << '\n';
        log << "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
    }
    auto r = faultdiag(dir, {dir.file("big.log")});
    CHECK(r.status == 0);
    CHECK(r.out.find("out_of_memory") != std::string::npos);
}

TEST_CASE("a bad rule file in --rules is named with its line, and nothing is diagnosed") {
    acme::test::TempDir dir;
    std::filesystem::create_directory(dir.file("rules.d"));
    write(dir.file("rules.d/50-site.toml"), "[[rule]]\nid = \"x\"\nreason = \"oops\"\npattern = 'y'\n");
    write(dir.file("a.log"), "ValueError: x\n");
    auto r = faultdiag(dir, {"--rules", dir.file("rules.d"), dir.file("a.log")});
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err == "faultdiag: " + dir.file("rules.d/50-site.toml") +
                       ":3: rule \"x\" has unknown reason \"oops\": use a reason from `faultdiag --reasons`\n");
}

TEST_CASE("--label refuses an unknown reason and writes nothing") {
    acme::test::TempDir dir;
    write(dir.file("a.log"), "fatal: something\n");
    auto r = faultdiag(dir, {"--label", "77", "oom", dir.file("a.log")});
    CHECK(r.status == 2);
    CHECK(r.err == "faultdiag: unknown reason \"oom\": run `faultdiag --reasons` for the list\n");
    CHECK_FALSE(std::filesystem::exists(dir.file("labels.db")));
}

TEST_CASE("a label teaches faultdiag a failure no rule knows") {
    acme::test::TempDir dir;
    write(dir.file("77.log"), "step 5\nfatal: fabric manager lost NVSwitch 3 on gpu-a01, training aborted\n");
    write(dir.file("91.log"), "step 9\nfatal: fabric manager lost NVSwitch 6 on gpu-c07, training aborted\n");
    CHECK(faultdiag(dir, {dir.file("91.log")}).out.find("cause:      unknown (unknown)") != std::string::npos);

    auto label = faultdiag(dir, {"--label", "77", "nvlink_error", dir.file("77.log")});
    CHECK(label.status == 0);
    CHECK(label.out == "job 77 labelled nvlink_error (infrastructure), from " + dir.file("77.log") + "\n");

    auto r = faultdiag(dir, {dir.file("91.log")});
    CHECK(r.out.find("cause:      nvlink_error (infrastructure)") != std::string::npos);
    CHECK(r.out.find("history: no rule matched; nearest labelled failure is job 77 (nvlink_error)") != std::string::npos);
}

TEST_CASE("faultdiag --job shows the diagnosis faultguard stored, or re-diagnoses from the spool") {
    acme::test::TempDir dir;
    std::filesystem::create_directory(dir.file("spool"));
    auto db = acme::store::open_spool(acme::store::spool_path(dir.file("spool"), "n1"));
    db.prepare("INSERT INTO diagnoses (job_id, restart, node, ts, category, reason, confidence, evidence, action) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .bind_all(100, 0, "n1", 1.0, "framework", "value_error", 0.85,
                  R"([{"line":12,"source":"log","text":"ValueError: bad lr"}])", "fix_code")
        .run();
    auto stored = faultdiag(dir, {"--job", "100"});
    CHECK(stored.status == 0);
    CHECK(stored.out == "job 100\n"
                        "  cause:      value_error (framework)\n"
                        "  confidence: 0.85\n"
                        "  action:     fix_code\n"
                        "  source:     stored by faultguard on n1 (restart 0)\n"
                        "  evidence:\n"
                        "    line 12: ValueError: bad lr\n");

    db.prepare("INSERT INTO jobs (job_id, node, gpus) VALUES (?, ?, ?)").bind_all(200, "n1", "0,1").run();
    db.prepare("INSERT INTO task_exits (job_id, step_id, task_id, node, ts, wait_status, exit_code, signal) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .bind_all(200, 0, 0, "n1", 2.0, 1 << 8, 1, acme::store::Null{})
        .run();
    db.prepare("INSERT INTO gpu_events (job_id, gpu, ts, kind, code, detail) VALUES (?, ?, ?, ?, ?, ?)")
        .bind_all(200, 1, 1.5, "xid", 79, "GPU has fallen off the bus.")
        .run();
    auto redone = faultdiag(dir, {"--json", "--job", "200"});
    CHECK(redone.status == 0);
    auto j = nlohmann::json::parse(redone.out);
    CHECK(j["reason"] == "gpu_lost");
    CHECK(j["action"] == "drain");
    CHECK(j["source"] == "re-diagnosed from the spool (n1)");
    CHECK(j["evidence"][0]["text"] == "GPU 1: XID 79 (GPU has fallen off the bus.)");

    auto missing = faultdiag(dir, {"--job", "300"});
    CHECK(missing.status == 1);
    CHECK(missing.err == "faultdiag: job 300 is in no spool under " + dir.file("spool") +
                             ": check the id, pass --spool-dir DIR, or give its log file\n");
}

TEST_CASE("usage errors exit 2 with one line") {
    acme::test::TempDir dir;
    auto r = faultdiag(dir, {"--exit-code", "nine", "-"});
    CHECK(r.status == 2);
    CHECK(r.err.starts_with("faultdiag: --exit-code: must be EXIT:SIGNAL"));
    auto both = faultdiag(dir, {"--job", "1", "--label", "1", "value_error"});
    CHECK(both.status == 2);
}

TEST_CASE("--reasons lists every reason with its category and action") {
    acme::test::TempDir dir;
    auto r = faultdiag(dir, {"--reasons"});
    CHECK(r.status == 0);
    CHECK(r.out.find("gpu_lost                infrastructure  drain     GPU fell off the bus (XID 79)\n") != std::string::npos);
}

TEST_CASE("--label without a log remembers the evidence faultguard stored for the job") {
    acme::test::TempDir dir;
    std::filesystem::create_directory(dir.file("spool"));
    auto db = acme::store::open_spool(acme::store::spool_path(dir.file("spool"), "n2"));
    db.prepare("INSERT INTO diagnoses (job_id, restart, node, ts, category, reason, confidence, evidence, action) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .bind_all(500, 0, "n2", 1.0, "unknown", "unknown", 0.0,
                  R"([{"line":3,"source":"log","text":"fatal: fabric manager lost NVSwitch 2 on gpu-d04, training aborted"}])",
                  "none")
        .run();
    auto r = faultdiag(dir, {"--label", "500", "nvlink_error"});
    CHECK(r.status == 0);
    CHECK(r.out == "job 500 labelled nvlink_error (infrastructure), from the evidence stored in " + dir.file("spool") + "\n");
    auto db_labels = acme::store::open_labels(dir.file("labels.db"));
    auto label = acme::store::find_label(db_labels, 500);
    REQUIRE(label);
    CHECK(label->reason == "nvlink_error");

    auto nothing = faultdiag(dir, {"--label", "501", "nvlink_error"});
    CHECK(nothing.status == 1);
    CHECK(nothing.err.starts_with("faultdiag: job 501: no error lines to remember from the evidence stored in"));
}

TEST_CASE("a bad --job is one short line naming what is wanted, not CLI11's 309-digit range") {
    acme::test::TempDir dir;
    for (const std::string bad : {"abc", "0", "-3", "12x", "99999999999999999999999"}) {
        auto r = faultdiag(dir, {"--job", bad});
        CHECK(r.status == 2);
        CHECK(r.err == "faultdiag: --job: want a whole number from 1, got '" + bad + "': see faultdiag --help\n");
    }
}
