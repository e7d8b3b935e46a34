// Rule files: what a valid one gives, and the one line an admin gets for each kind of mistake.
#include <doctest/doctest.h>

#include <fstream>

#include "common/diagnose/engine.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::diagnose;

namespace {

std::string error_of(std::string_view text) {
    try {
        parse_rules(text, "site.toml");
    } catch (const RuleError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a rule file with all three kinds of rules parses with its defaults") {
    RuleSet set = parse_rules(R"(
[[rule]]
id = "site.lustre"
reason = "storage_error"
pattern = 'LustreError: \d+'
near = 'ldlm'
within = 5
exit_codes = [1]

[[status]]
id = "site.exit3"
exit_codes = [3]
reason = "value_error"
action = "none"

[[gpu_event]]
id = "site.xid31"
kind = "xid"
codes = [31]
reason = "cuda_error"
priority = 990
)", "site.toml");
    REQUIRE(set.log.size() == 1);
    CHECK(set.log[0].reason->name == "storage_error");
    CHECK(set.log[0].priority == 50);
    CHECK(set.log[0].confidence == doctest::Approx(0.8));
    CHECK(set.log[0].within == 5);
    CHECK(set.log[0].origin == "site.toml:2");
    REQUIRE(set.status.size() == 1);
    CHECK(set.status[0].action == Action::none);
    REQUIRE(set.gpu_event.size() == 1);
    CHECK(set.gpu_event[0].codes == std::vector<std::int64_t>{31});
}

TEST_CASE("bad rule files are refused with the file, the line and what to do") {
    CHECK(error_of("[[rule]]\nid = \"a\"\nreason = \"oom\"\npattern = 'x'\n") ==
          "site.toml:3: rule \"a\" has unknown reason \"oom\": use a reason from `faultdiag --reasons`");
    CHECK(error_of("[[rule]]\nid = \"a\"\nreason = \"value_error\"\npattern = '(unclosed'\n")
              .starts_with("site.toml:4: \"pattern\" is not a valid RE2 pattern"));
    CHECK(error_of("[[rule]]\nid = \"a\"\nreason = \"value_error\"\npattern = 'x'\npriorty = 3\n")
              .starts_with("site.toml:5: unknown key \"priorty\" in [[rule]]: use one of:"));
    CHECK(error_of("[[rule]]\nid = \"a\"\nreason = \"value_error\"\n") ==
          "site.toml:1: [[rule]] has no \"pattern\": add pattern = \"...\"");
    CHECK(error_of("[[rule]]\nid = \"a\"\nreason = \"value_error\"\npattern = 'x'\nconfidence = 2\n") ==
          "site.toml:5: \"confidence\" must be a number from 0 to 1: fix the value");
    CHECK(error_of("[[rule]]\nid = \"a\"\nreason = \"value_error\"\npattern = 'x'\n"
                   "[[rule]]\nid = \"a\"\nreason = \"key_error\"\npattern = 'y'\n") ==
          "site.toml:5: rule id \"a\" is defined twice: rename one of them");
    CHECK(error_of("[[status]]\nid = \"s\"\nreason = \"value_error\"\n") ==
          "site.toml:1: [[status]] \"s\" has no condition: add exit_codes, signals, oom_kill, time_limit, cancelled, node_failure or stalled");
    CHECK(error_of("[rule]\nid = 1\n") == "site.toml:1: \"rule\" must be written [[rule]]: make it an array of tables");
    CHECK(error_of("[[rule]\n").starts_with("site.toml:1: not valid TOML"));
    CHECK(error_of("[[rules]]\nid = \"x\"\n") ==
          "site.toml:1: unknown table \"rules\": use [[rule]], [[status]], [[gpu_event]], [[xid]] or [fallback]");
    CHECK(error_of("[[rule]]\nid = \"a\"\nreason = \"unknown\"\npattern = 'x'\n").find("unknown reason \"unknown\"") !=
          std::string::npos);
}

TEST_CASE("a rules directory loads every *.toml in name order and names a duplicate across files") {
    acme::test::TempDir dir;
    std::ofstream(dir.file("10-a.toml")) << "[[rule]]\nid = \"x\"\nreason = \"value_error\"\npattern = 'boom'\n";
    std::ofstream(dir.file("README")) << "not a rule file";
    CHECK(load_rules_dir(dir.path()).log.size() == 1);
    std::ofstream(dir.file("20-b.toml")) << "[[rule]]\nid = \"x\"\nreason = \"key_error\"\npattern = 'bang'\n";
    try {
        load_rules_dir(dir.path());
        FAIL("a duplicate id across files was accepted");
    } catch (const RuleError& error) {
        CHECK(std::string(error.what()) == dir.file("20-b.toml") + ":1: rule id \"x\" is defined twice: rename one of them");
    }
}

TEST_CASE("an empty or missing rules directory is an error, not a silent no-op") {
    acme::test::TempDir dir;
    CHECK_THROWS_WITH_AS(load_rules_dir(dir.path()),
                         (dir.path().string() + ": no *.toml rule files: add rule files or point --rules at another directory").c_str(),
                         RuleError);
    CHECK_THROWS_AS(load_rules_dir(dir.file("missing")), RuleError);
}

TEST_CASE("a site rule with a 'near' context only fires with that context around it") {
    RuleSet set = parse_rules(R"(
[[rule]]
id = "site.ckpt_key"
reason = "model_loading_error"
pattern = 'KeyError: '
near = 'load_checkpoint'
within = 2
priority = 400
)", "site.toml");
    Engine engine(std::move(set));
    JobEnd job;
    job.log = "  File \"x.py\", in load_checkpoint\nKeyError: 'step'\n";
    CHECK(engine.diagnose(job).reason == "model_loading_error");
    job.log = "  File \"x.py\", in load_checkpoint\n.\n.\n.\nKeyError: 'step'\n";
    CHECK(engine.diagnose(job).reason == "unknown");
}
