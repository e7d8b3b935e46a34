#include <doctest/doctest.h>

#include <set>

#include "tools/gpucheck/verdict.hpp"

using namespace acme::gpucheck;

TEST_CASE("thresholds come from the config file; unknown keys and bad values name file:line") {
    const auto t = parse_thresholds("[thresholds]\ngemm_tflops = 400\nhbm_gbps = 2000\n[sizes]\niterations = 5\n", "g.toml");
    CHECK(t.gemm_tflops == 400);
    CHECK(t.hbm_gbps == 2000);
    CHECK(t.iterations == 5);
    CHECK(t.gemm_n == 8192);
    CHECK_THROWS_WITH_AS(parse_thresholds("[thresholds]\ngemm = 1\n", "g.toml"), doctest::Contains("g.toml:2"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(parse_thresholds("[thresholds]\nhbm_gbps = -1\n", "g.toml"),
                         doctest::Contains("non-negative"), std::runtime_error);
    CHECK_THROWS_WITH_AS(parse_thresholds("[limits]\n", "g.toml"), doctest::Contains("unknown section"),
                         std::runtime_error);
}

TEST_CASE("a slow GPU fails its node and says why; an unmeasured one is not a pass") {
    Thresholds t;
    t.gemm_tflops = 500;
    t.hbm_gbps = 2000;
    t.allreduce_gbps = 300;
    NodeResult n;
    n.node = "gpu07";
    n.gpus = {{0, "H200", 700.0, 4000.0, true, {}}, {1, "H200", 210.0, 3900.0, true, {}}, {2, "H200", {}, 4000.0, true, {}}};
    n.allreduce_gbps = 350;
    judge(n, t);
    CHECK_FALSE(n.pass);
    CHECK(n.gpus[0].pass);
    CHECK_FALSE(n.gpus[1].pass);
    CHECK(n.gpus[1].failures.front() == "GEMM 210.0 TFLOP/s < 500.0");
    CHECK_FALSE(n.gpus[2].pass);
    CHECK(n.failures.size() == 2);
    const auto j = to_json(n);
    CHECK(j["gpus"][1]["pass"] == false);
    CHECK(j["allreduce_gbps"] == 350.0);
}

TEST_CASE("pairwise rounds meet every pair once; the node slow in all its pairs is blamed") {
    for (int n : {2, 3, 4, 5, 8}) {
        std::set<std::pair<int, int>> seen;
        for (const auto& round : pair_rounds(n)) {
            std::set<int> busy;
            for (const auto& p : round) {
                CHECK(busy.insert(p.first).second);
                CHECK(busy.insert(p.second).second);
                CHECK(seen.insert(p).second);
            }
        }
        CHECK(seen.size() == static_cast<std::size_t>(n * (n - 1) / 2));
    }
    const std::vector<PairResult> pairs = {{"a", "b", 45}, {"a", "c", 3}, {"b", "c", 2}, {"a", "d", 44}, {"b", "d", 46},
                                           {"c", "d", 4}};
    CHECK(blame(pairs, 20) == std::vector<std::string>{"c"});
    CHECK(blame({{"a", "b", 1}, {"a", "c", 1}, {"b", "c", 1}}, 20).empty());  // all slow: no single culprit
}
