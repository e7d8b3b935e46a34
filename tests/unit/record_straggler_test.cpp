#include <doctest/doctest.h>

#include "acct/gpuacct/core/job_detail.hpp"
#include "common/record/straggler.hpp"

using namespace acme::acct;
using namespace acme::record;

TEST_CASE("straggler score: 1.00 is the typical node, a node doing half its work scores 2.00") {
    const auto s = straggler_scores({{"n1", 90, std::nullopt}, {"n2", 45, std::nullopt}, {"n3", 88, std::nullopt}});
    REQUIRE(s.size() == 3);
    // The median node (n3, 88 %) is typical.
    CHECK(s[0].node == "n1");
    CHECK(s[0].score == doctest::Approx(88.0 / 90));
    CHECK(s[1].score == doctest::Approx(88.0 / 45));
    CHECK(s[2].score == doctest::Approx(1.0));
    CHECK(s[1].signal == "GPU utilisation");
    CHECK(s[1].typical == doctest::Approx(88));
}

TEST_CASE("straggler score: two nodes compare to the faster one; SM activity when every node has it") {
    auto s = straggler_scores({{"n1", 95, std::nullopt}, {"n2", 38, std::nullopt}});
    REQUIRE(s.size() == 2);
    CHECK(s[0].score == doctest::Approx(1.0));
    CHECK(s[1].score == doctest::Approx(2.5));
    s = straggler_scores({{"n1", 95, 60}, {"n2", 95, 30}});
    REQUIRE(s.size() == 2);
    CHECK(s[1].score == doctest::Approx(2.0));
    CHECK(s[1].signal == "SM activity");
    // One node without GPM: utilisation for all, so the nodes are measured alike.
    s = straggler_scores({{"n1", 95, 60}, {"n2", 95, std::nullopt}});
    REQUIRE(s.size() == 2);
    CHECK(s[1].score == doctest::Approx(1.0));
}

TEST_CASE("straggler score: nothing to compare for one node, an idle job, or nodes without data") {
    CHECK(straggler_scores({{"n1", 95, std::nullopt}}).empty());
    CHECK(straggler_scores({{"n1", 0, std::nullopt}, {"n2", 0.5, std::nullopt}}).empty());
    CHECK(straggler_scores({{"n1", 95, std::nullopt}, {"n2", std::nullopt, std::nullopt}}).empty());
    // An idle node among busy ones: large but finite (its rate floored at 1 %).
    const auto s = straggler_scores({{"n1", 80, std::nullopt}, {"n2", 0, std::nullopt}});
    REQUIRE(s.size() == 2);
    CHECK(s[1].score == doctest::Approx(80));
}

TEST_CASE("the job view: the stall verdict with its named node and evidence, the slowness per node, the straggler note") {
    JobDetail d;
    d.job_id = 9;
    d.start = 1'700'000'000;
    d.end = d.start + 600;
    d.elapsed_s = 600;
    d.alloc_gpus = 2;
    for (const char* node : {"n1", "n2"}) {
        DetailGpu g;
        g.node = node;
        g.samples = 100;
        g.util_avg = node == std::string("n1") ? 95 : 38;
        g.util_max = 99;
        d.gpus.push_back(g);
    }
    d.slowness = straggler_scores({{"n1", 95, std::nullopt}, {"n2", 38, std::nullopt}});
    DetailStall st;
    st.since = d.start + 100;
    st.named = "n2";
    st.hardware = true;
    st.evidence = "no progress for 300 s (log quiet, no heartbeat); n2 named: its GPUs spin while the others idle";
    st.action = "signalled SIGUSR1, cancelled after 60 s";
    d.stalls.push_back(st);
    const auto text = render_detail(d, {});
    CHECK(text.find("Stalled: no progress since ") != std::string::npos);
    CHECK(text.find(", node n2 named on GPU evidence: no progress for 300 s") != std::string::npos);
    CHECK(text.find("; action: signalled SIGUSR1, cancelled after 60 s\n") != std::string::npos);
    CHECK(text.find("  n1  slowness 1.00 (GPU utilisation 95% against the typical node's 95%)") != std::string::npos);
    CHECK(text.find("  n2  slowness 2.50 (GPU utilisation 38% against the typical node's 95%)") != std::string::npos);
    CHECK(text.find("n2 was a straggler: slowness 2.50") != std::string::npos);
    d.stalls[0].withdrawn = true;
    d.stalls[0].named.clear();
    CHECK(render_detail(d, {}).find("Stall withdrawn: no progress since ") != std::string::npos);
    CHECK(stall_text(d.stalls[0]).find("no node stood out") != std::string::npos);
}
