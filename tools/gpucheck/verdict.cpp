#include "tools/gpucheck/verdict.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace acme::gpucheck {

Thresholds parse_thresholds(const std::string& text, const std::string& source) {
    toml::table doc;
    try {
        doc = toml::parse(text, source);
    } catch (const toml::parse_error& e) {
        throw std::runtime_error(fmt::format("{}:{}: {}", source, e.source().begin.line, e.description()));
    }
    Thresholds t;
    auto where = [&](const toml::node& n) { return fmt::format("{}:{}", source, n.source().begin.line); };
    for (const auto& [section, node] : doc) {
        const auto* tab = node.as_table();
        if (!tab || (section != "thresholds" && section != "sizes"))
            throw std::runtime_error(fmt::format("{}: unknown section \"{}\" (want [thresholds] or [sizes])", where(node),
                                                 section.str()));
        for (const auto& [key, value] : *tab) {
            const auto number = value.value<double>();
            if (!number || *number < 0)
                throw std::runtime_error(fmt::format("{}: {} wants a non-negative number", where(value), key.str()));
            if (section == "thresholds") {
                if (key == "gemm_tflops") t.gemm_tflops = *number;
                else if (key == "hbm_gbps") t.hbm_gbps = *number;
                else if (key == "allreduce_gbps") t.allreduce_gbps = *number;
                else if (key == "pair_gbps") t.pair_gbps = *number;
                else throw std::runtime_error(fmt::format("{}: unknown threshold \"{}\"", where(value), key.str()));
            } else {
                if (*number < 1 || *number > 1e12)
                    throw std::runtime_error(fmt::format("{}: {} out of range", where(value), key.str()));
                if (key == "gemm_n") t.gemm_n = static_cast<int>(std::min(*number, 65536.0));
                else if (key == "copy_bytes") t.copy_bytes = static_cast<long long>(*number);
                else if (key == "allreduce_bytes") t.allreduce_bytes = static_cast<long long>(*number);
                else if (key == "iterations") t.iterations = static_cast<int>(std::min(*number, 10000.0));
                else throw std::runtime_error(fmt::format("{}: unknown size \"{}\"", where(value), key.str()));
            }
        }
    }
    return t;
}

void judge(NodeResult& node, const Thresholds& t) {
    node.pass = true;
    node.failures.clear();
    for (auto& g : node.gpus) {
        g.pass = true;
        g.failures.clear();
        if (t.gemm_tflops > 0 && (!g.gemm_tflops || *g.gemm_tflops < t.gemm_tflops))
            g.failures.push_back(g.gemm_tflops ? fmt::format("GEMM {:.1f} TFLOP/s < {:.1f}", *g.gemm_tflops, t.gemm_tflops)
                                               : std::string("GEMM not measured"));
        if (t.hbm_gbps > 0 && (!g.hbm_gbps || *g.hbm_gbps < t.hbm_gbps))
            g.failures.push_back(g.hbm_gbps ? fmt::format("HBM {:.0f} GB/s < {:.0f}", *g.hbm_gbps, t.hbm_gbps)
                                            : std::string("HBM bandwidth not measured"));
        g.pass = g.failures.empty();
        for (const auto& f : g.failures) node.failures.push_back(fmt::format("GPU {}: {}", g.id, f));
    }
    if (t.allreduce_gbps > 0 && node.gpus.size() > 1 && (!node.allreduce_gbps || *node.allreduce_gbps < t.allreduce_gbps))
        node.failures.push_back(node.allreduce_gbps ? fmt::format("NCCL all-reduce {:.1f} GB/s < {:.1f}",
                                                                  *node.allreduce_gbps, t.allreduce_gbps)
                                                    : std::string("NCCL all-reduce not measured"));
    node.pass = node.failures.empty();
}

std::vector<std::string> blame(const std::vector<PairResult>& pairs, double min_gbps) {
    std::map<std::string, std::pair<int, int>> seen;  // node -> (pairs, slow pairs)
    bool any_fast = false;
    for (const auto& p : pairs) {
        const bool slow = p.busbw_gbps < min_gbps;
        any_fast = any_fast || !slow;
        for (const auto* n : {&p.a, &p.b}) {
            auto& [total, bad] = seen[*n];
            ++total;
            if (slow) ++bad;
        }
    }
    std::vector<std::string> out;
    if (!any_fast) return out;
    for (const auto& [node, counts] : seen)
        if (counts.first > 0 && counts.first == counts.second) out.push_back(node);
    return out;
}

std::vector<std::vector<std::pair<int, int>>> pair_rounds(int n) {
    std::vector<std::vector<std::pair<int, int>>> rounds;
    if (n < 2) return rounds;
    const int m = n % 2 ? n + 1 : n;  // index n (when n is odd) is a bye
    std::vector<int> ring(static_cast<std::size_t>(m));
    for (int i = 0; i < m; ++i) ring[static_cast<std::size_t>(i)] = i;
    for (int r = 0; r < m - 1; ++r) {
        std::vector<std::pair<int, int>> round;
        for (int i = 0; i < m / 2; ++i) {
            const int a = ring[static_cast<std::size_t>(i)], b = ring[static_cast<std::size_t>(m - 1 - i)];
            if (a < n && b < n) round.emplace_back(std::min(a, b), std::max(a, b));
        }
        rounds.push_back(std::move(round));
        std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());  // keep ring[0], rotate the rest
    }
    return rounds;
}

nlohmann::json to_json(const NodeResult& node) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : node.gpus) {
        nlohmann::json j = {{"id", g.id}, {"name", g.name}, {"pass", g.pass}, {"failures", g.failures}};
        j["gemm_tflops"] = g.gemm_tflops ? nlohmann::json(*g.gemm_tflops) : nlohmann::json(nullptr);
        j["hbm_gbps"] = g.hbm_gbps ? nlohmann::json(*g.hbm_gbps) : nlohmann::json(nullptr);
        gpus.push_back(std::move(j));
    }
    nlohmann::json j = {{"node", node.node}, {"pass", node.pass}, {"failures", node.failures}, {"gpus", gpus}};
    j["allreduce_gbps"] = node.allreduce_gbps ? nlohmann::json(*node.allreduce_gbps) : nlohmann::json(nullptr);
    return j;
}

}  // namespace acme::gpucheck
