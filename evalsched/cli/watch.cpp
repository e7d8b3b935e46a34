#include "evalsched/cli/watch.hpp"

#include <fmt/format.h>

#include "common/util/table.hpp"
#include "evalsched/cli/render.hpp"

namespace acme::evalsched {

using nlohmann::json;

namespace {

long num(const json& o, const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_number() ? it->get<long>() : 0L;
}

std::string str(const json& o, const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? one_line(it->get<std::string>(), 1000) : std::string();
}

std::string scores_text(const json& scores) {
    std::string out;
    for (const auto& [metric, value] : scores.items())
        out += fmt::format("{}{}={}", out.empty() ? "" : " ", one_line(metric, 100), value.is_number() ? fmt::format("{:.4g}", value.get<double>()) : "-");
    return out;
}

// A dataset's state as a line says it: "scored acc=0.71", "running on n1", "failed: why".
std::string dataset_text(const json& d) {
    const std::string state = str(d, "state"), detail = str(d, "detail");
    std::string s = state;
    if (state == "scored" && !d.value("scores", json::object()).empty()) s += " " + scores_text(d["scores"]);
    else if (!detail.empty()) s += (state == "failed" ? ": " : " ") + detail;
    return s;
}

std::set<std::string> trouble_set(const json& e, double now) {
    std::set<std::string> out;
    for (const auto& t : trouble_lines(e, now)) out.insert(t);
    return out;
}

}  // namespace

std::string progress_bar(long done, long total, int width) {
    const int filled = total > 0 ? static_cast<int>(width * std::min(done, total) / total) : width;
    return "[" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '.') + "]";
}

std::string Watcher::update(const json& e, double now) {
    switch (mode_) {
        case Mode::terminal: return terminal(e, now);
        case Mode::lines: return lines(e, now);
        case Mode::json: return events(e, now);
    }
    return {};
}

std::string Watcher::finish() const { return mode_ == Mode::terminal && drawn_ ? "\n" : ""; }

std::string Watcher::terminal(const json& e, double now) {
    const json d = e.value("datasets", json::object());
    std::vector<std::string> block;
    block.push_back(fmt::format("{} {}", progress_bar(num(d, "scored") + num(d, "failed") + num(d, "cancelled"), num(d, "total"), 20),
                                progress_summary(e)));
    block.push_back(eta_text(e, now, true) + (eta_basis(e).empty() || eta_text(e, now, true).rfind("ETA ~", 0) != 0 ? "" : "; " + eta_basis(e)));
    std::string running;
    for (const auto& x : e.value("dataset_list", json::array()))
        if (str(x, "state") == "running" || str(x, "state") == "scoring") running += (running.empty() ? "" : ", ") + str(x, "dataset") + " " + str(x, "detail");
    if (!running.empty()) block.push_back("now: " + running);
    for (const auto& t : trouble_lines(e, now)) block.push_back(t);
    // A failed dataset: why in its log's words and where the log is, wrapped at spaces to the
    // width (so the cut below only ever takes the end of a path longer than the screen).
    for (const auto& x : e.value("dataset_list", json::array()))
        if (str(x, "state") == "failed" && (!str(x, "evidence").empty() || !str(x, "log").empty()))
            for (auto& l : failure_lines(str(x, "dataset") + " " + dataset_text(x), x, width_ > 1 ? width_ - 1 : 0)) block.push_back(std::move(l));
    // Back to the block's first line, clear to the end of the screen, draw it again; each line
    // one column short of the width, so none wraps and the count of lines stays right.
    std::string out = "\r";
    for (std::size_t i = 1; i < drawn_; ++i) out += "\033[A";
    out += "\033[J";
    for (std::size_t i = 0; i < block.size(); ++i)
        out += (width_ > 1 ? util::cut_to(block[i], width_ - 1, '+') : block[i]) + (i + 1 < block.size() ? "\n" : "");
    drawn_ = block.size();
    return out;
}

std::string Watcher::lines(const json& e, double now) {
    std::string out;
    const std::string stamp = clock_time(now, now) + " ";
    const std::string progress = progress_summary(e) + ", " + eta_text(e, now, false) +
                                 (eta_basis(e).empty() || eta_text(e, now, false).rfind("ETA ~", 0) != 0 ? "" : " (" + eta_basis(e) + ")");
    for (const auto& x : e.value("dataset_list", json::array())) {
        const std::string name = str(x, "dataset"), text = dataset_text(x);
        const std::string key = text + "\x1f" + str(x, "evidence") + "\x1f" + str(x, "log");
        auto [it, fresh] = datasets_.try_emplace(name, key);
        // The first look lists only what has started; a queued dataset is in the counts.
        if (fresh && str(x, "state") == "queued") continue;
        if (!fresh && it->second == key) continue;
        it->second = key;
        if (str(x, "state") != "failed") {
            out += stamp + name + " " + text + "\n";
            continue;
        }
        // A failure whole: the evidence and the log on lines of their own under the stamped line.
        const std::vector<std::string> block = failure_lines(name + " " + text, x, width_ > stamp.size() ? width_ - stamp.size() : 0);
        for (std::size_t i = 0; i < block.size(); ++i) out += (i == 0 ? stamp : std::string(stamp.size(), ' ')) + block[i] + "\n";
    }
    const auto now_trouble = trouble_set(e, now);
    for (const auto& t : trouble_) if (!now_trouble.count(t)) out += stamp + "resolved: " + t + "\n";
    // Past trouble of an ended evaluation was shown while it happened, and resolved above.
    for (const auto& t : now_trouble) if (!trouble_.count(t) && !t.starts_with("was ")) out += stamp + t + "\n";
    trouble_ = now_trouble;
    // The ETA's clock time moves with every scheduling round (the forecast is "now + what is
    // left"): time passing alone prints nothing, so the line is printed again only when the
    // counts, the state or the kind of forecast (a time, waiting, unknown) changed; not its
    // basis either, whose count of free GPUs moves with other users' jobs.
    const std::string eta = eta_text(e, now, false);
    const bool timed = eta.starts_with("ETA ~") || eta.starts_with("ETA any");
    const std::string key = progress_summary(e) + "\x1f" + (timed ? std::string("ETA") : eta);
    if (key != last_progress_) {
        out += stamp + progress + "\n";
        last_progress_ = key;
    }
    return out;
}

std::string Watcher::events(const json& e, double now) {
    std::string out;
    const long id = num(e, "id");
    auto emit = [&](json ev) {
        ev["time"] = now;
        ev["evaluation"] = id;
        out += ev.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    };
    for (const auto& x : e.value("dataset_list", json::array())) {
        const std::string name = x.value("dataset", ""),
                          key = x.value("state", "") + "\x1f" + x.value("detail", "") + "\x1f" + x.value("evidence", "") + "\x1f" + x.value("log", "");
        auto [it, fresh] = datasets_.try_emplace(name, key);
        if (!fresh && it->second == key) continue;
        it->second = key;
        json ev{{"event", "dataset"}, {"dataset", name}, {"state", x.value("state", "")}, {"detail", x.value("detail", "")},
                {"nodes", x.value("nodes", json::array())}, {"scores", x.value("scores", json::object())}};
        if (x.contains("evidence")) ev["evidence"] = x["evidence"];
        if (x.contains("log")) ev["log"] = x["log"];
        emit(std::move(ev));
    }
    json trouble = json::array();
    if (e.contains("scheduler")) trouble = e["scheduler"].value("trouble", json::array());
    else if (e.contains("retries")) trouble = e["retries"];
    std::set<std::string> seen;
    for (const auto& t : trouble) {
        const std::string key = t.value("kind", "") + "\x1f" + t.value("text", "");
        seen.insert(key);
        if (!trouble_.count(key))
            emit({{"event", "trouble"}, {"kind", t.value("kind", "")}, {"since", t.value("since", json())}, {"text", t.value("text", "")}});
    }
    for (const auto& key : trouble_)
        if (!seen.count(key)) emit({{"event", "resolved"}, {"kind", key.substr(0, key.find('\x1f'))}, {"text", key.substr(key.find('\x1f') + 1)}});
    trouble_ = seen;
    json eta = e.contains("scheduler") ? e["scheduler"].value("eta", json()) : json();
    json progress{{"event", "progress"}, {"state", e.value("state", "")}, {"datasets", e.value("datasets", json::object())},
                  {"trials", e.value("trials", json::object())}, {"eta", eta}};
    // Keyed without the forecast's clock time, as the lines are: time passing alone is no event.
    json key = progress;
    if (key["eta"].is_object()) key["eta"].erase("finish_at");
    const std::string p = key.dump();
    if (p != last_progress_) {
        last_progress_ = p;
        emit(progress);
    }
    if (e.value("state", "") != "active" && !started_) {
        started_ = true;  // here: the end was reported
        emit({{"event", "end"}, {"state", e.value("state", "")}});
    }
    return out;
}

}  // namespace acme::evalsched
