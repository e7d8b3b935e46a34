#include "evalsched/cli/render.hpp"

#include <algorithm>
#include <ctime>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "evalsched/core/duration.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;
using Table = std::vector<std::vector<std::string>>;

std::string table(const Table& rows) {
    std::vector<std::size_t> width;
    for (const auto& r : rows)
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], r[i].size());
        }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) line += fmt::format("{:<{}}{}", r[i], width[i], i + 1 < r.size() ? "  " : "");
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

long count(const json& e, const char* state) { return e["trials"].value(state, 0L); }

std::string cell(const json& v) {
    if (v.is_number()) return fmt::format("{:.4g}", v.get<double>());
    if (v.is_string()) return v.get<std::string>();
    return "-";
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace

std::string render_status(const json& evals) {
    if (evals.empty()) return "no evaluations\n";
    Table t{{"ID", "USER", "RUN", "CHECKPOINT", "STATE", "DONE", "RUNNING", "PENDING", "FAILED"}};
    for (const auto& e : evals) {
        const long total = count(e, "pending") + count(e, "submitting") + count(e, "queued") + count(e, "running") + count(e, "done") +
                           count(e, "failed") + count(e, "cancelled");
        t.push_back({std::to_string(e["id"].get<long>()), e["user"], e["name"], e["checkpoint"], e["state"],
                     fmt::format("{}/{}", count(e, "done"), total), std::to_string(count(e, "running")),
                     std::to_string(count(e, "pending") + count(e, "submitting") + count(e, "queued")), std::to_string(count(e, "failed"))});
    }
    return table(t);
}

std::string render_evaluation(const json& e) {
    std::string out = fmt::format("evaluation {}: {}/{} ({}), {}, suite {}, checkpoint {}\n", e["id"].get<long>(), e["name"].get<std::string>(),
                                  e["checkpoint"].get<std::string>(), e["user"].get<std::string>(), e["state"].get<std::string>(),
                                  e["suite"].get<std::string>(), e["path"].get<std::string>());
    out += fmt::format("shared storage read: {:.0f} bytes in {} copies\n", e.value("shared_bytes_read", 0.0), e.value("copies", 0L));
    Table t{{"TRIAL", "DATASETS", "GPUS", "STATE", "ATTEMPTS", "NODE", "JOB", "PRIOR", "REASON"}};
    for (const auto& tr : e["trial_list"]) {
        std::string prior = human_duration(tr["median_s"].get<double>());
        if (tr.value("conservative", false)) prior += " (guess)";
        // A shard shows which one: "longqa#3of13", as its trial key and Slurm comment say.
        std::string datasets = tr["datasets"].get<std::string>();
        if (const std::string key = tr.value("trial", ""); key.find('#') != std::string::npos) datasets += key.substr(key.rfind('#'));
        t.push_back({std::to_string(tr["id"].get<long>()), datasets, std::to_string(tr["gpus"].get<long>()), tr["state"],
                     std::to_string(tr["attempts"].get<long>()), tr.value("node", ""), tr["job_id"].is_null() ? "-" : std::to_string(tr["job_id"].get<long>()),
                     prior, tr.value("reason", "")});
    }
    out += table(t);
    // One CPU job per dataset with a metric command, after all of that dataset's trials.
    if (e.contains("metric_list") && !e["metric_list"].empty()) {
        Table m{{"METRIC JOB", "AFTER", "STATE", "NODE", "JOB", "REASON"}};
        for (const auto& j : e["metric_list"])
            m.push_back({j["dataset"], fmt::format("{} trial{}", j.value("after_trials", 0L), j.value("after_trials", 0L) == 1 ? "" : "s"),
                         j["state"], j.value("node", ""), j["job_id"].is_null() ? "-" : std::to_string(j["job_id"].get<long>()),
                         j.value("reason", "")});
        out += "\n" + table(m);
    }
    return out;
}

std::string render_report(const json& report, const std::string& format) {
    if (format == "json") return report.dump(2) + "\n";
    std::vector<std::string> header{"dataset", "metric"};
    std::vector<std::string> ids;
    for (const auto& c : report["checkpoints"]) {
        header.push_back(c["checkpoint"].get<std::string>());
        ids.push_back(std::to_string(c["id"].get<long>()));
    }
    Table rows{header};
    for (const auto& r : report["rows"]) {
        std::vector<std::string> row{r["dataset"].get<std::string>(), r["metric"].get<std::string>()};
        for (const auto& id : ids) row.push_back(r["values"].contains(id) ? cell(r["values"][id]) : "-");
        rows.push_back(row);
    }
    if (format == "table") return table(rows);
    std::string out;
    if (format == "csv") {
        for (const auto& r : rows) {
            std::string line;
            for (std::size_t i = 0; i < r.size(); ++i) line += (i ? "," : "") + csv_field(r[i]);
            out += line + "\n";
        }
        return out;
    }
    if (format == "md") {
        for (std::size_t k = 0; k < rows.size(); ++k) {
            std::string line = "|";
            for (const auto& c : rows[k]) line += " " + c + " |";
            out += line + "\n";
            if (k == 0) {
                line = "|";
                for (std::size_t i = 0; i < rows[k].size(); ++i) line += i < 2 ? " --- |" : " ---: |";
                out += line + "\n";
            }
        }
        return out;
    }
    throw std::invalid_argument(fmt::format("--format {}: use table, csv, json or md", format));
}

std::string render_priors(const json& priors) {
    if (priors.empty()) return "no measured runs yet: priors come from the suites and the cost model\n";
    Table t{{"DATASET", "SIZE", "GPUS", "RUNS", "MEDIAN", "P90"}};
    for (const auto& p : priors)
        t.push_back({p["dataset"], p["size_class"], std::to_string(p["gpus"].get<long>()), std::to_string(p["runs"].get<long>()),
                     human_duration(p["median_s"].get<double>()), human_duration(p["p90_s"].get<double>())});
    return table(t);
}

std::string render_progress(const json& e, int width) {
    const long done = count(e, "done"), failed = count(e, "failed"), running = count(e, "running"), cancelled = count(e, "cancelled");
    const long pending = count(e, "pending") + count(e, "submitting") + count(e, "queued");
    const long total = done + failed + running + pending + cancelled;
    const int filled = total ? static_cast<int>(width * (done + failed + cancelled) / total) : width;
    std::string eta = "-";
    const double remaining = e.value("remaining_gpu_s", 0.0);
    const long gpus = std::max(1L, e.value("running_gpus", 0L));
    if (remaining > 0) eta = human_duration(remaining / static_cast<double>(gpus));
    // Metric jobs still to score: inference can be all done while the scores are not.
    std::string scoring;
    if (e.contains("metric_jobs")) {
        const json& m = e["metric_jobs"];
        const long open = m.value("waiting", 0L) + m.value("submitting", 0L) + m.value("queued", 0L) + m.value("running", 0L);
        if (open > 0) scoring = fmt::format(", {} metric job{} to go", open, open == 1 ? "" : "s");
    }
    return fmt::format("[{}{}] {}/{} done, {} running, {} pending, {} failed{}, ETA {}", std::string(static_cast<std::size_t>(filled), '#'),
                       std::string(static_cast<std::size_t>(width - filled), '.'), done, total, running, pending, failed, scoring,
                       e["state"].get<std::string>() == "active" ? eta : e["state"].get<std::string>());
}

std::string one_line(std::string_view text, std::size_t max) {
    std::string out;
    for (std::size_t i = 0; i < text.size() && out.size() < max; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else out += static_cast<char>(c);
    }
    if (out.size() >= max && text.size() > max) out += "...";
    return out;
}

}  // namespace acme::evalsched
