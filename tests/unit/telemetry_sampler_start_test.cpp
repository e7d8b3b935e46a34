// acme-gpu-sampler-start's command line (sampler_start.hpp): what the job prolog's shim passes,
// read strictly (it runs as root on values from the job's prolog environment), and the sampler's
// command line built from it under the plugstack arguments.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "spank/gputrace/core/sampler_spawn_c.h"
#include "spank/gputrace/core/sampler_start.hpp"

using namespace acme::telemetry;

namespace {

std::vector<std::string_view> views(const std::vector<std::string>& words) { return {words.begin(), words.end()}; }

SamplerStartArgs job(std::vector<std::string> plugstack = {}) {
    SamplerStartArgs a;
    a.job = 77;
    a.uid = 1000;
    a.gid = 100;
    a.node = "n1";
    a.gpus = "0,2";
    a.plugstack = std::move(plugstack);
    return a;
}

GputraceConfig config(const std::vector<std::string>& words) {
    const auto r = parse_plugstack_args(views(words), "/usr/libexec/acme-slurm/acme-gpu-sampler");
    REQUIRE(r.errors.empty());
    return r.config;
}

bool has_pair(const std::vector<std::string>& argv, std::string_view key, std::string_view value) {
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == key && argv[i + 1] == value) return true;
    return false;
}

bool has(const std::vector<std::string>& argv, std::string_view word) {
    return std::find(argv.begin(), argv.end(), word) != argv.end();
}

}  // namespace

// The shim's argv (sampler_spawn_c.h), as the helper gets it after argv[0].
std::vector<std::string> shim_words(const acme_sampler_job& j, std::vector<std::string> plugstack) {
    std::vector<char*> av;
    for (auto& w : plugstack) av.push_back(w.data());
    std::vector<char*> out(ACME_SAMPLER_START_ARGV_MAX(av.size()), nullptr);
    const std::size_t n = acme_sampler_start_argv(&j, static_cast<int>(av.size()), av.data(), out.data());
    REQUIRE(n < out.size());
    CHECK(out[n] == nullptr);
    CHECK(std::string(out[0]) == "acme-gpu-sampler-start");
    return {out.begin() + 1, out.begin() + static_cast<std::ptrdiff_t>(n)};
}

TEST_CASE("what the shim passes reads back as it was") {
    const std::vector<std::string> plugstack = {"spool=/var/spool/acme", "interval=5", "odd word", "--job"};
    const acme_sampler_job j{"77", "1000", "100", "n1", "0,2", "", 1, "/ckpt/run 7", "2", "s1a2b3", "/etc/slurm/slurm.conf"};
    std::string error;
    const auto back = parse_sampler_start_args(views(shim_words(j, plugstack)), error);
    REQUIRE_MESSAGE(back, error);
    CHECK(back->job == 77);
    CHECK(back->uid == 1000);
    CHECK(back->gid == 100);
    CHECK(back->node == "n1");
    CHECK(back->gpus == "0,2");
    CHECK(back->telemetry == std::optional<std::string>(""));
    CHECK(back->auto_recover);
    CHECK(back->ckpt_dir == "/ckpt/run 7");
    CHECK(back->restart == 2);
    CHECK(back->sluid == "s1a2b3");
    CHECK(back->slurm_conf == "/etc/slurm/slurm.conf");
    CHECK(back->plugstack == plugstack);
    // What the prolog does not have is left out, and the helper takes the defaults.
    const acme_sampler_job bare{"78", "0", "0", "n2", "1", nullptr, 0, "", nullptr, nullptr, ""};
    const auto few = parse_sampler_start_args(views(shim_words(bare, {})), error);
    REQUIRE_MESSAGE(few, error);
    CHECK_FALSE(few->telemetry);
    CHECK_FALSE(few->auto_recover);
    CHECK(few->ckpt_dir.empty());
    CHECK(few->restart == 0);
    CHECK(few->slurm_conf.empty());
    CHECK(few->plugstack.empty());
    // A value is never taken for a key: a node named like one stays a node name.
    const auto odd = parse_sampler_start_args(
        views({"--job", "5", "--uid", "0", "--gid", "0", "--node", "--gpus", "--gpus", "1"}), error);
    REQUIRE_MESSAGE(odd, error);
    CHECK(odd->node == "--gpus");
    CHECK(odd->gpus == "1");
    CHECK_FALSE(odd->telemetry);
}

TEST_CASE("anything else is refused with one line naming the key") {
    const std::vector<std::string> base = {"--job", "5", "--uid", "0", "--gid", "0", "--node", "n1", "--gpus", "0"};
    const auto refused = [&](std::vector<std::string> extra, std::string_view needle) {
        auto words = base;
        words.insert(words.end(), extra.begin(), extra.end());
        std::string error;
        const bool ok = parse_sampler_start_args(views(words), error).has_value();
        INFO(error);
        CHECK_FALSE(ok);
        CHECK(error.find(needle) != std::string::npos);
    };
    refused({"--arg"}, "--arg has no value");
    refused({"--job", "6"}, "--job given twice");
    refused({"--telemetry", "1", "--telemetry", "2"}, "--telemetry given twice");
    refused({"--env", "LD_PRELOAD=/tmp/x.so"}, "unknown argument --env");
    refused({"--auto-recover", "no"}, "--auto-recover no: want yes");
    refused({"--slurm-conf", "slurm.conf"}, "--slurm-conf slurm.conf: want an absolute path");
    refused({"--slurm-conf", "/etc/slurm.conf\n/x"}, "--slurm-conf");
    refused({"--sluid", "a b"}, "--sluid a b: want a Slurm SLUID");
    refused({"--ckpt-dir", "/ckpt\nx"}, "--ckpt-dir");
    refused({"--restart", "-1"}, "--restart -1: want a restart count");
    refused({"--telemetry", std::string(65, '1')}, "--telemetry");
    std::string error;
    for (const auto& [key, bad] : std::vector<std::pair<std::string, std::string>>{
             {"--job", "0"}, {"--job", "x"}, {"--uid", "-1"}, {"--gid", "4294967295"}, {"--node", "a/b"}, {"--node", ""},
             {"--gpus", "0,x"}}) {
        auto words = base;
        const auto at = std::find(words.begin(), words.end(), key);
        REQUIRE(at != words.end());
        *(at + 1) = bad;
        CHECK_FALSE(parse_sampler_start_args(views(words), error));
        CHECK(error.find(key) != std::string::npos);
    }
    CHECK_FALSE(parse_sampler_start_args(views({"--job", "5", "--uid", "0", "--gid", "0", "--node", "n1"}), error));
    CHECK(error.find("required") != std::string::npos);
}

TEST_CASE("the request in force: the flag's value, off included; recovery; the admin's default") {
    std::vector<std::string> notes;
    const auto off_default = config({"interval=10"});
    auto a = job();
    CHECK_FALSE(sampler_launch(a, off_default, notes));  // no flag, default off
    a.telemetry = "off";
    CHECK_FALSE(sampler_launch(a, config({"default=on"}), notes));
    a.telemetry = "2";
    auto l = sampler_launch(a, off_default, notes);
    REQUIRE(l);
    CHECK(l->interval == 2);
    CHECK(has_pair(l->argv, "--interval", "2"));
    a.telemetry = "";
    l = sampler_launch(a, off_default, notes);
    REQUIRE(l);
    CHECK(l->interval == 10);
    // Recovery traces at the cluster's interval; default=on traces a job that said nothing.
    a.telemetry.reset();
    a.auto_recover = true;
    REQUIRE(sampler_launch(a, off_default, notes));
    a.auto_recover = false;
    REQUIRE(sampler_launch(a, config({"default=on", "interval=4"}), notes));
    CHECK(notes.empty());
    // A value the admin's bounds refuse since the submission: traced at the cluster's interval.
    a.telemetry = "0.5";
    l = sampler_launch(a, config({"min_interval=1"}), notes);
    REQUIRE(l);
    CHECK(l->interval == 10);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("below this cluster's minimum interval") != std::string::npos);
}

TEST_CASE("the sampler's command line and environment: the job's values, the admin's keys, nothing else") {
    auto a = job();
    a.telemetry = "1";
    a.auto_recover = true;
    a.ckpt_dir = "/ckpt/run7";
    a.restart = 3;
    a.sluid = "abc";
    a.slurm_conf = "/etc/slurm/slurm.conf";
    std::vector<std::string> notes;
    const auto l = sampler_launch(
        a, config({"sampler=/opt/acme/acme-gpu-sampler", "spool=/var/spool/x", "textfile_dir=/tf/%n", "nvml=/lib/nv.so"}), notes);
    REQUIRE(l);
    CHECK(l->argv.front() == "/opt/acme/acme-gpu-sampler");
    CHECK(has_pair(l->argv, "--job", "77"));
    CHECK(has_pair(l->argv, "--node", "n1"));
    CHECK(has_pair(l->argv, "--gpus", "0,2"));
    CHECK(has_pair(l->argv, "--uid", "1000"));
    CHECK(has_pair(l->argv, "--gid", "100"));
    CHECK(has_pair(l->argv, "--spool", "/var/spool/x"));
    CHECK(has_pair(l->argv, "--nvml", "/lib/nv.so"));
    CHECK(has_pair(l->argv, "--restart", "3"));
    CHECK(has(l->argv, "--auto-recover"));
    CHECK(has_pair(l->argv, "--ckpt-dir", "/ckpt/run7"));
    CHECK(has_pair(l->argv, "--textfile-dir", "/tf/n1"));
    CHECK(has_pair(l->argv, "--sluid", "abc"));
    CHECK(l->env == std::vector<std::string>{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURMD_NODENAME=n1",
                                             "SLURM_CONF=/etc/slurm/slurm.conf"});
    // Stall detection off: none of its words.
    const auto quiet = sampler_launch(a, config({"stall=no"}), notes);
    REQUIRE(quiet);
    CHECK_FALSE(has(quiet->argv, "--restart"));
    CHECK_FALSE(has(quiet->argv, "--ckpt-dir"));
}
