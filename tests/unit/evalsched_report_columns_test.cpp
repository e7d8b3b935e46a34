// Issue 38 item 8: `evalsched report` with the columns researchers know from the harnesses
// (lm-eval's Tasks|Version|Filter|n-shot|Metric|Value|Stderr, OpenCompass's
// dataset|version|metric|mode) and an average row per comparable metric.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evalsched/cli/report.hpp"
#include "evalsched/cli/report_html.hpp"

using namespace acme::evalsched;
using nlohmann::json;

namespace {

// The daemon's answer for a run of two checkpoints: two lm-eval tasks scored with acc, one with
// exact_match under its strict-match filter, and an OpenCompass dataset (version hash, mode).
json report() {
    return json::parse(R"J({"name": "run7",
      "checkpoints": [{"id": 1, "checkpoint": "step-100"}, {"id": 2, "checkpoint": "step-200"}],
      "rows": [
        {"dataset": "arc_easy", "metric": "acc", "measure": "acc", "version": "1", "n_shot": 0, "filter": "none",
         "values": {"1": 0.5, "2": 0.6}, "stderr": {"1": 0.0103, "2": 0.0101}},
        {"dataset": "gsm8k", "metric": "exact_match.strict-match", "measure": "exact_match", "filter": "strict-match",
         "version": "3", "n_shot": 5, "values": {"1": 0.25, "2": 0.3125}, "stderr": {"1": 0.0119, "2": 0.0128}},
        {"dataset": "piqa", "metric": "acc", "measure": "acc", "version": "1", "n_shot": 0, "filter": "none",
         "values": {"1": 0.7, "2": 0.75}, "stderr": {"1": 0.0107}},
        {"dataset": "siqa", "metric": "accuracy", "version": "e8d7bc", "mode": "ppl", "values": {"1": 41.5, "2": 43.0}}],
      "failures": []})J");
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

}  // namespace

TEST_CASE("report: version, filter, n-shot, metric and mode, each checkpoint's value with its stderr, an average of comparable metrics") {
    acme::util::TableStyle wide;
    wide.width = 0;
    const auto lines = lines_of(render_report(report(), "table", wide));
    REQUIRE(lines.size() == 6);
    CHECK(lines[0] == "dataset       version  filter        n-shot  metric       mode         step-100         step-200");
    CHECK(lines[1] == "arc_easy      1        none          0       acc          -     0.5000 ± 0.0103  0.6000 ± 0.0101");
    CHECK(lines[2] == "gsm8k         3        strict-match  5       exact_match  -     0.2500 ± 0.0119  0.3125 ± 0.0128");
    CHECK(lines[3] == "piqa          1        none          0       acc          -     0.7000 ± 0.0107           0.7500");
    CHECK(lines[4] == "siqa          e8d7bc   -             -       accuracy     ppl           41.5000          43.0000");
    // acc is reported by two datasets: their unweighted mean per checkpoint.
    CHECK(lines[5] == "average of 2  -        none          -       acc          -              0.6000           0.6750");

    const auto csv = lines_of(render_report(report(), "csv"));
    CHECK(csv[0] == "dataset,version,filter,n-shot,metric,mode,step-100,step-100 stderr,step-200,step-200 stderr");
    CHECK(csv[2] == "gsm8k,3,strict-match,5,exact_match,-,0.2500,0.0119,0.3125,0.0128");
    CHECK(csv[5] == "average of 2,-,none,-,acc,-,0.6000,-,0.6750,-");

    const auto md = lines_of(render_report(report(), "md"));
    CHECK(md[0] == "| dataset | version | filter | n-shot | metric | mode | step-100 | step-200 |");
    CHECK(md[1] == "| --- | --- | --- | --- | --- | --- | ---: | ---: |");

    const json j = json::parse(render_report(report(), "json"));
    REQUIRE(j["averages"].size() == 1);
    CHECK(j["averages"][0]["metric"] == "acc");
    CHECK(j["averages"][0]["datasets"] == json::array({"arc_easy", "piqa"}));
    CHECK(j["averages"][0]["values"]["2"].get<double>() == doctest::Approx(0.675));
    CHECK(j["rows"][1]["stderr"]["2"].get<double>() == doctest::Approx(0.0128));
}

TEST_CASE("report: a checkpoint missing a dataset's score gets no average; one dataset's metric gets no average row") {
    json r = report();
    r["rows"][2]["values"]["2"] = "failed: cuda_oom (infrastructure)";
    const json j = with_averages(r);
    REQUIRE(j["averages"].size() == 1);
    CHECK(j["averages"][0]["values"].contains("1"));
    CHECK_FALSE(j["averages"][0]["values"].contains("2"));
    CHECK(lines_of(render_report(r, "csv")).back() == "average of 2,-,none,-,acc,-,0.6000,-,-,-");
}

TEST_CASE("report --format html: the harness's columns and the average row in the table") {
    const std::string html = render_report_html(with_averages(report()));
    CHECK(html.find("<th>dataset</th><th>version</th><th>filter</th><th>n-shot</th><th>metric</th><th>mode</th>") != std::string::npos);
    CHECK(html.find("<tr class=\"score-row\"><th>gsm8k</th><td>3</td><td>strict-match</td><td>5</td><td>exact_match</td><td>-</td>"
                    "<td data-step=\"100\">0.25 ± 0.0119</td>") != std::string::npos);
    CHECK(html.find("<tr class=\"average-row\"><th>average of 2</th>") != std::string::npos);
}
