// The acme job record in AdminComment: the envelope survives slurmdbd's field (no quotes, one
// token, within its size), other tokens are kept, damaged tokens are named, and nodes' parts
// merge into one run's record.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/record/codec.hpp"
#include "common/record/record.hpp"
#include "spank/faultguard/core/record_part.hpp"

using namespace acme::record;
using nlohmann::json;

TEST_CASE("base64 round-trips every length and rejects what is not base64") {
    std::string bytes;
    for (int i = 0; i < 300; ++i) {
        CHECK(base64_decode(base64_encode(bytes)) == bytes);
        bytes += static_cast<char>(i * 37);
    }
    CHECK(base64_encode("Man") == "TWFu");
    CHECK(base64_encode("Ma") == "TWE=");
    CHECK(base64_encode("M") == "TQ==");
    CHECK_FALSE(base64_decode("TWF"));       // not a multiple of 4
    CHECK_FALSE(base64_decode("TW=u"));      // data after padding
    CHECK_FALSE(base64_decode("TW\"u"));     // slurmdbd's quote mangling shows up here
    CHECK_FALSE(base64_decode("TQ==TQ=="));  // padding only at the very end
}

TEST_CASE("a token holds the JSON without quotes or spaces and decodes back") {
    const std::string text = R"({"v":1,"job":42,"nodes":{"n1":{"reason":"say \"hi\""}}})";
    const std::string token = encode_token(text);
    CHECK(token.starts_with("ACME1:"));
    CHECK(token.find('"') == std::string::npos);
    CHECK(token.find(' ') == std::string::npos);
    std::string error;
    CHECK(decode_token("admin note " + token + " JS1:abc", error) == text);
    CHECK(error.empty());
    CHECK_FALSE(decode_token("just an admin's note", error));
    CHECK(error.empty());
}

TEST_CASE("a damaged token is named, never half-read") {
    const std::string token = encode_token(std::string(2000, 'x'));
    std::string error;
    CHECK_FALSE(decode_token(token.substr(0, token.size() - 8), error));  // cut short by a TEXT column
    CHECK(error.find("ACME1 record") != std::string::npos);
    CHECK_FALSE(decode_token("ACME1:@@@@", error));
    CHECK(error.find("not valid base64") != std::string::npos);
    CHECK_FALSE(decode_token("ACME1:" + base64_encode("not zlib at all"), error));
    CHECK(error.find("damaged") != std::string::npos);
}

TEST_CASE("with_token replaces acme's token and keeps everything else") {
    CHECK(with_token("", "ACME1:b") == "ACME1:b");
    CHECK(with_token("reboot after job  ", "ACME1:b") == "reboot after job ACME1:b");
    CHECK(with_token("JS1:x ACME1:a note", "ACME1:b") == "JS1:x ACME1:b note");
}

TEST_CASE("nodes' parts merge into one run's record; missing nodes are the expected ones without a part") {
    json r = merge_node_part(std::nullopt, 7, 0, {"n1", "n2", "n3"}, "n2", {{"ts", 1.0}});
    r = merge_node_part(r, 7, 0, {"n1", "n2", "n3"}, "n1", {{"ts", 2.0}});
    CHECK(has_node(r, "n1"));
    CHECK(has_node(r, "n2"));
    CHECK(missing_nodes(r) == std::vector<std::string>{"n3"});
    // A record of another run is replaced, not merged into.
    json next = merge_node_part(r, 7, 1, {"n1", "n2", "n3"}, "n3", {{"ts", 3.0}});
    CHECK_FALSE(has_node(next, "n1"));
    CHECK(next["restart"] == 1);
    CHECK(missing_nodes(next) == std::vector<std::string>{"n1", "n2"});

    std::string error;
    const auto text = decode_token(encode_within_budget(r), error);
    REQUIRE(text);
    const auto back = parse_record(*text, error);
    REQUIRE(back);
    CHECK(*back == r);
}

TEST_CASE("parse_record refuses what is not a version-1 record, with a line saying why") {
    std::string error;
    CHECK_FALSE(parse_record("[1,2]", error));
    CHECK(error.find("not a JSON object") != std::string::npos);
    CHECK_FALSE(parse_record(R"({"v":2,"job":1,"nodes":{}})", error));
    CHECK(error.find("unknown version") != std::string::npos);
    CHECK_FALSE(parse_record(R"({"v":1,"job":1,"nodes":{"n1":3}})", error));
    CHECK(error.find("n1") != std::string::npos);
}

TEST_CASE("a record too large for the field is folded to per-node totals, then loses its texts") {
    // 512 nodes x 8 GPUs with real-looking (incompressible) UUIDs and numbers.
    json r;
    std::uint64_t seed = 12345;
    auto next = [&seed] { return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    std::vector<std::string> nodes;
    for (int n = 0; n < 512; ++n) nodes.push_back("gpu" + std::to_string(n));
    for (int n = 0; n < 512; ++n) {
        json gpus = json::array();
        for (int g = 0; g < 8; ++g) {
            char uuid[64];
            std::snprintf(uuid, sizeof uuid, "GPU-%08llx-%04llx-%04llx-%012llx", static_cast<unsigned long long>(next()),
                          static_cast<unsigned long long>(next() & 0xffff), static_cast<unsigned long long>(next() & 0xffff),
                          static_cast<unsigned long long>(next()));
            gpus.push_back({{"id", g}, {"uuid", uuid}, {"util_avg", static_cast<double>(next() % 1000) / 10},
                            {"util_max", 100.0}, {"mem_max_mib", 40000 + next() % 40000},
                            {"energy_j", static_cast<double>(next() % 10000000) / 10}, {"xids", 0}, {"verdict", "ok"}});
        }
        r = merge_node_part(r.is_null() ? std::nullopt : std::optional<json>(r), 9, 0, nodes, nodes[n],
                            {{"gpus", gpus}, {"ts", 1.0 + n}});
    }
    const std::string token = encode_within_budget(r);
    CHECK(token.size() <= kMaxTokenBytes);
    std::string error;
    const auto back = parse_record(*decode_token(token, error), error);
    REQUIRE(back);
    CHECK((*back)["trimmed"].get<int>() >= 1);
    CHECK((*back)["nodes"]["gpu7"]["gpu_totals"]["count"] == 8);
    CHECK(missing_nodes(*back).empty());
}

TEST_CASE("a node's part: GPU numbers in the record's units, GPM only where sampled, evidence bounded") {
    acme::faultguard::NodePartInputs in;
    acme::store::GpuSummary busy;
    busy.gpu = 0;
    busy.samples = 10;
    busy.util_avg = 97.46;
    busy.mem_max = 3LL << 30;
    busy.energy_mj = 123456;
    busy.gpm_sm_avg = 81.25;
    busy.verdict = "ok";
    acme::store::GpuSummary old = busy;
    old.gpu = 1;
    old.gpm_sm_avg.reset();
    in.gpus = {busy, old};
    acme::diagnose::Diagnosis d;
    d.reason = "out_of_memory";
    for (int i = 0; i < 6; ++i) d.evidence.push_back({static_cast<std::size_t>(i + 1), "log", std::string(500, 'e')});
    in.diagnosis = d;
    in.resumed_from = "/ckpt/step-2";
    const json part = acme::faultguard::node_part(in);
    CHECK(part["gpus"][0]["util_avg"] == 97.5);
    CHECK(part["gpus"][0]["mem_max_mib"] == 3072);
    CHECK(part["gpus"][0]["energy_j"] == 123.5);
    CHECK(part["gpus"][0]["gpm_sm_avg"] == 81.3);
    CHECK_FALSE(part["gpus"][1].contains("gpm_sm_avg"));
    CHECK(part["diagnosis"]["evidence"].size() == acme::faultguard::kRecordEvidence);
    CHECK(part["diagnosis"]["evidence"][0]["text"].get<std::string>().size() <= acme::faultguard::kRecordTextChars + 3);
    CHECK(part["resumed_from"] == "/ckpt/step-2");
    CHECK_FALSE(part.contains("resumed_ckpt_ts"));  // the checkpoint's time not known: not in the record
    CHECK_FALSE(part.contains("recovery"));
}

TEST_CASE("record: the resume hand-off line gives the checkpoint and when it was complete") {
    acme::faultguard::NodePartInputs in;
    acme::faultguard::take_resume_line("/ckpt/step-2\t1796165300\n", in);
    CHECK(in.resumed_from == "/ckpt/step-2");
    CHECK(in.resumed_ckpt_ts == 1796165300.0);
    CHECK(acme::faultguard::node_part(in)["resumed_ckpt_ts"] == 1796165300.0);
    acme::faultguard::NodePartInputs fresh;
    acme::faultguard::take_resume_line("", fresh);
    CHECK(fresh.resumed_from == "");
    CHECK_FALSE(fresh.resumed_ckpt_ts);
    acme::faultguard::NodePartInputs failed;
    acme::faultguard::take_resume_line("(checkpoint search failed: cannot read /ckpt)", failed);
    CHECK(failed.resumed_from == "(checkpoint search failed: cannot read /ckpt)");
    CHECK_FALSE(failed.resumed_ckpt_ts);
}
