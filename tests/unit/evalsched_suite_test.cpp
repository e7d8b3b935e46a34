#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "evalsched/core/command_template.hpp"
#include "evalsched/core/duration.hpp"
#include "evalsched/core/suite.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;

namespace {

constexpr const char* kGood = R"(# a small suite
[suite]
name = "mini"
command = "run --ckpt {checkpoint} --task {dataset} --shard {shard}/{num_shards} --out {output}"
metric_command = "score {dataset} {output}"
shard = true

[[dataset]]
name = "mmlu"
kind = "multiple_choice"
samples = 14042

[[dataset]]
name = "humaneval"
kind = "code_execution"
samples = 164
prior = "3m"
shard = false
metric_command = "execute-tests {output}"

[[dataset]]
name = "mt_bench"
kind = "judge"
gpus = 2
command = "judge-gen {checkpoint} {output}"
shard = false
)";

// The message a user sees for a suite, or "" when it is accepted.
std::string refusal(const std::string& text) {
    try {
        parse_suite(text, "s.toml");
        return "";
    } catch (const SuiteError& e) {
        return e.what();
    }
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The source tree: automake's test harness exports $srcdir; a direct run from the build
// directory falls back to where this file was compiled from.
std::string source_root() {
    if (const char* s = std::getenv("srcdir")) return s;
    const std::string here = __FILE__;
    const std::string self = "tests/unit/evalsched_suite_test.cpp";
    const std::string prefix = here.substr(0, here.size() - self.size());
    return prefix.empty() ? "." : prefix;
}

}  // namespace

TEST_CASE("a good suite yields its datasets with defaults from [suite]") {
    const Suite s = parse_suite(kGood, "mini.toml");
    CHECK(s.name == "mini");
    REQUIRE(s.datasets.size() == 3);
    const Dataset& mmlu = s.datasets[0];
    CHECK(mmlu.kind == TaskKind::multiple_choice);
    CHECK(mmlu.samples == 14042);
    CHECK(mmlu.shard);
    CHECK(mmlu.gpus == 1);
    CHECK(mmlu.metric_command == "score {dataset} {output}");
    CHECK(mmlu.line == 8);
    const Dataset* he = s.find("humaneval");
    REQUIRE(he);
    CHECK(he->prior_s == 180);
    CHECK_FALSE(he->shard);
    CHECK(he->metric_command == "execute-tests {output}");
    CHECK(s.find("mt_bench")->gpus == 2);
    CHECK(s.find("mt_bench")->command == "judge-gen {checkpoint} {output}");
    CHECK_FALSE(s.find("gsm8k"));
}

TEST_CASE("the suite name defaults to the file name") {
    CHECK(parse_suite("[[dataset]]\nname='a'\nkind='generation'\ncommand='x {dataset}'\n", "/etc/suites/nightly.toml").name == "nightly");
}

TEST_CASE("an unknown key is refused with its line and the keys that exist") {
    const auto msg = refusal("[[dataset]]\nname = 'a'\nkind = 'generation'\ncommand = 'x'\ngpu = 2\n");
    CHECK(contains(msg, "s.toml:5: unknown key \"gpu\" in dataset \"a\""));
    CHECK(contains(msg, "gpus"));
    CHECK(contains(refusal("[suite]\ncomand = 'x'\n[[dataset]]\nname='a'\nkind='judge'\ncommand='x'\n"), "s.toml:2: unknown key \"comand\" in [suite]"));
    CHECK(contains(refusal("[[dataset]]\nname='a'\nkind='judge'\ncommand='x'\n[extra]\n"), "s.toml:5: unknown key \"extra\" at top level"));
}

TEST_CASE("a dataset without a command, and no default, is refused at its [[dataset]] line") {
    const auto msg = refusal("[suite]\nname = 'x'\n\n[[dataset]]\nname = 'gsm8k'\nkind = 'generation'\n");
    CHECK(msg == "s.toml:4: dataset \"gsm8k\" has no command and [suite] sets none: add command = \"...\" to one of them");
}

TEST_CASE("a placeholder that does not exist is refused and the real ones are listed") {
    const auto msg = refusal("[[dataset]]\nname = 'a'\nkind = 'generation'\ncommand = 'run {ckpt} {dataset}'\n");
    CHECK(contains(msg, "s.toml:4: command of dataset \"a\": unknown placeholder {ckpt}: use one of {checkpoint}"));
    // {datasets} belongs to bundle_command only; {checkpoint} never reaches a metric job.
    CHECK(contains(refusal("[[dataset]]\nname='a'\nkind='generation'\ncommand='run {datasets}'\n"), "unknown placeholder {datasets}"));
    CHECK(contains(refusal("[suite]\nmetric_command='m {checkpoint}'\n[[dataset]]\nname='a'\nkind='generation'\ncommand='r'\n"),
                   "s.toml:2: metric_command in [suite]: unknown placeholder {checkpoint}"));
    CHECK(contains(refusal("[[dataset]]\nname='a'\nkind='generation'\ncommand='run {dataset'\n"), "unclosed '{'"));
    CHECK(refusal("[[dataset]]\nname='a'\nkind='generation'\ncommand='awk \"{{print}}\" {dataset}'\n").empty());
}

TEST_CASE("a duplicate dataset is refused naming both lines") {
    const auto msg = refusal("[suite]\ncommand='r {dataset}'\n[[dataset]]\nname='gsm8k'\nkind='generation'\n\n[[dataset]]\nname='gsm8k'\nkind='generation'\n");
    CHECK(msg == "s.toml:7: dataset \"gsm8k\" is already defined at line 3: rename or remove one of them");
}

TEST_CASE("values of the wrong type or range are refused with what to write") {
    CHECK(contains(refusal("[[dataset]]\nname='a'\nkind='essay'\ncommand='r'\n"), "s.toml:3: dataset \"a\": kind \"essay\" is not one of"));
    CHECK(contains(refusal("[[dataset]]\nname='a'\nkind='judge'\ncommand='r'\ngpus=0\n"), "s.toml:5: gpus in dataset \"a\" is 0: use a value from 1 to 64"));
    CHECK(contains(refusal("[[dataset]]\nname='a'\nkind='judge'\ncommand='r'\nsamples='many'\n"), "s.toml:5: samples in dataset \"a\" must be an integer"));
    CHECK(contains(refusal("[[dataset]]\nname='a'\nkind='judge'\ncommand='r'\nprior='soon'\n"), "s.toml:5: prior of dataset \"a\" is not a duration"));
    CHECK(contains(refusal("[[dataset]]\nname='../etc'\nkind='judge'\ncommand='r'\n"), "s.toml:2: dataset name \"../etc\""));
    CHECK(contains(refusal("[[dataset]]\nkind='judge'\ncommand='r'\n"), "s.toml:1: [[dataset]] has no name"));
    CHECK(contains(refusal("[[dataset]]\nname='a'\ncommand='r'\n"), "s.toml:1: dataset \"a\" has no kind"));
    CHECK(contains(refusal("[suite]\nname='x'\n"), "no [[dataset]] entries"));
    CHECK(contains(refusal("dataset = 3\n"), "s.toml:1: dataset must be an array of tables"));
}

TEST_CASE("a shardable dataset must say where its shard goes") {
    const auto msg = refusal("[[dataset]]\nname='a'\nkind='generation'\ncommand='run {dataset}'\nshard=true\n");
    CHECK(contains(msg, "s.toml:4: dataset \"a\" may be sharded but its command lacks {shard} and {num_shards}"));
}

TEST_CASE("bundle_command must take the list of datasets") {
    CHECK(contains(refusal("[suite]\nbundle_command='lm_eval {checkpoint}'\n[[dataset]]\nname='a'\nkind='judge'\ncommand='r'\n"),
                   "s.toml:2: bundle_command in [suite] never mentions {datasets}"));
}

TEST_CASE("broken TOML is refused with the parser's line") {
    const auto msg = refusal("[[dataset]]\nname = 'a'\nkind = \n");
    CHECK(contains(msg, "s.toml:3: not valid TOML"));
}

TEST_CASE("inputs that crash toml++ 3.3.0 are refused before it sees them") {
    // Both found by tests/fuzz/suite_fuzz: undefined behaviour inside toml++ otherwise.
    CHECK(refusal("[\nsuite]\n") == "s.toml:1: a table header must start with its name right after the bracket: write [suite] or [[dataset]]");
    CHECK(contains(refusal("x = 1\n[(suite]\n"), "s.toml:2: a table header must start with its name"));
    CHECK(contains(refusal("[suite]\nname\xC2\xA1 = 'x'\n"), "s.toml:2: non-ASCII character outside a string or comment"));
    CHECK(contains(refusal("[suite]\nname = '''\nx\xC2\xA1'''\n"), "non-ASCII text in a multi-line string"));
    CHECK(contains(refusal("[suite]\nname = [\n}]\n"), "s.toml:3: '}' inside an array: close the array with ']' first"));
    CHECK(contains(refusal("[suite]\nname = 0\"\xC2\xA1\"\n"), "s.toml:2: a quote in the middle of a value"));
    // Non-ASCII where it is harmless stays allowed, and so does a leading BOM.
    CHECK(refusal("\xEF\xBB\xBF# \xE8\xAF\x84\xE6\xB5\x8B\n[[dataset]]\nname='a'\nkind='judge'\ncommand='run \xC3\xA9 {dataset}'\n").empty());
    // A nested array split over lines is not a table header.
    CHECK(contains(refusal("[suite]\nname = [\n  [\n 1 ]\n]\n[[dataset]]\nname='a'\nkind='judge'\ncommand='r'\n"), "s.toml:2: name in [suite] must be a string"));
}

TEST_CASE("load_suite names an unreadable file") {
    try {
        load_suite("/nonexistent/suite.toml");
        FAIL("expected a refusal");
    } catch (const SuiteError& e) {
        CHECK(std::string(e.what()) == "/nonexistent/suite.toml:0: cannot read the suite file: check the path and its permissions");
    }
}

TEST_CASE("the shipped suites/core.toml parses: about 60 benchmarks, its lm-eval groups as their leaf tasks, all with sample counts") {
    const Suite s = load_suite(source_root() + "/suites/core.toml");
    CHECK(s.datasets.size() - [&] { std::size_t n = 0; for (const auto& g : s.groups) n += g.leaves.size(); return n; }() + s.groups.size() >= 55);
    for (const auto& d : s.datasets) CHECK_MESSAGE(d.samples.has_value(), d.name);
    CHECK(s.find("mmlu") == nullptr);  // a group: its 57 subjects run instead
    REQUIRE(s.find("mmlu_anatomy"));
    CHECK(s.find("mmlu_anatomy")->samples == 135);
    CHECK(s.find("mmlu_anatomy")->shard);
    CHECK(s.find("mmlu_anatomy")->group == "mmlu");
    std::map<std::string, std::pair<std::size_t, long>> groups;  // name -> leaves, samples
    for (const auto& g : s.groups) groups[g.name] = {g.leaves.size(), g.samples.value_or(0)};
    CHECK(groups["mmlu"] == std::pair<std::size_t, long>{57, 14042});
    CHECK(groups["mmlu_pro"] == std::pair<std::size_t, long>{14, 12032});
    CHECK(groups["cmmlu"] == std::pair<std::size_t, long>{67, 11582});
    CHECK(groups["ceval-valid"] == std::pair<std::size_t, long>{52, 1346});
    CHECK(groups["bbh"] == std::pair<std::size_t, long>{27, 6511});
    CHECK(groups["minerva_math"] == std::pair<std::size_t, long>{7, 5000});
    CHECK(groups["leaderboard_musr"] == std::pair<std::size_t, long>{3, 756});
    CHECK(groups["mgsm_direct"] == std::pair<std::size_t, long>{11, 2750});
    CHECK(s.group_metric_command.has_value());
    CHECK(s.find("gsm8k")->samples == 1319);
    CHECK(s.find("humaneval")->samples == 164);
    CHECK(s.find("humaneval")->kind == TaskKind::code_execution);
}

TEST_CASE("templates render placeholders and literal braces") {
    CHECK(render_template("a {dataset} {{x}} {output}", {{"dataset", "gsm8k"}, {"output", "/o"}}) == "a gsm8k {x} /o");
    CHECK(check_template("{checkpoint} {dataset}", kCommandPlaceholders) == std::vector<std::string>{"checkpoint", "dataset"});
    CHECK_THROWS_AS(check_template("x }", kCommandPlaceholders), std::invalid_argument);
}

TEST_CASE("durations read like people write them and --time rounds up to minutes") {
    CHECK(parse_duration("90") == 90);
    CHECK(parse_duration("12m") == 720);
    CHECK(parse_duration("1h30m") == 5400);
    CHECK(parse_duration("1d2h") == 93600);
    CHECK_FALSE(parse_duration("30m1h"));
    CHECK_FALSE(parse_duration("1h30"));
    CHECK_FALSE(parse_duration("soon"));
    CHECK_FALSE(parse_duration("0"));
    CHECK_FALSE(parse_duration("-5m"));
    CHECK(slurm_time(61) == "00:02:00");
    CHECK(slurm_time(3600) == "01:00:00");
    CHECK(slurm_time(90000) == "1-01:00:00");
}
