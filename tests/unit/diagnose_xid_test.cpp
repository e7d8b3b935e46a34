// The XID table ([[xid]] rows, rules/15-xid.toml): one row becomes a GPU-event rule and a rule
// for the driver's line, whatever prefix the line has; the application's codes are not the node's.
#include <doctest/doctest.h>

#include <cstdlib>

#include "common/diagnose/engine.hpp"

using namespace acme::diagnose;

namespace {

const Engine& shipped() {
    static const Engine engine = [] {
        const char* srcdir = std::getenv("srcdir");
        return Engine::from_dir(std::string(srcdir && *srcdir ? srcdir : ".") + "/rules");
    }();
    return engine;
}

Diagnosis run(std::string_view log, JobEnd job = {}) {
    job.log = log;
    job.job_exit = ExitStatus{1, 0};
    return shipped().diagnose(job);
}

std::string error_of(std::string_view text) {
    try {
        parse_rules(text, "site.toml");
    } catch (const RuleError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

TEST_CASE("an [[xid]] row is a GPU-event rule and a log rule with the same reason and action") {
    RuleSet set = parse_rules(R"(
[[xid]]
id = "site.ecc"
name = "48: double-bit ECC"
codes = [48, 64]
reason = "ecc_error"
action = "drain"
priority = 980
)", "site.toml");
    REQUIRE(set.gpu_event.size() == 1);
    CHECK(set.gpu_event[0].id == "site.ecc.event");
    CHECK(set.gpu_event[0].kind == "xid");
    CHECK(set.gpu_event[0].codes == std::vector<std::int64_t>{48, 64});
    CHECK(set.gpu_event[0].action == Action::drain);
    REQUIRE(set.log.size() == 1);
    CHECK(set.log[0].id == "site.ecc");
    CHECK(set.log[0].reason->name == "ecc_error");
    CHECK(set.log[0].priority == 980);
    CHECK(set.log[0].origin == "site.toml:2");

    RuleSet log_only = parse_rules("[[xid]]\nid = \"a\"\ncodes = [13]\nreason = \"runtime_error\"\nsources = [\"log\"]\n",
                                   "site.toml");
    CHECK(log_only.gpu_event.empty());
    CHECK(log_only.log.size() == 1);
}

TEST_CASE("a bad [[xid]] row is refused with its line") {
    CHECK(error_of("[[xid]]\nid = \"a\"\ncodes = [13]\nreason = \"runtime_error\"\nsources = [\"dmesg\"]\n") ==
          "site.toml:5: \"sources\" holds something other than \"log\" or \"gpu_event\": fix the value");
    CHECK(error_of("[[xid]]\nid = \"a\"\ncode = 13\nreason = \"runtime_error\"\n").starts_with(
        "site.toml:3: unknown key \"code\" in [[xid]]: use one of: "));
    CHECK(error_of("[[xid]]\nid = \"a\"\ncodes = [13]\n") == "site.toml:1: [[xid]] has no \"reason\": add reason = \"...\"");
}

TEST_CASE("the driver's Xid line decides by its code, with a dmesg or syslog prefix or none") {
    Diagnosis dbe = run("[12345.678901] NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python, DBE (double bit error)\n"
                        "RuntimeError: CUDA error: an illegal memory access was encountered\n");
    CHECK(dbe.reason == "ecc_error");
    CHECK(dbe.action == Action::drain);
    CHECK(dbe.evidence.front().line == 1);

    Diagnosis gsp = run("Dec  1 03:04:05 gpu17 kernel: NVRM: Xid (PCI:0000:c1:00): 119, pid=881, name=python3, "
                        "Timeout after 6s of waiting for RPC response from GPU1 GSP!\n");
    CHECK(gsp.reason == "xid_error");
    CHECK(gsp.category == Category::infrastructure);

    CHECK(run("Xid (PCI:0000:44:00): 79, GPU has fallen off the bus\n").reason == "gpu_lost");
}

TEST_CASE("\"caused by previous Xid N\" is decided by N, not by the cleanup code that carries it") {
    Diagnosis d = run("kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=18, name=python3, Ch 00000001 caused by previous Xid 149\n");
    CHECK(d.reason == "nvlink_error");
    CHECK(d.action == Action::drain);
}

TEST_CASE("the application's XIDs explain its CUDA error without blaming the node") {
    Diagnosis d = run("NVRM: Xid (PCI:0000:db:00): 31, pid=13641, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS "
                      "GPCCLIENT_T1_10 faulted @ 0x7fd7_90743000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n"
                      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
    CHECK(d.reason == "runtime_error");
    CHECK(d.category == Category::framework);
    CHECK(d.action == Action::none);

    // The sampler's event for an application code decides nothing by itself.
    JobEnd job;
    job.gpu_events = {{0, "xid", 13, 0, "Graphics SM Warp Exception"}};
    CHECK(run("IndexError: tuple index out of range\n", job).reason == "index_error");
    // Nor does a code the table does not name.
    CHECK(run("NVRM: Xid (PCI:0000:3b:00): 999, something new\n").reason == "unknown");
}
