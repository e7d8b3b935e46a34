#include "evalsched/cli/report.hpp"

#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "evalsched/cli/render.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;
using util::TableColumn;
using util::TableStyle;
using util::TextTable;

// A cell from the daemon's answer is one line: a dataset's name or a reason may carry escapes.
std::string clean(const std::string& s) { return one_line(s, std::numeric_limits<std::size_t>::max()); }
constexpr auto str = string_member;

// A harness's field as text: lm-eval writes versions as numbers (3.0) and n-shot as integers.
std::string field(const json& o, const char* key) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return "-";
    if (it->is_number_integer()) return std::to_string(it->get<long long>());
    if (it->is_number()) return fmt::format("{}", it->get<double>());
    const std::string s = it->is_string() ? clean(it->get<std::string>()) : std::string();
    return s.empty() ? "-" : s;
}

const json& list(const json& report, const char* key) {
    static const json empty = json::array();
    return report.is_object() && report.contains(key) && report.at(key).is_array() ? report.at(key) : empty;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// The metric's own name and its filter: the daemon gives them apart ("measure", "filter") where
// the harness named a filter; the full key ("exact_match.strict-match") is the metric otherwise.
std::string measure(const json& r) {
    const std::string m = str(r, "measure");
    return m.empty() ? str(r, "metric") : m;
}

// lm-eval prints values with "%.4f" (make_table); a cell that is a state says it.
std::string value_text(const json& v) {
    if (v.is_number()) return fmt::format("{:.4f}", v.get<double>());
    if (v.is_string()) return clean(v.get<std::string>());
    return "-";
}

struct Grid {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::size_t text_columns;  // before the checkpoints' values
    bool right = true;         // the values right-aligned, as lm-eval's make_table does
};

// The matrix: dataset, metric, one column per checkpoint.
Grid matrix_grid(const json& report) {
    Grid g{{"dataset", "metric"}, {}, 2, false};
    std::vector<std::string> ids;
    for (const auto& c : list(report, "checkpoints")) {
        g.header.push_back(str(c, "checkpoint"));
        ids.push_back(std::to_string(c.value("id", 0L)));
    }
    for (const auto& r : list(report, "rows")) {
        std::vector<std::string> row{str(r, "dataset"), str(r, "metric")};
        for (const auto& id : ids) {
            const json v = r.contains("values") && r["values"].contains(id) ? r["values"][id] : json();
            row.push_back(v.is_number() ? fmt::format("{:.4g}", v.get<double>()) : value_text(v));
        }
        g.rows.push_back(std::move(row));
    }
    return g;
}

// The harnesses' columns, then each checkpoint's value and, as lm-eval's "± stderr", its stderr.
Grid harness_grid(const json& report) {
    Grid g{{"dataset", "version", "filter", "n-shot", "metric", "mode"}, {}, 6};
    std::vector<std::string> ids;
    for (const auto& c : list(report, "checkpoints")) {
        g.header.push_back(str(c, "checkpoint"));
        ids.push_back(std::to_string(c.value("id", 0L)));
    }
    const auto add = [&](std::vector<std::string> row, const json& r) {
        const json values = r.value("values", json::object()), stderrs = r.value("stderr", json::object());
        for (const auto& id : ids) {
            std::string v = values.contains(id) ? value_text(values[id]) : "-";
            const std::string se = stderrs.contains(id) && stderrs[id].is_number() ? fmt::format("{:.4f}", stderrs[id].get<double>()) : "-";
            row.push_back(se == "-" ? v : v + " ± " + se);
        }
        g.rows.push_back(std::move(row));
    };
    for (const auto& r : list(report, "rows"))
        add({str(r, "dataset"), field(r, "version"), field(r, "filter"), field(r, "n_shot"), measure(r).empty() ? "-" : measure(r), field(r, "mode")}, r);
    for (const auto& a : list(report, "averages"))
        add({fmt::format("average of {}", a.value("datasets", json::array()).size()), "-", field(a, "filter"), "-", measure(a), "-"}, a);
    return g;
}

}  // namespace

json with_averages(const json& report) {
    json out = report;
    if (!out.is_object()) return out;
    // Per metric key (the metric and its filter): the datasets that report it, in row order.
    std::map<std::string, std::vector<const json*>> by_metric;
    std::vector<std::string> order;
    for (const auto& r : list(report, "rows")) {
        const std::string key = str(r, "metric");
        if (key.empty()) continue;  // a dataset with no score yet
        if (by_metric[key].empty()) order.push_back(key);
        by_metric[key].push_back(&r);
    }
    json averages = json::array();
    for (const auto& key : order) {
        const auto& rows = by_metric[key];
        if (rows.size() < 2) continue;  // one dataset's "average" is its score
        json values = json::object(), datasets = json::array();
        for (const auto* r : rows) datasets.push_back(str(*r, "dataset"));
        for (const auto& c : list(report, "checkpoints")) {
            const std::string id = std::to_string(c.value("id", 0L));
            double sum = 0;
            bool all = true;
            for (const auto* r : rows) {
                const json v = r->contains("values") && (*r)["values"].contains(id) ? (*r)["values"][id] : json();
                if (!v.is_number()) all = false;
                else sum += v.get<double>();
            }
            // Over the same datasets for every checkpoint, or not at all: otherwise two
            // checkpoints' averages would not be comparable.
            if (all) values[id] = sum / static_cast<double>(rows.size());
        }
        json a{{"metric", key}, {"measure", measure(*rows.front())}, {"datasets", datasets}, {"values", values}, {"mean", "unweighted"}};
        if (rows.front()->contains("filter")) a["filter"] = (*rows.front())["filter"];
        averages.push_back(std::move(a));
    }
    out["averages"] = std::move(averages);
    return out;
}

std::string render_report(const json& given, const std::string& format, const TableStyle& style, bool matrix) {
    const json report = with_averages(given);
    if (format == "json") return report.dump(2) + "\n";
    if (format != "table" && format != "csv" && format != "md")
        throw std::invalid_argument(fmt::format("--format {}: use table, csv, json or md", format));
    // csv keeps the matrix's columns (dataset, metric, a value per checkpoint): scripts read them
    // by position; --format json carries every field.
    const Grid g = matrix || format == "csv" ? matrix_grid(report) : harness_grid(report);
    if (format == "table") {
        TextTable t;
        for (std::size_t i = 0; i < g.header.size(); ++i)
            t.columns.push_back(TableColumn{g.header[i], g.right && i >= g.text_columns, true, i < g.text_columns ? 6u : 8u, std::nullopt});
        t.rows = g.rows;
        std::string out = util::render_table(t, style);
        // A cell has no room for why: each failure below the table, whole (the cell is cut).
        if (style.parsable2) return out;
        std::map<std::string, std::string> checkpoint_of;
        for (const auto& c : list(report, "checkpoints")) checkpoint_of[std::to_string(c.value("id", 0L))] = str(c, "checkpoint");
        for (const auto& f : list(report, "failures")) {
            const std::string id = std::to_string(f.value("evaluation", 0L));
            const std::string where = checkpoint_of.count(id) ? fmt::format("{} (evaluation {})", checkpoint_of[id], id) : "evaluation " + id;
            out += "\n";
            for (const auto& l : failure_lines(fmt::format("{} on {} failed: {}", str(f, "dataset"), where, str(f, "reason")), f, style.width))
                out += l + "\n";
        }
        return out;
    }
    std::string out;
    const auto csv_line = [](const std::vector<std::string>& cells) {
        std::string line;
        for (std::size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + csv_field(cells[i]);
        return line + "\n";
    };
    if (format == "csv") {
        out += csv_line(g.header);
        for (const auto& r : g.rows) out += csv_line(r);
        return out;
    }
    // md: as lm-eval's make_table writes it (pytablewriter markdown), numbers right-aligned.
    const auto md_line = [](const std::vector<std::string>& cells) {
        std::string line = "|";
        for (const auto& c : cells) line += " " + c + " |";
        return line + "\n";
    };
    out += md_line(g.header);
    std::string rule = "|";
    for (std::size_t i = 0; i < g.header.size(); ++i) rule += i < g.text_columns ? " --- |" : " ---: |";
    out += rule + "\n";
    for (const auto& r : g.rows) out += md_line(r);
    return out;
}

}  // namespace acme::evalsched
