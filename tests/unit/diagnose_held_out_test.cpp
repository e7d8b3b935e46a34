// The held-out evaluation's promises (common/diagnose/held_out.hpp): a pattern splits only at its
// top-level '|' (not inside a group or a character class, nor at an escaped one) and a leading
// flag group goes with every alternative after it; a wording belongs to a repository only when
// that repository's cases are all it matches; the engine told to do without a repository's
// wordings answers as if they did not exist, and with none left out as the rules do.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/diagnose/engine.hpp"
#include "common/diagnose/held_out.hpp"

using namespace acme::diagnose;

TEST_CASE("held out: a pattern splits at its top-level alternatives only") {
    using V = std::vector<std::string>;
    CHECK(held_out::split_alternatives("a|b(c|d)|[|)]e|f\\|g") == V{"a", "b(c|d)", "[|)]e", "f\\|g"});
    CHECK(held_out::split_alternatives("(?i)out of memory|oom") == V{"(?i)out of memory", "(?i)oom"});
    CHECK(held_out::split_alternatives("x|(?i:y|z)|[]|]w|[[:alpha:]|]v") == V{"x", "(?i:y|z)", "[]|]w", "[[:alpha:]|]v"});
    CHECK(held_out::split_alternatives("plain") == V{"plain"});
}

TEST_CASE("held out: a case is scored without the wordings only its repository's cases match") {
    RuleSet rules = parse_rules(R"(
[[rule]]
id = "t.oom"
reason = "out_of_memory"
pattern = 'frobnicator ran dry|heap exhausted'
priority = 800
[[rule]]
id = "t.value"
reason = "value_error"
pattern = 'ValueError: '
priority = 300
)",
                                "test.toml");
    auto make = [](std::string source, std::string text) {
        corpus::Case c;
        c.expected = "out_of_memory";
        c.log = "tests/data/diagnosis/out_of_memory/x.log";
        c.source = "https://github.com/" + source;
        c.text = std::move(text);
        c.job.job_exit = ExitStatus{1, 0};
        return c;
    };
    std::vector<corpus::Case> cases = {
        make("a/one", "ValueError: bad\nfrobnicator ran dry\n"),  // only repository a/one says it
        make("b/two", "heap exhausted\n"), make("c/three", "ValueError: x\nheap exhausted\n"),  // two repositories
    };
    auto w = held_out::match(rules, cases);
    REQUIRE(w.rules.log.size() == 3);
    std::vector<std::string> groups;
    for (const auto& c : cases) groups.push_back(corpus::source_group(c));
    auto owners = held_out::owners(w, groups);
    CHECK(owners == std::vector<std::string>{"a/one", "", ""});
    Engine engine(w.rules);
    JobEnd job = cases[0].job;
    job.log = cases[0].text;
    CHECK(engine.diagnose_without(job, {}).reason == "out_of_memory");
    Diagnosis without = engine.diagnose_without(job, held_out::owned_by(owners, "a/one"));
    CHECK(without.reason == "value_error");
    CHECK(without.rule == "t.value");
    job.log = cases[2].text;  // its wording is shared: leaving c/three out changes nothing
    CHECK(engine.diagnose_without(job, held_out::owned_by(owners, "c/three")).reason == "out_of_memory");
}
