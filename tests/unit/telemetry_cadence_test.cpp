#include <doctest/doctest.h>

#include <string>

#include <fmt/format.h>

#include "spank/gputrace/core/cadence.hpp"
#include "spank/gputrace/core/stall.hpp"
#include "tests/unit/stall_sim.hpp"

using namespace acme::telemetry;
using acme::test::regular_steps;
using acme::test::SimJob;
using acme::test::simulate;

namespace {

// The shipped windows and k, a look every 2 s, and the floor a site lowered to 180 s: with the
// shipped 600 s floor every paced spin verdict is the fixed 300 s window (stall_window's test).
StallConfig site_keys() {
    StallConfig c;
    c.probe = 2;
    c.cadence.floor = 180;
    return c;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a job stepping every 2 s that hangs: at a 180 s floor the verdict at a step and the floor, not the 300 s spin window") {
    auto c = site_keys();
    SimJob job{regular_steps(1, 1000, 2), 1000, {}, 2000};
    const auto r = simulate(c, job);
    REQUIRE(r.verdict_at);
    INFO(r.verdict.evidence);
    const double quiet = *r.verdict_at - r.last_step;
    CHECK(quiet >= 182);
    CHECK(quiet < 182 + c.probe + 1);
    CHECK(has(r.verdict.evidence, "no progress for 18"));
    CHECK(has(r.verdict.evidence, ", a step and the 180 s floor; 3x the job's longest step of 2 s seen over "));
    CHECK(has(r.verdict.evidence, " steps is shorter (log quiet, heartbeat stopped); n1 spin"));
}

TEST_CASE("with the floor lowered, a 2 s job's hang is called within 3 steps' time; a 10 s job's within 3 of its own") {
    auto c = site_keys();
    c.probe = 1;
    c.cadence.floor = 0;
    for (const double step : {2.0, 10.0}) {
        const auto r = simulate(c, {regular_steps(1, 1500, step), 1500, {}, 3000});
        REQUIRE(r.verdict_at);
    INFO(r.verdict.evidence);
        const double quiet = *r.verdict_at - r.last_step;
        CHECK_MESSAGE(quiet >= 3 * step, "step " << step);
        CHECK_MESSAGE(quiet <= 3 * step + c.probe + 1, "step " << step);
        CHECK(has(r.verdict.evidence, fmt::format(", 3x the job's longest step of {:.0f} s seen over ", step)));
    }
}

TEST_CASE("a 2 s job pausing 90 s for a checkpoint it has not shown before is no stall at a 180 s floor") {
    const auto c = site_keys();
    // Learned at a 2 s pace by 700 s; the save: GPUs idle, no log line, no heartbeat, nothing
    // under --ckpt-dir, from 1000 s to 1090 s; then it trains on.
    auto steps = regular_steps(1, 1000, 2);
    for (const double t : regular_steps(1090, 1400, 2)) steps.push_back(t);
    const auto r = simulate(c, {steps, 1400, {}, 1400 + 400});
    REQUIRE(r.verdict_at);  // the hang at 1400 s is still called...
    CHECK(*r.verdict_at > 1400);
    // ...after k times the pause it came out of, which it learned as its longest step.
    CHECK(*r.verdict_at - r.last_step >= 3 * 89);
    CHECK(has(r.verdict.evidence, ", 3x the job's longest step of 9"));
}

TEST_CASE("the floor is what spares a pause the job has not shown yet: lowered under it, the same save is a verdict") {
    auto c = site_keys();
    c.cadence.floor = 30;
    auto steps = regular_steps(1, 1000, 2);
    for (const double t : regular_steps(1090, 1400, 2)) steps.push_back(t);
    const auto r = simulate(c, {steps, 1e9, {}, 1400});
    REQUIRE(r.verdict_at);
    INFO(r.verdict.evidence);
    CHECK(*r.verdict_at >= 1000 + 31);
    CHECK(*r.verdict_at < 1090);
    CHECK(has(r.verdict.evidence, ", a step and the 30 s floor; 3x the job's longest step of 2 s"));
    // A save the sampler can see (the checkpoint grows under --ckpt-dir) is progress at any floor.
    c.cadence.floor = 0;
    const auto seen = simulate(c, {steps, 1e9, {{999, 1090}}, 1400});
    CHECK_FALSE(seen.verdict_at);
}

TEST_CASE("a long pause while the pace is being learned raises the longest step instead of calling a stall") {
    auto c = site_keys();
    c.cadence.floor = 0;
    // The warm-up ends at 600 s; a sign of progress comes every second (a busy sample, then the
    // log seen grown at the next look), so 20 gaps are seen by 620 s. The first save (40 s) comes
    // at 606 s, before the pace is trusted: the fixed window spares it, and the job's longest
    // step becomes 40 s. A second save of 100 s later stays under 3 x 40 s.
    std::vector<double> steps = regular_steps(1, 606, 2);
    for (const double t : regular_steps(647, 1001, 2)) steps.push_back(t);
    for (const double t : regular_steps(1101, 1301, 2)) steps.push_back(t);
    const auto r = simulate(c, {steps, 1e9, {}, 1300});
    CHECK_FALSE_MESSAGE(r.verdict_at, r.verdict.evidence);
    // Without the first save the second is called: the first is what taught the pace.
    steps = regular_steps(1, 1001, 2);
    for (const double t : regular_steps(1101, 1301, 2)) steps.push_back(t);
    CHECK(simulate(c, {steps, 1e9, {}, 1300}).verdict_at);
}

TEST_CASE("the warm-up is not the job's pace: 500 s of loading, then 2 s steps, learns 2 s") {
    const auto c = site_keys();
    NodeTracker n(c, "n1", 0);
    long long log = 0;
    for (double t = 500; t <= 700; t += 2) {
        n.on_samples(acme::test::sim_gpus(95, 300, 40), t);
        n.on_probe({++log, std::nullopt, std::nullopt, std::nullopt}, t);
    }
    CHECK(n.state().step == doctest::Approx(2));
    CHECK(n.state().steps == 50);  // the steps from 600 s on; the one into 600 s began in the warm-up
    // Busy GPU samples are signs, not steps: a second of them is no step of the job.
    NodeTracker busy(c, "n1", 0);
    for (double t = 500; t <= 700; t += 1) busy.on_samples(acme::test::sim_gpus(95, 300, 40), t);
    CHECK(busy.state().steps == 0);
    CHECK(busy.state().step == 0);
}

TEST_CASE("too few steps seen, or k = 0: the fixed window, and the evidence says so") {
    auto c = site_keys();
    // A few gaps after the warm-up, then the hang.
    auto r = simulate(c, {regular_steps(1, 606, 2), 606, {}, 1200});
    REQUIRE(r.verdict_at);
    INFO(r.verdict.evidence);
    CHECK(*r.verdict_at - r.last_step >= c.spin_window);
    CHECK(has(r.verdict.evidence, ", the fixed spin window (log quiet, heartbeat stopped)"));
    c.cadence.k = 0;
    r = simulate(c, {regular_steps(1, 1000, 2), 1000, {}, 1400});
    REQUIRE(r.verdict_at);
    INFO(r.verdict.evidence);
    CHECK(*r.verdict_at - r.last_step >= c.spin_window);
    CHECK(has(r.verdict.evidence, ", the fixed spin window ("));
}

TEST_CASE("the fixed windows stay the ceiling: a job stepping every 150 s is called at 300 s when it spins") {
    const auto c = site_keys();
    const auto r = simulate(c, {regular_steps(1, 4000, 150), 4000, {}, 5000});
    REQUIRE(r.verdict_at);
    INFO(r.verdict.evidence);
    CHECK(*r.verdict_at - r.last_step >= 300);
    CHECK(*r.verdict_at - r.last_step < 300 + c.probe + 1);
    CHECK(has(r.verdict.evidence, ", the fixed spin window; 3x the job's longest step of 1"));
}

TEST_CASE("stall_window: k x the step within [step + floor, ceiling]; without a cadence the ceiling") {
    // Shipped: k 3, floor 600: the idle window of a paced job shortens, the 300 s spin window stays.
    const CadenceConfig shipped_keys;
    CHECK(stall_window(1800, "idle", 2, 40, shipped_keys).seconds == 602);
    CHECK(stall_window(1800, "idle", 400, 40, shipped_keys).seconds == 1200);
    CHECK(stall_window(300, "spin", 2, 40, shipped_keys).seconds == 300);
    CadenceConfig c;
    c.floor = 180;
    CHECK(stall_window(1800, "idle", 0, 0, c).seconds == 1800);
    CHECK(stall_window(1800, "idle", 100, 40, c).seconds == 300);
    CHECK(stall_window(1800, "idle", 100, 40, c).why == "3x the job's longest step of 100 s seen over 40 steps");
    CHECK(stall_window(1800, "idle", 10, 40, c).seconds == 190);
    CHECK(stall_window(300, "spin", 70, 40, c).seconds == 250);
    CHECK(stall_window(300, "spin", 200, 40, c).seconds == 300);
    CHECK(stall_window(4, "spin", 1, 40, c).seconds == 4);  // a floor above the ceiling leaves the ceiling
}

TEST_CASE("a job's nodes: the verdict waits for the longest step any node has learned") {
    auto c = site_keys();
    c.probe = 1000;  // no node's state counts as stale here
    NodeState fast, slow, none;
    for (auto* s : {&fast, &slow, &none}) {
        s->ts = 2000;
        s->pattern = Pattern::spin;
        s->active_at = 1000;
        s->log_seen = true;
    }
    fast.node = "n1", slow.node = "n2", none.node = "n3";
    fast.step = 2, fast.steps = 300;
    slow.step = 90, slow.steps = 25;
    auto quiet_for = [&](double s) { return judge({fast, slow, none}, {"n1", "n2", "n3"}, 0, 1000 + s, c, true); };
    for (auto* s : {&fast, &slow, &none}) s->ts = 1269;
    CHECK_FALSE(quiet_for(269).stalled);
    for (auto* s : {&fast, &slow, &none}) s->ts = 1270;
    const auto v = quiet_for(270);
    REQUIRE(v.stalled);
    CHECK(has(v.evidence, "no progress for 270 s, 3x the job's longest step of 90 s seen over 25 steps ("));
}

TEST_CASE("the learned step travels in the share's line; an older sampler's line reads as no cadence") {
    NodeState s;
    s.node = "n2";
    s.ts = 10;
    s.step = 2.5;
    s.steps = 40;
    auto back = parse_state(format_state(s));
    REQUIRE(back);
    CHECK(back->step == doctest::Approx(2.5));
    CHECK(back->steps == 40);
    back = parse_state("acme-stall-v1 n1 1 busy 1 1 1 1 0 0 0 95.0 300.0 40.0 - -");
    REQUIRE(back);
    CHECK(back->step == 0);
    CHECK_FALSE(parse_state("acme-stall-v1 n1 1 busy 1 1 1 1 0 0 0 95.0 300.0 40.0 - - -1 4"));
    CHECK_FALSE(parse_state("acme-stall-v1 n1 1 busy 1 1 1 1 0 0 0 95.0 300.0 40.0 - - 2 x"));
}
