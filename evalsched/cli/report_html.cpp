#include "evalsched/cli/report_html.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "common/util/html.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;

std::string esc(const std::string& s) { return util::html_escape(s); }

struct Column {
    std::string id, label;
    long long step;
};

constexpr double kW = 360, kH = 200, kLeft = 48, kRight = 12, kTop = 12, kBottom = 36;

}  // namespace

long long label_step(const std::string& name) {
    std::size_t i = name.size();
    while (i > 0 && !std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
    std::size_t j = i;
    while (j > 0 && std::isdigit(static_cast<unsigned char>(name[j - 1]))) --j;
    if (j == i || i - j >= 18) return -1;
    return std::stoll(name.substr(j, i - j));
}

std::string render_report_html(const json& report) {
    std::vector<Column> cols;
    for (const auto& c : report.value("checkpoints", json::array())) {
        const std::string label = c.value("checkpoint", "");
        cols.push_back({std::to_string(c.value("id", 0LL)), label, label_step(label)});
    }
    std::stable_sort(cols.begin(), cols.end(), [](const Column& a, const Column& b) {
        const auto key = [](const Column& c) { return c.step < 0 ? std::numeric_limits<long long>::max() : c.step; };
        return key(a) < key(b);
    });
    const std::string name = report.value("name", "");
    std::string charts, table;
    // The harness's columns as `evalsched report` prints them (report.hpp), then a cell per
    // checkpoint: the value, "± stderr" where the harness gave one.
    const auto row_cells = [&](const json& r, std::vector<std::pair<long long, double>>* points) {
        std::string out;
        const json values = r.value("values", json::object()), stderrs = r.value("stderr", json::object());
        for (const auto& c : cols) {
            std::string cell = "-";
            if (values.contains(c.id)) {
                const auto& v = values[c.id];
                if (v.is_number()) {
                    cell = fmt::format("{:.4g}", v.get<double>());
                    if (stderrs.contains(c.id) && stderrs[c.id].is_number()) cell += fmt::format(" ± {:.4g}", stderrs[c.id].get<double>());
                    if (points && c.step >= 0) points->emplace_back(c.step, v.get<double>());
                } else if (v.is_string()) {
                    cell = v.get<std::string>();
                }
            }
            out += fmt::format("<td data-step=\"{}\">{}</td>", c.step, esc(cell));
        }
        return out;
    };
    const auto text = [](const json& r, const char* key) {
        const auto it = r.find(key);
        if (it == r.end() || it->is_null()) return std::string("-");
        if (it->is_number_integer()) return std::to_string(it->get<long long>());
        if (it->is_number()) return fmt::format("{}", it->get<double>());
        return it->is_string() && !it->get<std::string>().empty() ? it->get<std::string>() : std::string("-");
    };
    const auto measure = [&](const json& r) { return r.contains("measure") ? text(r, "measure") : r.value("metric", ""); };
    for (const auto& r : report.value("rows", json::array())) {
        const std::string dataset = r.value("dataset", ""), metric = r.value("metric", "");
        table += fmt::format("<tr class=\"score-row\"><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>", esc(dataset),
                             esc(text(r, "version")), esc(text(r, "filter")), esc(text(r, "n_shot")), esc(measure(r)), esc(text(r, "mode")));
        std::vector<std::pair<long long, double>> points;  // step, score
        table += row_cells(r, &points);
        table += "</tr>\n";
        if (metric.empty() || points.empty()) continue;  // a dataset with no score yet has no line
        double lo = points.front().second, hi = lo;
        for (const auto& [s, v] : points) lo = std::min(lo, v), hi = std::max(hi, v);
        // A little room around the line (scores that do not move get a narrow band, not a
        // negative accuracy); never below zero when no score is.
        const bool non_negative = lo >= 0;
        const double pad = hi - lo < 1e-9 ? std::max(std::abs(hi) * 0.05, 0.01) : (hi - lo) * 0.1;
        lo -= pad, hi += pad;
        if (non_negative) lo = std::max(lo, 0.0);
        const double smin = static_cast<double>(points.front().first), smax = static_cast<double>(points.back().first);
        const auto x = [&](long long s) {
            return smax > smin ? kLeft + (static_cast<double>(s) - smin) / (smax - smin) * (kW - kLeft - kRight) : (kLeft + kW - kRight) / 2;
        };
        const auto y = [&](double v) { return kTop + (hi - v) / (hi - lo) * (kH - kTop - kBottom); };
        std::string line, dots;
        for (const auto& [s, v] : points) {
            line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", x(s), y(v));
            dots += fmt::format("<circle class=\"point\" data-dataset=\"{}\" data-metric=\"{}\" data-step=\"{}\" data-score=\"{}\" "
                                "cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\"><title>step {}: {:.4g}</title></circle>",
                                esc(dataset), esc(metric), s, v, x(s), y(v), s, v);
        }
        std::string axes = fmt::format(
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" class=\"axis\"/><line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" class=\"axis\"/>"
            "<text x=\"{0}\" y=\"{4}\" class=\"tick\">{5}</text><text x=\"{2}\" y=\"{4}\" class=\"tick end\">{6}</text>"
            "<text x=\"{7}\" y=\"{4}\" class=\"tick mid\">step</text>"
            "<text x=\"{8}\" y=\"{3}\" class=\"tick end\" dy=\"4\">{9:.4g}</text><text x=\"{8}\" y=\"{1}\" class=\"tick end\">{10:.4g}</text>",
            kLeft, kH - kBottom, kW - kRight, kTop, kH - kBottom + 16, points.front().first, points.back().first, (kLeft + kW - kRight) / 2,
            kLeft - 4, hi, lo);
        charts += fmt::format(
            "<figure class=\"chart\" data-dataset=\"{0}\" data-metric=\"{1}\" data-points=\"{2}\"><figcaption>{0} <span>{1}</span></figcaption>"
            "<svg viewBox=\"0 0 {3} {4}\" width=\"{3}\" height=\"{4}\" role=\"img\" aria-label=\"{0} {1} over steps\">{5}"
            "<polyline class=\"line\" points=\"{6}\"/>{7}</svg></figure>\n",
            esc(dataset), esc(metric), points.size(), kW, kH, axes, line, dots);
    }
    // The average of a metric over the datasets that report it (report.hpp with_averages).
    for (const auto& a : report.value("averages", json::array()))
        table += fmt::format("<tr class=\"average-row\"><th>average of {}</th><td>-</td><td>{}</td><td>-</td><td>{}</td><td>-</td>{}</tr>\n",
                             a.value("datasets", json::array()).size(), esc(text(a, "filter")), esc(measure(a)), row_cells(a, nullptr));
    std::string head;
    for (const auto& c : cols) head += fmt::format("<th data-step=\"{}\">{}</th>", c.step, esc(c.label));
    return fmt::format(R"page(<!DOCTYPE html>
<html lang="en" data-run="{0}">
<head><meta charset="utf-8"><title>evalsched report {0}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d232a; }}
h1 {{ font-size: 20px; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 16px; }}
figure.chart {{ margin: 0; border: 1px solid #d7dde3; border-radius: 6px; padding: 8px; }}
figcaption {{ font-weight: 600; }} figcaption span {{ font-weight: 400; color: #5b6670; }}
.axis {{ stroke: #8a949e; stroke-width: 1; }}
.line {{ fill: none; stroke: #2b6cb0; stroke-width: 2; }}
.point {{ fill: #2b6cb0; }}
.tick {{ font-size: 11px; fill: #5b6670; }} .tick.end {{ text-anchor: end; }} .tick.mid {{ text-anchor: middle; }}
table {{ border-collapse: collapse; margin-top: 24px; }}
th, td {{ border: 1px solid #d7dde3; padding: 3px 8px; text-align: right; }}
th:first-child, td:nth-child(-n+6) {{ text-align: left; }}
</style></head>
<body>
<h1>Run {0}: scores over steps</h1>
<div class="charts">
{1}</div>
<table class="scorecard"><thead><tr><th>dataset</th><th>version</th><th>filter</th><th>n-shot</th><th>metric</th><th>mode</th>{2}</tr></thead>
<tbody>
{3}</tbody></table>
</body></html>
)page",
                       esc(name), charts.empty() ? "<p>No scores yet.</p>\n" : charts, head, table);
}

}  // namespace acme::evalsched
