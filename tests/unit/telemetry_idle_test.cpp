// Held-but-idle GPUs (core/idle.hpp): the policy keys, the exemptions, and when the sampler
// alerts and cancels.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "spank/gputrace/core/gputrace_config.hpp"
#include "spank/gputrace/core/idle.hpp"
#include "spank/gputrace/core/job_process.hpp"

using namespace acme::telemetry;

namespace {

IdleConfig parsed(const std::vector<std::string>& words, std::vector<std::string>& errors) {
    IdleConfig c;
    for (const auto& w : words) {
        const auto eq = w.find('=');
        REQUIRE(set_idle_key(w.substr(0, eq), w.substr(eq + 1), c, errors));
    }
    return c;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("idle keys: minutes by default, seconds with s, off; the default alerts at 30 min and never cancels") {
    std::vector<std::string> errors;
    const IdleConfig shipped;
    CHECK(shipped.alert == 1800);
    CHECK(shipped.cancel == 0);
    CHECK(shipped.on());

    const auto c = parsed({"idle_alert=10", "idle_cancel=90s", "idle_util=2", "idle_exempt_partitions=debug,viz",
                           "idle_exempt_qos=interactive", "idle_exempt_accounts=ops"},
                          errors);
    CHECK(errors.empty());
    CHECK(c.alert == 600);
    CHECK(c.cancel == 90);
    CHECK(c.util == 2);
    CHECK(c.exempt_partitions == std::vector<std::string>{"debug", "viz"});

    // The words the prolog hands the sampler parse back to the same policy.
    std::vector<std::string> again_errors;
    const auto again = parsed(idle_words(c), again_errors);
    CHECK(again_errors.empty());
    CHECK(again.alert == c.alert);
    CHECK(again.cancel == c.cancel);
    CHECK(again.util == c.util);
    CHECK(again.exempt_partitions == c.exempt_partitions);
    CHECK(again.exempt_qos == c.exempt_qos);
    CHECK(again.exempt_accounts == c.exempt_accounts);

    const auto off = parsed({"idle_alert=off", "idle_cancel=0"}, errors);
    CHECK(errors.empty());
    CHECK_FALSE(off.on());
}

TEST_CASE("idle keys: a bad value is one line naming the key, and the default stays") {
    for (const std::string bad : {"soon", "-5", "0.5s", "20000", "10m", "nan"}) {
        std::vector<std::string> errors;
        const auto c = parsed({"idle_alert=" + bad}, errors);
        REQUIRE(errors.size() == 1);
        CHECK(has(errors[0], "idle_alert=" + bad));
        CHECK(has(errors[0], "want minutes"));
        CHECK(c.alert == 1800);
    }
    std::vector<std::string> errors;
    parsed({"idle_util=150", "idle_exempt_qos=a b"}, errors);
    CHECK(errors.size() == 2);

    IdleConfig c;
    CHECK_FALSE(set_idle_key("idle_alerts", "5", c, errors));  // not an idle key: the caller says unknown
}

TEST_CASE("idle keys come through gputrace's plugstack line, and a typo is named") {
    auto r = parse_plugstack_args({"idle_alert=45", "idle_cancel=120", "idle_exempt_partitions=debug"}, "/s");
    CHECK(r.errors.empty());
    CHECK(r.config.idle.alert == 45 * 60);
    CHECK(r.config.idle.cancel == 120 * 60);
    r = parse_plugstack_args({"idle_alrt=45"}, "/s");
    REQUIRE(r.errors.size() == 1);
    CHECK(has(r.errors[0], "idle_alrt"));
    CHECK(has(r.errors[0], "idle_*"));
}

TEST_CASE("idle exemptions: by partition, QOS or account, named in the answer") {
    std::vector<std::string> errors;
    const auto c = parsed({"idle_exempt_partitions=debug", "idle_exempt_qos=interactive", "idle_exempt_accounts=viz"}, errors);
    CHECK(idle_exempt(c, "debug", "normal", "lab") == "partition debug");
    CHECK(idle_exempt(c, "gpu", "interactive", "lab") == "QOS interactive");
    CHECK(idle_exempt(c, "gpu", "", "viz") == "account viz");
    CHECK_FALSE(idle_exempt(c, "gpu", "normal", "lab"));
    CHECK_FALSE(idle_exempt(c, "", "", ""));  // unknown is not exempt
}

TEST_CASE("a GPU is idle at low utilisation or with no process of the job; unknown is never idle") {
    const IdleConfig c;
    CHECK(sample_idle({0, 0.0, std::nullopt}, c));
    CHECK(sample_idle({0, 5.0, std::nullopt}, c));
    CHECK_FALSE(sample_idle({0, 6.0, std::nullopt}, c));
    CHECK(sample_idle({0, 95.0, false}, c));   // busy, but with another job's work
    CHECK_FALSE(sample_idle({0, 95.0, true}, c));
    CHECK_FALSE(sample_idle({0, std::nullopt, std::nullopt}, c));
    CHECK(sample_idle({0, std::nullopt, false}, c));
}

TEST_CASE("the alert comes once per idle spell, when that GPU has idled idle_alert") {
    IdleConfig c;
    c.alert = 60;
    IdleTracker t(c);
    for (double now = 0; now < 59; now += 10) {
        t.on_sample({0, 0.0, std::nullopt}, now);
        t.on_sample({1, 90.0, std::nullopt}, now);
        CHECK(t.decide(now).alert.empty());
    }
    t.on_sample({0, 0.0, std::nullopt}, 60);
    t.on_sample({1, 90.0, std::nullopt}, 60);
    auto d = t.decide(60);
    CHECK(d.alert == std::vector<int>{0});
    CHECK(d.idle_for == 60);
    CHECK(t.alerted(0));
    CHECK_FALSE(t.alerted(1));
    CHECK(t.idle_for(0, 70) == 70);
    CHECK(t.idle_for(1, 70) == 0);
    CHECK_FALSE(d.cancel);  // idle_cancel is off
    t.on_sample({0, 0.0, std::nullopt}, 70);
    CHECK(t.decide(70).alert.empty());  // once

    // Back in use: the spell ends; a new one alerts again after a full idle_alert.
    t.on_sample({0, 50.0, std::nullopt}, 80);
    CHECK_FALSE(t.alerted(0));
    CHECK(t.idle_for(0, 80) == 0);
    t.on_sample({0, 0.0, std::nullopt}, 90);
    CHECK(t.decide(149).alert.empty());
    CHECK(t.decide(150).alert == std::vector<int>{0});
}

TEST_CASE("the cancel comes once, only when every GPU of the job has idled idle_cancel") {
    IdleConfig c;
    c.alert = 0;
    c.cancel = 120;
    IdleTracker t(c);
    t.on_sample({0, 0.0, std::nullopt}, 0);
    t.on_sample({1, 0.0, std::nullopt}, 50);  // idle from later on
    auto d = t.decide(120);
    CHECK(d.alert.empty());                     // idle_alert is off
    CHECK_FALSE(d.cancel);                      // GPU 1 idled only 70 s
    d = t.decide(170);
    CHECK(d.cancel);
    CHECK(d.idle_for == 120);
    CHECK_FALSE(t.decide(400).cancel);          // once

    IdleTracker busy_one(c);
    busy_one.on_sample({0, 0.0, std::nullopt}, 0);
    busy_one.on_sample({1, 80.0, true}, 0);
    CHECK_FALSE(busy_one.decide(1000).cancel);  // one GPU in use: the job uses what it holds
}

TEST_CASE("the reason names the GPUs, the time and the rule") {
    const IdleConfig c;
    CHECK(idle_reason({0, 2}, 1860, c) == "GPUs 0,2 held but idle for 31 min (utilisation <= 5 %, or no process of the job)");
    CHECK(has(idle_reason({3}, 45, c), "GPU 3 held but idle for 45 s"));
}

TEST_CASE("a GPU process is the job's when its cgroup or its environment names the job") {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("acme-idle-proc-" + std::to_string(::getpid()));
    fs::remove_all(root);
    const auto write = [&](const std::string& pid, const std::string& file, const std::string& text) {
        fs::create_directories(root / pid);
        std::ofstream(root / pid / file, std::ios::binary) << text;
    };
    write("100", "cgroup", "0::/system.slice/slurmstepd.scope/job_12/step_0/user/task_0\n");
    write("101", "cgroup", "0::/system.slice/slurmstepd.scope/job_123/step_0\n");
    write("102", "cgroup", "0::/user.slice\n");
    write("102", "environ", std::string("HOME=/root\0SLURM_JOB_ID=12\0", 27));
    write("103", "environ", std::string("SLURM_JOB_ID=123\0", 17));
    write("104", "cgroup", "0::/slurm/uid_1000/job_12\n");
    CHECK(process_of_job(root.string(), 100, 12));
    CHECK_FALSE(process_of_job(root.string(), 101, 12));  // job 123 is not job 12
    CHECK(process_of_job(root.string(), 102, 12));
    CHECK_FALSE(process_of_job(root.string(), 103, 12));
    CHECK(process_of_job(root.string(), 104, 12));
    CHECK_FALSE(process_of_job(root.string(), 999, 12));  // gone: not the job's
    fs::remove_all(root);
}

TEST_CASE("the alert's mail is MailProg -s SUBJECT RECIPIENT, as stall_mail's") {
    const auto argv = idle_mail_argv("/usr/bin/mail", "ada@example.org", 12, "train\x01", "n1", "GPU 0 held but idle for 31 min");
    REQUIRE(argv.size() == 4);
    CHECK(argv[0] == "/usr/bin/mail");
    CHECK(argv[1] == "-s");
    CHECK(argv[2] == "Slurm Job_id=12 Name=train? GPUs held but idle on n1: GPU 0 held but idle for 31 min");
    CHECK(argv[3] == "ada@example.org");
}
