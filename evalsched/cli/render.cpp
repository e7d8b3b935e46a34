#include "evalsched/cli/render.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "evalsched/core/duration.hpp"

namespace acme::evalsched {
namespace {

using nlohmann::json;
using util::TableColumn;
using util::TableStyle;
using util::TextTable;

// Every cell passes through one_line: a reason or a dataset name from a job's log may carry
// escape sequences, and the table must stay a table.
std::string clean(const std::string& s) { return one_line(s, std::numeric_limits<std::size_t>::max()); }

std::string str(const json& o, const char* key) { return string_member(o, key); }

long num(const json& o, const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_number() ? it->get<long>() : 0L;
}

long count(const json& e, const char* state) { return e.contains("trials") ? num(e["trials"], state) : 0L; }

long trial_total(const json& e) {
    return count(e, "pending") + count(e, "submitting") + count(e, "queued") + count(e, "running") + count(e, "done") + count(e, "failed") +
           count(e, "cancelled");
}

// Identifiers and counts keep their width; text columns share the cut.
TableColumn fixed(std::string name, bool right = false) { return TableColumn{std::move(name), right, false, 4, std::nullopt}; }
TableColumn text(std::string name, std::size_t min = 6) { return TableColumn{std::move(name), false, true, min, std::nullopt}; }

std::string cell(const json& v) {
    if (v.is_number()) return fmt::format("{:.4g}", v.get<double>());
    if (v.is_string()) return clean(v.get<std::string>());
    return "-";
}

std::string scores_text(const json& scores) {
    std::string out;
    for (const auto& [metric, value] : scores.items()) out += fmt::format("{}{}={}", out.empty() ? "" : " ", clean(metric), cell(value));
    return out;
}

// A Slurm job id as squeue and sacct print it: "J", "J.S" for a step in a pilot, "-" for none yet.
std::string job_text(const json& row) {
    if (!row.contains("job_id") || !row["job_id"].is_number()) return "-";
    std::string s = std::to_string(row["job_id"].get<long long>());
    if (row.contains("step_id") && row["step_id"].is_number()) s += "." + std::to_string(row["step_id"].get<long long>());
    return s;
}

}  // namespace

std::string string_member(const json& o, const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? clean(it->get<std::string>()) : std::string();
}

std::string clock_time(double when, double now) {
    const std::time_t t = static_cast<std::time_t>(when), n = static_cast<std::time_t>(now > 0 ? now : when);
    std::tm a{}, b{};
    localtime_r(&t, &a);
    localtime_r(&n, &b);
    char buf[32];
    const bool today = a.tm_year == b.tm_year && a.tm_yday == b.tm_yday;
    std::strftime(buf, sizeof buf, today ? "%H:%M:%S" : "%Y-%m-%d %H:%M", &a);
    return buf;
}

// "120500" -> "120,500": sample counts run to six digits and more.
static std::string grouped(long n) {
    std::string digits = std::to_string(n < 0 ? -n : n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (n < 0 ? "-" : "") + out;
}

std::string progress_summary(const json& e) {
    const json d = e.value("datasets", json::object());
    std::string out = fmt::format("{}/{} datasets scored", num(d, "scored"), num(d, "total"));
    // Samples where the suite gives their counts: of all datasets, or of those it names.
    if (const long known = num(d, "samples_datasets"); known > 0) {
        out += fmt::format(" ({}/{} samples", grouped(num(d, "samples_done")), grouped(num(d, "samples_total")));
        out += known < num(d, "total") ? fmt::format(" of {} dataset{})", known, known == 1 ? "" : "s") : ")";
    }
    for (const char* k : {"running", "scoring", "queued"})
        if (num(d, k) > 0) out += fmt::format(", {} {}", num(d, k), k);
    out += fmt::format(", {} failed", num(d, "failed"));
    if (num(d, "cancelled") > 0) out += fmt::format(", {} cancelled", num(d, "cancelled"));
    return out + fmt::format(" (trials {}/{} done)", count(e, "done"), trial_total(e));
}

std::string eta_basis(const json& e) {
    if (!e.contains("scheduler") || !e["scheduler"].contains("eta") || !e["scheduler"]["eta"].is_object()) return "";
    return str(e["scheduler"]["eta"], "basis");
}

std::string eta_text(const json& e, double now, bool relative) {
    const std::string state = str(e, "state");
    if (state != "active") return state;
    if (!e.contains("scheduler")) return "ETA unknown (evalschedd gives no forecast)";
    const json& s = e["scheduler"];
    for (const auto& t : s.value("trouble", json::array()))
        if (str(t, "kind") == "controller") return "ETA unknown: slurmctld unreachable";
    if (!s.contains("eta") || !s["eta"].is_object()) return "ETA unknown (no scheduling round yet)";
    const json& eta = s["eta"];
    if (eta.value("waiting", false) || !eta.contains("finish_at") || !eta["finish_at"].is_number()) {
        // The state, since when, and why, once: the daemon shows no separate "held" trouble for it.
        std::string out = "waiting for GPUs";
        if (eta.contains("since") && eta["since"].is_number()) out += " since " + clock_time(eta["since"].get<double>(), now);
        if (const std::string why = str(eta, "reason"); !why.empty()) out += ": " + why;
        return out;
    }
    const double at = eta["finish_at"].get<double>();
    if (at <= now) return "ETA any moment (estimate)";
    if (!relative) return fmt::format("ETA ~{} (estimate)", clock_time(at, now));
    // Rounded up to a whole minute past ten minutes: seconds of an estimate are noise.
    double left = at - now;
    if (left > 600) left = std::ceil(left / 60) * 60;
    return fmt::format("ETA ~{} (estimate, {})", human_duration(left), clock_time(at, now));
}

std::vector<std::string> trouble_lines(const json& e, double now) {
    std::vector<std::string> out;
    const json* list = nullptr;
    if (e.contains("scheduler") && e["scheduler"].contains("trouble")) list = &e["scheduler"]["trouble"];
    else if (e.contains("retries")) list = &e["retries"];
    if (!list) return out;
    // Once the evaluation has ended its trouble is over: what only mattered while it ran (slurmctld
    // away, trials held, a refused submission) is gone, what happened to it (a retry after a lost
    // node) is history, said in the past tense with when.
    const bool ended = e.contains("state") && str(e, "state") != "active";
    for (const auto& t : *list) {
        const std::string kind = str(t, "kind");
        const bool has_time = t.contains("since") && t["since"].is_number();
        const std::string when = has_time ? clock_time(t["since"].get<double>(), now) : "";
        if (!ended) out.push_back("trouble " + (has_time ? "since " + when + ": " : std::string()) + str(t, "text"));
        else if (kind != "controller" && kind != "held" && kind != "refused")
            out.push_back("was trouble" + (has_time ? " at " + when : std::string()) + ": " + str(t, "text"));
    }
    return out;
}

std::string shorten_path(std::string_view path, std::size_t width) {
    if (width == 0 || util::display_width(path) <= width) return std::string(path);
    // From the left, at a '/': the end of a path (the run and the step) is what tells two apart.
    for (std::size_t at = path.find('/', 1); at != std::string_view::npos; at = path.find('/', at + 1))
        if (3 + util::display_width(path.substr(at)) <= width) return "..." + std::string(path.substr(at));
    const auto last = path.rfind('/');
    return last == std::string_view::npos || last == 0 ? std::string(path) : "..." + std::string(path.substr(last));
}

std::vector<std::string> wrap_words(std::string_view text, std::size_t width, std::string_view indent) {
    std::vector<std::string> out;
    std::string line;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = std::min(text.find(' ', at), text.size());
        const std::string_view word = text.substr(at, end - at);
        at = end + 1;
        if (word.empty()) continue;
        const std::size_t prefix = out.empty() ? 0 : indent.size();
        if (!line.empty() && width > 0 && prefix + util::display_width(line) + 1 + util::display_width(word) > width) {
            out.push_back((out.empty() ? "" : std::string(indent)) + line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + std::string(word);
    }
    if (!line.empty() || out.empty()) out.push_back((out.empty() ? "" : std::string(indent)) + line);
    return out;
}

std::vector<std::string> failure_lines(const std::string& heading, const json& failed, std::size_t width, std::string_view indent) {
    // The heading goes on at `indent`; the evidence and the log start there and go on two
    // columns further in, so each reads as one sentence.
    std::vector<std::string> out = wrap_words(heading, width, indent);
    auto add = [&](const std::string& text) {
        for (auto& l : wrap_words(text, width > indent.size() ? width - indent.size() : 0, "  ")) out.push_back(std::string(indent) + l);
    };
    if (const std::string evidence = str(failed, "evidence"); !evidence.empty()) add(evidence);
    // The log's line is never broken: "log:" and its path stay together, to be copied whole.
    if (const std::string log = str(failed, "log"); !log.empty()) out.push_back(std::string(indent) + "log: " + log);
    return out;
}

std::string render_status(const json& evals, const TableStyle& style) {
    if (evals.empty() && !style.parsable2) return "no evaluations\n";
    TextTable t{{fixed("ID"), text("USER"), text("RUN"), text("CHECKPOINT"), fixed("STATE"), fixed("DATASETS", true),
                 fixed("TRIALS", true), fixed("RUNNING", true), fixed("FAILED", true)},
                {}};
    for (const auto& e : evals) {
        const json d = e.value("datasets", json::object());
        t.rows.push_back({std::to_string(num(e, "id")), str(e, "user"), str(e, "name"), str(e, "checkpoint"), str(e, "state"),
                          fmt::format("{}/{}", num(d, "scored"), num(d, "total")), fmt::format("{}/{}", count(e, "done"), trial_total(e)),
                          std::to_string(count(e, "running")), std::to_string(num(d, "failed"))});
    }
    return util::render_table(t, style);
}

std::string render_evaluation(const json& e, const TableStyle& style, double now) {
    if (now <= 0) now = static_cast<double>(std::time(nullptr));
    std::string out;
    if (!style.parsable2) {
        // The heading lines are sentences: wrapped at spaces to the width, the lines after the
        // first indented, never cut (whole on one line with --long). A path longer than a line
        // loses its start, "...", at a '/'; --long shows it whole.
        // A label and its path stay on one line ('\x01' is the space that does not break).
        auto line = [&](const std::string& s) {
            for (auto l : wrap_words(s, style.width, "  ")) {
                std::replace(l.begin(), l.end(), '\x01', ' ');
                out += l + "\n";
            }
        };
        // The room for a path: the width less the indent, its label and a comma.
        const auto labelled = [&](const std::string& label, const std::string& path) {
            const std::size_t used = 2 + label.size() + 2;
            return label + "\x01" + shorten_path(path, style.width > used ? style.width - used : 0);
        };
        line(fmt::format("evaluation {}: {}/{} ({}), {}, {}, {}", num(e, "id"), str(e, "name"), str(e, "checkpoint"), str(e, "user"),
                         str(e, "state"), labelled("suite", str(e, "suite")), labelled("checkpoint", str(e, "path"))));
        line("progress: " + progress_summary(e));
        std::string eta = eta_text(e, now, true);
        if (const std::string basis = eta_basis(e); !basis.empty() && eta.starts_with("ETA ~")) eta += "; basis: " + basis;
        line(eta);
        for (const auto& t : trouble_lines(e, now)) line(t);
        line(fmt::format("shared storage read: {:.0f} bytes in {} copies", e.value("shared_bytes_read", 0.0), num(e, "copies")));
        out += "\n";
    }
    if (e.contains("dataset_list") && !e["dataset_list"].empty()) {
        TextTable d{{text("DATASET", 8), fixed("STATE"), text("DETAIL", 10), text("SCORE", 8)}, {}};
        for (const auto& x : e["dataset_list"])
            d.rows.push_back({str(x, "dataset"), str(x, "state"), str(x, "detail"), scores_text(x.value("scores", json::object()))});
        out += util::render_table(d, style) + "\n";
        // Each failed dataset once more, whole: why in its log's words and where that log is.
        if (!style.parsable2) {
            bool any = false;
            for (const auto& x : e["dataset_list"]) {
                if (str(x, "state") != "failed" || (str(x, "evidence").empty() && str(x, "log").empty())) continue;
                for (const auto& l : failure_lines(fmt::format("{} failed: {}", str(x, "dataset"), str(x, "detail")), x, style.width)) out += l + "\n";
                any = true;
            }
            if (any) out += "\n";
        }
    }
    TextTable t{{fixed("TRIAL", true), text("DATASETS", 8), fixed("GPUS", true), fixed("STATE"), fixed("ATTEMPTS", true), text("NODE"),
                 fixed("JOB", true), fixed("PRIOR"), text("REASON", 8)},
                {}};
    for (const auto& tr : e.value("trial_list", json::array())) {
        std::string prior = human_duration(tr.value("median_s", 0.0));
        if (tr.value("conservative", false)) prior += " (guess)";
        // A shard shows which one: "longqa#3of13", as its trial key and Slurm comment say.
        std::string datasets = str(tr, "datasets");
        if (const std::string key = str(tr, "trial"); key.find('#') != std::string::npos) datasets += key.substr(key.rfind('#'));
        t.rows.push_back({std::to_string(num(tr, "id")), datasets, std::to_string(num(tr, "gpus")), str(tr, "state"),
                          std::to_string(num(tr, "attempts")), str(tr, "node"), job_text(tr), prior, str(tr, "reason")});
    }
    out += util::render_table(t, style);
    // One CPU job per dataset with a metric command, after all of that dataset's trials.
    if (e.contains("metric_list") && !e["metric_list"].empty()) {
        TextTable m{{text("METRIC JOB", 8), fixed("AFTER"), fixed("STATE"), text("NODE"), fixed("JOB", true), text("REASON", 8)}, {}};
        for (const auto& j : e["metric_list"])
            m.rows.push_back({str(j, "dataset"), fmt::format("{} trial{}", num(j, "after_trials"), num(j, "after_trials") == 1 ? "" : "s"),
                              str(j, "state"), str(j, "node"), job_text(j),
                              str(j, "reason")});
        out += "\n" + util::render_table(m, style);
    }
    // The precursors: one CPU job per node copying the checkpoint before GPU work lands there.
    if (e.contains("stage_list") && !e["stage_list"].empty()) {
        TextTable s{{text("STAGE NODE"), fixed("TRY", true), fixed("STATE"), fixed("JOB", true), text("REASON", 8)}, {}};
        for (const auto& j : e["stage_list"])
            s.rows.push_back({str(j, "node"), std::to_string(num(j, "number")), str(j, "state"), job_text(j), str(j, "reason")});
        out += "\n" + util::render_table(s, style);
    }
    // Pilots (mode = pilots): the allocations trials run in as steps (JOB above is job.step).
    if (e.contains("pilot_list") && !e["pilot_list"].empty()) {
        TextTable p{{fixed("PILOT JOB", true), text("NODE"), fixed("GPUS", true), fixed("STATE"), fixed("GRANTED"), fixed("STEPS", true), text("REASON", 8)},
                    {}};
        for (const auto& j : e["pilot_list"])
            p.rows.push_back({job_text(j), str(j, "node"), std::to_string(num(j, "gpus")), str(j, "state"),
                              j.contains("granted_s") && j["granted_s"].is_number() ? human_duration(j["granted_s"].get<double>()) : "-",
                              std::to_string(num(j, "steps")), str(j, "reason")});
        out += "\n" + util::render_table(p, style);
    }
    return out;
}

std::string render_priors(const json& priors, const TableStyle& style) {
    if (priors.empty() && !style.parsable2) return "no measured runs yet: priors come from the suites and the cost model\n";
    TextTable t{{text("DATASET", 8), fixed("SIZE"), fixed("GPUS", true), fixed("RUNS", true), fixed("MEDIAN"), fixed("P90")}, {}};
    for (const auto& p : priors)
        t.rows.push_back({str(p, "dataset"), str(p, "size_class"), std::to_string(num(p, "gpus")), std::to_string(num(p, "runs")),
                          human_duration(p.value("median_s", 0.0)), human_duration(p.value("p90_s", 0.0))});
    return util::render_table(t, style);
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
