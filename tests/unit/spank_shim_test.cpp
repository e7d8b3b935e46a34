// The shims (spank/shim) read a few plugstack arguments in C and write the task-exit line in C;
// the C++ implementations parse the same arguments and read the same line. Held side by side:
// whatever the arguments, the shim acts on the values the implementation would have used.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "spank/faultguard/core/faultguard_config.hpp"
#include "spank/faultguard/core/task_exit_log.hpp"
#include "spank/gputrace/core/gputrace_config.hpp"
#include "spank/option_env.hpp"
#include "spank/shim_text.h"
#include "common/util/parse.hpp"

namespace {

struct Args {  // a plugstack line's words as Slurm hands them to a plugin (char**)
    std::vector<std::string> words;
    std::vector<char*> argv;
    explicit Args(std::vector<std::string> w) : words(std::move(w)) {
        for (auto& s : words) argv.push_back(s.data());
    }
    int ac() const { return static_cast<int>(argv.size()); }
    char** av() { return argv.data(); }
    std::vector<std::string_view> views() const { return {words.begin(), words.end()}; }
};

const std::vector<std::vector<std::string>> kLines = {
    {},
    {"stall=off"},
    {"stall=OFF", "stall=maybe"},
    {"stall=no", "stall=Yes"},
    {"stall=off", "stall="},
    {"heartbeat_dir=/run/hb"},
    {"heartbeat_dir=/run/hb", "heartbeat_dir=relative"},
    {"heartbeat_dir=/a", "heartbeat_dir=/b/"},
    {"heartbeat_dir=", "=x", "heartbeat_dir"},
    {"heartbeat_dir=/with\nnewline"},
    {"heartbeat_dir=/" + std::string(1100, 'x')},
    {"heartbeat_dir=/" + std::string(1023, 'x')},
    {"stall_share=/s", "stall=0", "stall_x=1", "stallx=off"},
    {"default=on"},
    {"default=on", "default=ON"},
    {"default=on", "default=off", "default=yes"},
    {"spool=/var/spool/x", "spool=rel"},
    {"spool=", "spool=/a", "spool=/b=c"},
    {"spool=/s", "spool=/" + std::string(1024, 's')},
    {"textfile_dir=/t/%n", "interval=3", "nonsense"},
    {"sampler=/opt/s", "sampler=rel", "start_wait=0"},
    {"sampler=", "start_wait=601", "start_wait=2.5"},
    {"start_wait=0x10"}, {"start_wait= 3"}, {"start_wait=+3"}, {"start_wait=1e2"}, {"start_wait=inf"},
    {"start_wait=nan"}, {"start_wait=-0"}, {"start_wait=.5"}, {"start_wait=5.", "start_wait=-1"}, {"start_wait=1e3"},
    {"start_wait=600", "start_wait=abc"},
    {"health_gate=yes", "gate_resident=0", "gate_timeout=0.5", "nvml=/x/nv.so", "rules=/r"},
    {"health_gate=Yes", "health_gate=maybe", "gate_resident=86401", "gate_timeout=601", "nvml=", "rules=rel"},
    {"health_gate=no", "gate_resident=1.5", "gate_timeout=0", "gate_timeout=3", "nvml=a", "nvml=b"},
};

}  // namespace

TEST_CASE("the gputrace shim reads stall=, heartbeat_dir= and default= as gputrace_config does") {
    for (const auto& line : kLines) {
        Args a(line);
        const auto c = acme::telemetry::parse_plugstack_args(a.views(), "/x/acme-gpu-sampler").config;
        CAPTURE(a.words);
        CHECK(acme_arg_bool(a.ac(), a.av(), "stall", 1) == (c.stall.enabled ? 1 : 0));
        CHECK(std::string(acme_arg_path(a.ac(), a.av(), "heartbeat_dir", ACME_HEARTBEAT_DIR)) == c.stall.heartbeat_dir);
        CHECK(acme_arg_on_off(a.ac(), a.av(), "default", 0) == (c.default_on ? 1 : 0));
        // The prolog's start of the sampler (shim.c): where, and how long its child waits.
        CHECK(std::string(acme_arg_path(a.ac(), a.av(), "spool", ACME_SPOOL_DIR)) == c.spool);
        CHECK(std::string(acme_arg_path(a.ac(), a.av(), "sampler", "/x/acme-gpu-sampler")) == c.sampler);
        CHECK(acme_arg_seconds(a.ac(), a.av(), "start_wait", 0, 600, 1.0) == c.start_wait);
    }
}

TEST_CASE("the faultguard shim reads spool= as faultguard_config does") {
    const acme::faultguard::Defaults d{"/r", "/h", "/l.db", "/f", "/c.toml", "/g"};
    for (const auto& line : kLines) {
        Args a(line);
        const auto c = acme::faultguard::parse_plugstack_args(a.views(), d).config;
        CAPTURE(a.words);
        CHECK(std::string(acme_arg_path(a.ac(), a.av(), "spool", ACME_SPOOL_DIR)) == c.spool);
        // The prolog's ask of the resident gate (faultguard/shim.c).
        CHECK(acme_arg_bool(a.ac(), a.av(), "health_gate", 0) == (c.health_gate ? 1 : 0));
        CHECK(acme_arg_seconds(a.ac(), a.av(), "gate_resident", 0, 86400, 300) == c.gate_resident);
        CHECK(acme_arg_seconds(a.ac(), a.av(), "gate_timeout", 1e-9, 600, 8) == c.gate_timeout);
        CHECK(std::string(acme_arg_path(a.ac(), a.av(), "rules", "/r")) == c.rules);
    }
}

TEST_CASE("the shims' parse_bool is parse_bool") {
    for (const char* text : {"1", "0", "on", "ON", "Off", "yes", "Y", "n", "true", "FALSE", "", "2", "onn", "truetrue",
                             "truetrue1", "no ", " no", "oN"}) {
        CAPTURE(text);
        const auto b = acme::util::parse_bool(text);
        CHECK(acme_parse_bool(text) == (b ? (*b ? 1 : 0) : -1));
    }
}

TEST_CASE("the shim's task-exit line is the one the epilog parses") {
    char line[128];
    const struct {
        uint32_t step, task;
        int status;
        double ts;
    } cases[] = {{0, 0, 0, 1765000000.1234}, {4294967291u, 7, 256, 1.0}, {4294967295u, 4294967295u, 0xffff, 0.0005}};
    for (const auto& e : cases) {
        const int n = acme_format_task_exit(line, sizeof line, e.step, e.task, e.status, e.ts);
        REQUIRE(n > 0);
        const acme::faultguard::TaskExit want{e.step, e.task, e.status, e.ts};
        CHECK(std::string(line, static_cast<std::size_t>(n)) == acme::faultguard::format_task_exit(want));
        const auto back = acme::faultguard::parse_task_exits(std::string_view(line, static_cast<std::size_t>(n)));
        REQUIRE(back.size() == 1);
        CHECK(back[0].step_id == e.step);
        CHECK(back[0].task_id == e.task);
        CHECK(back[0].wait_status == e.status);
    }
    CHECK(acme_format_task_exit(line, 8, 1, 2, 3, 1765000000.0) == -1);
}

TEST_CASE("the shims' environment names are Slurm's") {
    using acme::spank::job_script_option_env;
    using acme::spank::submit_option_env;
    CHECK(submit_option_env("gputrace", "gpu-telemetry") == ACME_SUBMIT_ENV_GPU_TELEMETRY);
    CHECK(submit_option_env("faultguard", "auto-recover") == ACME_SUBMIT_ENV_AUTO_RECOVER);
    CHECK(submit_option_env("faultguard", "ckpt-dir") == ACME_SUBMIT_ENV_CKPT_DIR);
    CHECK(job_script_option_env("faultguard", "auto-recover") == ACME_JOB_ENV_AUTO_RECOVER);
    CHECK(job_script_option_env("faultguard", "ckpt-dir") == ACME_JOB_ENV_CKPT_DIR);
}
