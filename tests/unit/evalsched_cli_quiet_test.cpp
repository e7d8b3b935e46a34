// Issue 38 item 6: what `watch` writes into a file across an evaluation, what `status ID` prints
// at 80 columns, and how trouble reads once an evaluation has ended.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/unit/text_lines.hpp"

#include "evalsched/cli/render.hpp"
#include "evalsched/cli/watch.hpp"

using namespace acme::evalsched;
using nlohmann::json;
using acme::test::lines_of;

namespace {

// The evaluation as evalschedd answers it, its forecast "now + what is left" as the scheduler
// makes it every round, so the ETA's clock time moves with every look.
json look(double now, const std::string& state, int scored, int running, const std::string& a, const std::string& b, json trouble) {
    json e{{"id", 4}, {"state", state}, {"trials", {{"pending", 2 - scored - running}, {"running", running}, {"done", scored}}},
           {"datasets", {{"total", 2}, {"scored", scored}, {"running", running}, {"queued", 2 - scored - running}, {"failed", 0}}},
           {"dataset_list",
            {{{"dataset", "arc_e"}, {"state", a}, {"detail", a == "running" ? "on n1" : ""}, {"scores", a == "scored" ? json{{"acc", 0.5}} : json::object()}},
             {{"dataset", "piqa"}, {"state", b}, {"detail", b == "running" ? "on n2" : ""}, {"scores", b == "scored" ? json{{"acc", 0.75}} : json::object()}}}},
           {"scheduler", {{"eta", {{"finish_at", now + 600 - 10 * scored}, {"waiting", false}, {"basis", "plan of 2 trials"}}}, {"trouble", trouble}}}};
    return e;
}

// The lines without their time stamps.
std::vector<std::string> unstamped(const std::string& text) {
    std::vector<std::string> out;
    for (const auto& l : lines_of(text)) out.push_back(l.substr(l.find(' ') + 1));
    return out;
}

}  // namespace

TEST_CASE("watch into a file: a line for each change across an evaluation, none for the ETA's clock moving") {
    Watcher w(Watcher::Mode::lines, 80);
    std::string file;
    const json retry = json::array({{{"kind", "retry"}, {"since", 1030.0}, {"text", "piqa retried: attempt 1 lost on n2 (node down)"}}});
    double t = 1000;
    for (; t < 1020; ++t) file += w.update(look(t, "active", 0, 1, "running", "queued", json::array()), t);
    for (; t < 1040; ++t) file += w.update(look(t, "active", 0, 2, "running", "running", t >= 1030 ? retry : json::array()), t);
    for (; t < 1060; ++t) file += w.update(look(t, "active", 1, 1, "scored", "running", retry), t);
    file += w.update(look(t, "done", 2, 0, "scored", "scored", retry), t);
    const auto lines = unstamped(file);
    const std::string eta0 = "ETA ~" + clock_time(1600, 1000) + " (estimate) (plan of 2 trials)";
    const std::string eta20 = "ETA ~" + clock_time(1620, 1020) + " (estimate) (plan of 2 trials)";
    const std::string eta40 = "ETA ~" + clock_time(1630, 1040) + " (estimate) (plan of 2 trials)";
    const std::vector<std::string> expected{
        "arc_e running on n1",
        "0/2 datasets scored, 1 running, 1 queued, 0 failed (trials 0/2 done), " + eta0,
        "piqa running on n2",
        "0/2 datasets scored, 2 running, 0 failed (trials 0/2 done), " + eta20,
        "trouble since " + clock_time(1030, 1030) + ": piqa retried: attempt 1 lost on n2 (node down)",
        "arc_e scored acc=0.5",
        "1/2 datasets scored, 1 running, 0 failed (trials 1/2 done), " + eta40,
        "piqa scored acc=0.75",
        "resolved: trouble since " + clock_time(1030, 1060) + ": piqa retried: attempt 1 lost on n2 (node down)",
        "2/2 datasets scored, 0 failed (trials 2/2 done), done",
    };
    CHECK(lines == expected);
}

TEST_CASE("watch --json: the forecast's clock moving alone is no progress event") {
    Watcher w(Watcher::Mode::json, 80);
    CHECK(!w.update(look(1000, "active", 0, 1, "running", "queued", json::array()), 1000).empty());
    for (double t = 1001; t < 1010; ++t) CHECK(w.update(look(t, "active", 0, 1, "running", "queued", json::array()), t).empty());
}

namespace {
json long_paths() {
    json e = look(1000, "active", 1, 1, "scored", "running", json::array());
    e["name"] = "run7";
    e["checkpoint"] = "step-12000";
    e["user"] = "alice";
    e["suite"] = "/home/alice/projects/llm-pretraining/evaluation/suites/core-with-long-context.toml";
    e["path"] = "/tmp/acme-evalsched-test-4411/shared/checkpoints/pretraining/run7/step-12000";
    e["shared_bytes_read"] = 0;
    e["copies"] = 0;
    return e;
}
}  // namespace

TEST_CASE("status ID at 80 columns: the heading wraps at spaces, long paths lose their start, nothing is cut with '+'") {
    acme::util::TableStyle narrow;
    narrow.width = 80;
    const auto lines = lines_of(render_evaluation(long_paths(), narrow, 1000));
    REQUIRE(lines.size() > 4);
    CHECK(lines[0] == "evaluation 4: run7/step-12000 (alice), active,");
    CHECK(lines[1] == "  suite .../llm-pretraining/evaluation/suites/core-with-long-context.toml,");
    CHECK(lines[2] == "  checkpoint .../shared/checkpoints/pretraining/run7/step-12000");
    CHECK(lines[3] == "progress: 1/2 datasets scored, 1 running, 0 failed (trials 1/2 done)");
    for (std::size_t i = 0; i < 6; ++i) {
        CHECK(lines[i].size() <= 80);
        CHECK(lines[i].find('+') == std::string::npos);
    }
    acme::util::TableStyle full;
    full.width = 0;
    CHECK(lines_of(render_evaluation(long_paths(), full, 1000))[0] ==
          "evaluation 4: run7/step-12000 (alice), active, suite "
          "/home/alice/projects/llm-pretraining/evaluation/suites/core-with-long-context.toml, checkpoint "
          "/tmp/acme-evalsched-test-4411/shared/checkpoints/pretraining/run7/step-12000");
}

TEST_CASE("a finished evaluation's trouble is past: said as was, with when; slurmctld's and held trials' not at all") {
    json e = look(2000, "done", 2, 0, "scored", "scored",
                  json::array({{{"kind", "controller"}, {"since", 1990.0}, {"text", "cannot reach slurmctld (timeout)"}},
                               {{"kind", "retry"}, {"since", 1030.0}, {"text", "piqa retried: attempt 1 lost on n2 (node down)"}}}));
    CHECK(trouble_lines(e, 2000) == std::vector<std::string>{"was trouble at " + clock_time(1030, 2000) + ": piqa retried: attempt 1 lost on n2 (node down)"});
    const std::string shown = render_evaluation(e, {}, 2000);
    CHECK(shown.find("trouble since") == std::string::npos);
    CHECK(shown.find("slurmctld") == std::string::npos);
    e["state"] = "active";
    CHECK(trouble_lines(e, 2000).front() == "trouble since " + clock_time(1990, 2000) + ": cannot reach slurmctld (timeout)");
}
