#include <doctest/doctest.h>

#include "spank/gputrace/core/live_slowness.hpp"
#include "spank/gputrace/core/stall.hpp"

using namespace acme;
using namespace acme::telemetry;

namespace {

// n GPUs at util % (and SM activity %, when given).
std::vector<Sample> gpus(int n, double util, std::optional<double> sm = std::nullopt) {
    std::vector<Sample> out;
    for (int g = 0; g < n; ++g) {
        Sample s{g, 0, {}};
        s.reading.util_gpu = util;
        s.reading.util_mem = 30;
        s.reading.power_mw = 200000;
        s.reading.gpm_sm_util = sm;
        out.push_back(s);
    }
    return out;
}

NodeState node(const std::string& name, double ts, std::optional<double> util, std::optional<double> sm = std::nullopt) {
    NodeState s;
    s.node = name;
    s.ts = ts;
    s.work_util = util;
    s.work_sm = sm;
    return s;
}

}  // namespace

TEST_CASE("live slowness: a node's work rate is the mean over its GPUs and the samples since its last look") {
    StallConfig c;
    NodeTracker t(c, "n1", 0);
    t.close_work_window();
    CHECK_FALSE(t.state().work_util);  // nothing sampled yet
    t.on_samples(gpus(2, 90), 1);
    t.on_samples(gpus(2, 50), 2);
    t.close_work_window();
    REQUIRE(t.state().work_util);
    CHECK(*t.state().work_util == doctest::Approx(70));
    CHECK_FALSE(t.state().work_sm);  // no GPM
    // The next window starts afresh; SM activity only when every reading had it.
    t.on_samples(gpus(2, 40, 20), 3);
    t.close_work_window();
    CHECK(*t.state().work_util == doctest::Approx(40));
    REQUIRE(t.state().work_sm);
    CHECK(*t.state().work_sm == doctest::Approx(20));
    auto mixed = gpus(2, 80, 60);
    mixed[1].reading.gpm_sm_util.reset();
    t.on_samples(mixed, 4);
    t.close_work_window();
    CHECK_FALSE(t.state().work_sm);
    // No sample between two looks (a slow NVML call): the last rate stays.
    t.close_work_window();
    CHECK(*t.state().work_util == doctest::Approx(80));
}

TEST_CASE("live slowness: work rates cross the share in the state line; an older line without them still parses") {
    NodeState s = node("n2", 100, 38.25, 12.5);
    auto back = parse_state(format_state(s));
    REQUIRE(back);
    CHECK(*back->work_util == doctest::Approx(38.25));
    CHECK(*back->work_sm == doctest::Approx(12.5));
    s.work_sm.reset();
    back = parse_state(format_state(s));
    REQUIRE(back);
    CHECK(back->work_util);
    CHECK_FALSE(back->work_sm);
    back = parse_state("acme-stall-v1 n1 1 busy 1 1 1 1 0 0 0 95.0 300.0 40.0");
    REQUIRE(back);
    CHECK_FALSE(back->work_util);
    CHECK_FALSE(parse_state("acme-stall-v1 n1 1 busy 1 1 1 1 0 0 0 95.0 300.0 40.0 101 -"));
    CHECK_FALSE(parse_state("acme-stall-v1 n1 1 busy 1 1 1 1 0 0 0 95.0 300.0 40.0 x -"));
    CHECK_FALSE(parse_state("acme-stall-v1 n1 1 busy 1 1 1 1 0 0 0 95.0 300.0 40.0 50"));
}

TEST_CASE("live slowness: gpuacct's formula, typical node's work rate / this node's, over the fresh states") {
    const std::vector<std::string> job = {"n1", "n2"};
    const std::vector<NodeState> states = {node("n1", 100, 95), node("n2", 100, 38)};
    CHECK(*live_slowness(states, job, "n2", 101, 10) == doctest::Approx(2.5));
    CHECK(*live_slowness(states, job, "n1", 101, 10) == doctest::Approx(1.0));
    // SM activity when every node has it, as in gpuacct.
    const std::vector<NodeState> sm = {node("n1", 100, 95, 60), node("n2", 100, 95, 30)};
    CHECK(*live_slowness(sm, job, "n2", 101, 10) == doctest::Approx(2.0));
    // A three-node job: the median node is typical.
    CHECK(*live_slowness({node("n1", 100, 90), node("n2", 100, 45), node("n3", 100, 88)}, {"n1", "n2", "n3"}, "n2",
                         101, 10) == doctest::Approx(88.0 / 45));
}

TEST_CASE("live slowness: no score alone, against a stale or foreign peer, or when the typical node idles") {
    const std::vector<std::string> job = {"n1", "n2"};
    CHECK_FALSE(live_slowness({node("n1", 100, 95)}, {"n1"}, "n1", 101, 10));
    CHECK_FALSE(live_slowness({node("n1", 100, 95), node("n2", 80, 38)}, job, "n1", 101, 10));  // n2 not heard for 21 s
    CHECK_FALSE(live_slowness({node("n1", 100, 95), node("n3", 100, 38)}, job, "n1", 101, 10));  // n3 is not the job's
    CHECK_FALSE(live_slowness({node("n1", 100, 95), node("n2", 100, std::nullopt)}, job, "n1", 101, 10));
    CHECK_FALSE(live_slowness({node("n1", 100, 0.2), node("n2", 100, 0.5)}, job, "n1", 101, 10));
    CHECK_FALSE(live_slowness({node("n1", 100, 95), node("n2", 100, 38)}, job, "n3", 101, 10));
}
