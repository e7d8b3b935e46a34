#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

#include "spank/faultguard/core/faultguard_config.hpp"
#include "spank/faultguard/core/log_tail.hpp"
#include "spank/faultguard/core/output_path.hpp"
#include "spank/faultguard/core/promised_gpus.hpp"
#include "spank/faultguard/core/task_exit_log.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::faultguard;

TEST_CASE("output patterns expand like sbatch's, relative to the working directory") {
    JobNames job{1234, 0, 0, "train", "alice", "gpu07", "/home/alice/run"};
    CHECK(expand_output_pattern("", job) == "/home/alice/run/slurm-1234.out");
    CHECK(expand_output_pattern("/scratch/%u/%x-%j.log", job) == "/scratch/alice/train-1234.log");
    CHECK(expand_output_pattern("logs/%N.%8j.out", job) == "/home/alice/run/logs/gpu07.00001234.out");
    CHECK(expand_output_pattern("100%%-%j", job) == "/home/alice/run/100%-1234");
    CHECK(expand_output_pattern("/x/%J", job) == "/x/1234.batch");
    CHECK(expand_output_pattern("/x/%q-%", job) == "/x/%q-%");
    JobNames array{1240, 1234, 6, "sweep", "bob", "n1", "/w"};
    CHECK(expand_output_pattern("", array) == "/w/slurm-1234_6.out");
    CHECK(expand_output_pattern("/o/%A.%3a", array) == "/o/1234.006");
}

TEST_CASE("task exit hand-off lines round-trip; torn and garbage lines are skipped") {
    const TaskExit a{4294967291LL, 0, 768, 100.5};
    const TaskExit b{0, 3, 9, 101.25};
    const std::string text = format_task_exit(a) + "garbage line\n" + format_task_exit(b) + "1 2 3";
    const auto parsed = parse_task_exits(text);
    REQUIRE(parsed.size() == 2);
    CHECK(parsed[0] == a);
    CHECK(parsed[1] == b);
    CHECK(parse_task_exits("1 2 999999 1.0\n").empty());
    CHECK(task_exit_path("/var/spool/acme", "n1", 7) == "/var/spool/acme/run/n1.7.task_exits");
}

TEST_CASE("a job ended cleanly only on 0:0 with every task exit 0 and every line readable") {
    const std::string ok = format_task_exit({0, 0, 0, 100.0}) + format_task_exit({4294967291LL, 0, 0, 101.0});
    CHECK(ended_cleanly("0:0", ok));
    CHECK(ended_cleanly("0:0", std::string()));  // no task handed over (a batch job of no step)
    // The job's own exit decides first: a non-zero exit, a signal, an unknown exit.
    CHECK_FALSE(ended_cleanly("1:0", ok));
    CHECK_FALSE(ended_cleanly("0:15", ok));
    CHECK_FALSE(ended_cleanly("", ok));
    // A task that failed while the batch script went on to exit 0 (`srun train; true`).
    CHECK_FALSE(ended_cleanly("0:0", ok + format_task_exit({1, 3, 9, 102.0})));
    // What cannot be read cannot be called clean: an unreadable file, a garbled or torn line.
    CHECK_FALSE(ended_cleanly("0:0", std::nullopt));
    CHECK_FALSE(ended_cleanly("0:0", ok + "garbage line\n"));
    CHECK_FALSE(ended_cleanly("0:0", ok + "1 2 0"));
}

TEST_CASE("faultguard plugstack arguments: known keys, and one-line errors for the rest") {
    const Defaults defaults{"/default/rules", "/default/helper", "", "/f", "/c.toml", "/g"};
    const auto ok = parse_plugstack_args({"spool=/s", "rules=/r", "labels=/l.db", "helper=/h", "timeout=5", "log_bytes=4096",
                                          "health_gate=yes", "gpucheck=/usr/bin/gpucheck", "ckpt_timeout=3", "gate_resident=0"},
                                         defaults);
    CHECK(ok.errors.empty());
    CHECK(ok.config.spool == "/s");
    CHECK(ok.config.rules == "/r");
    CHECK(ok.config.labels == "/l.db");
    CHECK(ok.config.helper == "/h");
    CHECK(ok.config.timeout == 5);
    CHECK(ok.config.log_bytes == 4096);
    CHECK(ok.config.health_gate);
    CHECK(ok.config.gpucheck == "/usr/bin/gpucheck");
    CHECK(ok.config.ckpt_timeout == 3);
    CHECK(ok.config.gate_resident == 0);
    CHECK(ok.config.ckpt_rules == "/c.toml");
    const Defaults d2{"/d/r", "/d/h", "", "", "", ""};
    const auto bad =
        parse_plugstack_args({"rules=relative", "timeout=0", "log_bytes=12", "colour=red", "gate_resident=-1"}, d2);
    CHECK(bad.errors.size() == 5);
    CHECK(bad.config.rules == "/d/r");
    CHECK(bad.config.timeout == 20);
    CHECK(bad.config.gate_resident == 300);
}

TEST_CASE("log tails: the end of the file, the cut first line dropped, stdout and stderr once each") {
    acme::test::TempDir dir;
    std::string big;
    for (int i = 0; i < 1000; ++i) big += "line " + std::to_string(i) + "\n";
    std::ofstream(dir.file("out")) << big;
    const auto r = read_tails_as_user({dir.file("out"), dir.file("out")}, getuid(), getgid(), 1024, 5);
    CHECK(r.notes.empty());
    CHECK(r.text.size() <= 1024);
    CHECK(r.text.find("line 999\n") != std::string::npos);
    CHECK(r.text.rfind("line ", 0) == 0);  // starts at a whole line
    CHECK(r.text.find("line 999\n") == r.text.rfind("line 999\n"));
}

TEST_CASE("log tails are read with the job user's rights: a root-only file gives nothing") {
    if (geteuid() != 0) return;  // needs root to switch users
    acme::test::TempDir dir;
    std::ofstream(dir.file("secret")) << "secret\n";
    chmod(dir.file("secret").c_str(), 0600);
    chmod(dir.path().c_str(), 0755);
    REQUIRE(symlink(dir.file("secret").c_str(), dir.file("out.log").c_str()) == 0);
    mkfifo(dir.file("fifo").c_str(), 0666);
    const auto r = read_tails_as_user({dir.file("out.log"), dir.file("fifo")}, 65534, 65534, 4096, 5);
    CHECK(r.text.empty());
    REQUIRE(r.notes.size() == 2);
    CHECK(r.notes[0].find("Permission denied") != std::string::npos);
    CHECK(r.notes[1].find("not a regular file") != std::string::npos);
}

TEST_CASE("faultguard's llm_* arguments: off by default, a model is required, the request must fit in timeout=") {
    const Defaults d{"/r", "/h", "", "", "", ""};
    CHECK(parse_plugstack_args({}, d).config.llm_endpoint.empty());
    const auto ok = parse_plugstack_args({"llm_endpoint=http://10.0.0.9:8000", "llm_model=qwen2.5-7b", "llm_token_file=/etc/acme/llm.token",
                                          "llm_timeout=5", "llm_below=0.4"},
                                         d);
    CHECK(ok.errors.empty());
    CHECK(ok.config.llm_endpoint == "http://10.0.0.9:8000");
    CHECK(ok.config.llm_model == "qwen2.5-7b");
    CHECK(ok.config.llm_below == 0.4);
    const auto no_model = parse_plugstack_args({"llm_endpoint=http://h:1"}, d);
    REQUIRE(no_model.errors.size() == 1);
    CHECK(no_model.config.llm_endpoint.empty());
    const auto too_long = parse_plugstack_args({"llm_endpoint=http://h:1", "llm_model=m", "timeout=10", "llm_timeout=9"}, d);
    REQUIRE(too_long.errors.size() == 1);
    CHECK(too_long.errors[0].find("at least 2 s below timeout=10") != std::string::npos);
    CHECK(too_long.config.llm_endpoint.empty());
    // https:// is the way to send a token (libcurl, the system's CA store).
    CHECK(parse_plugstack_args({"llm_endpoint=https://h", "llm_model=m"}, d).config.llm_endpoint == "https://h");
    CHECK(parse_plugstack_args({"llm_endpoint=ftp://h", "llm_model=m"}, d).config.llm_endpoint.empty());
    CHECK(parse_plugstack_args({}, d).config.drain_per_user == 3);
    CHECK(parse_plugstack_args({"drain_per_user=0"}, d).config.drain_per_user == 0);
    const auto bad_cap = parse_plugstack_args({"drain_per_user=-1"}, d);
    REQUIRE(bad_cap.errors.size() == 1);
    CHECK(bad_cap.errors[0] == "faultguard: plugstack argument drain_per_user=-1: want a count of nodes in [0, 100000] (0: no limit)");
}

TEST_CASE("faultguard's bounded number arguments: both ends taken, one step past each refused with the key's line") {
    const Defaults d{"/r", "/h", "", "", "", ""};
    struct Key {
        const char* key;
        const char* lo;
        const char* hi;
        const char* below;
        const char* above;
        const char* want;
    };
    const Key keys[] = {
        {"record_retry", "0", "86400", "-1", "86401", "seconds in [0, 86400] (0: no retries before the node's next epilog)"},
        {"record_retry_pause", "10", "3600", "9.5", "3601", "seconds in [10, 3600]"},
        {"gate_resident", "0", "86400", "-0.5", "86400.5", "seconds in [0, 86400] (0: a gate process for every job)"},
        {"llm_below", "0", "1", "-0.01", "1.01", "a confidence in [0, 1]"},
        {"drain_per_user", "0", "100000", "-1", "100001", "a count of nodes in [0, 100000] (0: no limit)"},
        {"log_bytes", "1024", "67108864", "1023", "67108865", "bytes in [1024, 67108864]"},
    };
    for (const auto& k : keys) {
        CAPTURE(k.key);
        for (const char* ok : {k.lo, k.hi}) {
            const std::string arg = fmt::format("{}={}", k.key, ok);
            CHECK(parse_plugstack_args({arg}, d).errors.empty());
        }
        for (const char* bad : {k.below, k.above, "x", ""}) {
            const std::string arg = fmt::format("{}={}", k.key, bad);
            const auto r = parse_plugstack_args({arg}, d);
            REQUIRE(r.errors.size() == 1);
            CHECK(r.errors[0] == fmt::format("faultguard: plugstack argument {}={}: want {}", k.key, bad, k.want));
        }
    }
    // The integer keys take no fraction; the others do, and keep the value.
    CHECK(parse_plugstack_args({"drain_per_user=1.5"}, d).errors.size() == 1);
    CHECK(parse_plugstack_args({"log_bytes=2048.5"}, d).errors.size() == 1);
    const auto c = parse_plugstack_args({"record_retry=90.5", "record_retry_pause=12.5", "gate_resident=7", "llm_below=0.25",
                                         "drain_per_user=7", "log_bytes=4096"},
                                        d);
    CHECK(c.errors.empty());
    CHECK(c.config.record_retry == 90.5);
    CHECK(c.config.record_retry_pause == 12.5);
    CHECK(c.config.gate_resident == 7);
    CHECK(c.config.llm_below == 0.25);
    CHECK(c.config.drain_per_user == 7);
    CHECK(c.config.log_bytes == 4096);
}

TEST_CASE("the health gate asks slurmctld for the node's GPU count only when the kept count cannot decide") {
    using acme::faultguard::PromisedGpus;
    const PromisedGpus kept{4, 1000};
    CHECK(format_promised_gpus(kept) == "4 1000\n");
    CHECK(parse_promised_gpus("4 1000\n") == kept);
    CHECK_FALSE(parse_promised_gpus("4 1000"));  // torn
    CHECK_FALSE(parse_promised_gpus("four 1000\n"));
    CHECK_FALSE(parse_promised_gpus("-1 1000\n"));
    CHECK_FALSE(parse_promised_gpus(""));
    // NVML shows what was promised (or more): no round trip.
    CHECK_FALSE(must_ask_slurmctld(kept, 4, 1100));
    CHECK_FALSE(must_ask_slurmctld(kept, 8, 1100));
    // Fewer: a node would be failed, so never on a kept count.
    CHECK(must_ask_slurmctld(kept, 3, 1100));
    // Nothing kept, kept too long, or a clock that went back.
    CHECK(must_ask_slurmctld(std::nullopt, 4, 1100));
    CHECK(must_ask_slurmctld(kept, 4, 1000 + acme::faultguard::kPromisedGpusMaxAge + 1));
    CHECK(must_ask_slurmctld(kept, 4, 900));
    // A count asked in a second's second half is kept from that moment on: written in whole
    // seconds rounded down (rounded up, it read as from the future and was asked again).
    const PromisedGpus late{4, 1000.75};
    CHECK(format_promised_gpus(late) == "4 1000\n");
    const auto read_back = parse_promised_gpus(format_promised_gpus(late));
    REQUIRE(read_back);
    CHECK_FALSE(must_ask_slurmctld(read_back, 4, 1000.8));
    CHECK_FALSE(must_ask_slurmctld(kept, 4, 999.5));  // less than the rounding in the past
}
