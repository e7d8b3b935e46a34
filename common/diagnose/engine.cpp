#include "common/diagnose/engine.hpp"

#include <algorithm>
#include <exception>
#include <numeric>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (fmt 11 keeps it here only)

#include "common/diagnose/log_scan.hpp"

namespace acme::diagnose {
namespace {

struct Finding {
    int priority = 0;
    std::size_t line = 0;  // 0: not from the log; sorts before any log line of equal priority
    const RuleCommon* rule = nullptr;
    const std::vector<int>* exit_codes = nullptr;  // a log rule's corroborating exit codes
    Evidence evidence;
    bool generic = false;  // a log rule that decides by an exception class alone
};

std::string_view signal_name(int signal) {
    switch (signal) {
        case 1: return "SIGHUP";
        case 2: return "SIGINT";
        case 3: return "SIGQUIT";
        case 4: return "SIGILL";
        case 6: return "SIGABRT";
        case 7: return "SIGBUS";
        case 8: return "SIGFPE";
        case 9: return "SIGKILL";
        case 11: return "SIGSEGV";
        case 13: return "SIGPIPE";
        case 15: return "SIGTERM";
        default: return "";
    }
}

std::string describe(const ExitStatus& status) {
    if (status.signal == 0) return fmt::format("exit code {}", status.exit_code);
    auto name = signal_name(status.signal);
    return name.empty() ? fmt::format("signal {}", status.signal) : fmt::format("signal {} ({})", status.signal, name);
}

// Evidence text is stored (SQLite TEXT, JSON) and printed on terminals: keep valid UTF-8,
// drop terminal escapes and control characters, keep it short.
// A line with carriage returns (progress bars) shows only the segment that holds `column`.
std::string clean_text(std::string_view text, std::size_t column) {
    column = std::min(column, text.size());
    while (column < text.size() && text[column] == '\r') ++column;  // a match that starts at a '\r'
    if (auto cr = column == 0 ? std::string_view::npos : text.rfind('\r', column - 1); cr != std::string_view::npos) {
        column -= cr + 1;
        text.remove_prefix(cr + 1);
    }
    if (auto cr = text.find('\r', column); cr != std::string_view::npos) text = text.substr(0, cr);
    if (text.size() > kEvidenceChars && column > kEvidenceChars - 100) text.remove_prefix(std::min(column - 100, text.size()));
    std::string out;
    out.reserve(std::min(text.size(), kEvidenceChars));
    for (std::size_t i = 0; i < text.size() && out.size() < kEvidenceChars;) {
        auto c = static_cast<unsigned char>(text[i]);
        if (c == 0x1b) {  // ESC [ ... final byte
            ++i;
            if (i < text.size() && text[i] == '[') {
                ++i;
                while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
            }
            ++i;
            continue;
        }
        if (c < 0x80) {
            out += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
            ++i;
            continue;
        }
        std::size_t length = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        bool valid = length > 0 && i + length <= text.size();
        for (std::size_t k = 1; valid && k < length; ++k)
            valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
        if (valid && length == 3) {
            auto c1 = static_cast<unsigned char>(text[i + 1]);
            valid = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
        }
        if (valid && length == 4) {
            auto c1 = static_cast<unsigned char>(text[i + 1]);
            valid = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
        }
        if (valid && out.size() + length > kEvidenceChars) break;  // never cut a character in half
        if (valid) {
            out.append(text.substr(i, length));
            i += length;
        } else {
            out += '?';
            ++i;
        }
    }
    auto first = out.find_first_not_of(' ');
    if (first == std::string::npos) return {};
    auto last = out.find_last_not_of(' ');
    return out.substr(first, last - first + 1);
}

struct Exits {
    std::vector<ExitStatus> all;  // the job's and each task's
    bool known() const { return !all.empty(); }
    bool success() const {
        return known() && std::all_of(all.begin(), all.end(), [](const ExitStatus& s) { return s.success(); });
    }
    const ExitStatus* with_code(std::span<const int> codes) const {
        for (const auto& s : all)
            if (s.signal == 0 && std::find(codes.begin(), codes.end(), s.exit_code) != codes.end()) return &s;
        return nullptr;
    }
    const ExitStatus* with_signal(std::span<const int> signals) const {
        for (const auto& s : all)
            if (s.signal != 0 && std::find(signals.begin(), signals.end(), s.signal) != signals.end()) return &s;
        return nullptr;
    }
    // The status a person would quote: the job's own when it failed, else the first failed task's.
    const ExitStatus* failure() const {
        for (const auto& s : all)
            if (!s.success()) return &s;
        return nullptr;
    }
};

Exits collect_exits(const JobEnd& job) {
    Exits exits;
    if (job.job_exit) exits.all.push_back(*job.job_exit);
    for (int status : job.task_wait_statuses) exits.all.push_back(from_wait_status(status));
    return exits;
}

bool on_job_gpu(const JobEnd& job, int gpu) {
    return job.job_gpus.empty() || std::find(job.job_gpus.begin(), job.job_gpus.end(), gpu) != job.job_gpus.end();
}

void gpu_findings(const RuleSet& rules, const JobEnd& job, std::vector<Finding>& out) {
    for (const auto& event : job.gpu_events) {
        if (!on_job_gpu(job, event.gpu)) continue;
        for (const auto& rule : rules.gpu_event) {
            if (rule.kind != event.kind) continue;
            if (!rule.codes.empty() &&
                (!event.code || std::find(rule.codes.begin(), rule.codes.end(), *event.code) == rule.codes.end()))
                continue;
            std::string text = fmt::format("GPU {}: {}", event.gpu, event.kind == "xid" ? "XID" : event.kind);
            if (event.code) text += fmt::format(" {}", *event.code);
            if (!event.detail.empty()) text += fmt::format(" ({})", clean_text(event.detail, 0));
            out.push_back({rule.priority, 0, &rule, nullptr, {0, "gpu_event", std::move(text)}});
        }
    }
}

void status_findings(const RuleSet& rules, const JobEnd& job, const Exits& exits, std::vector<Finding>& out) {
    for (const auto& rule : rules.status) {
        std::vector<std::string> seen;
        if (!rule.exit_codes.empty()) {
            const ExitStatus* s = exits.with_code(rule.exit_codes);
            if (!s) continue;
            seen.push_back(describe(*s));
        }
        if (!rule.signals.empty()) {
            const ExitStatus* s = exits.with_signal(rule.signals);
            if (!s) continue;
            seen.push_back(describe(*s));
        }
        auto flag = [&](const std::optional<bool>& want, bool have, std::string_view words) {
            if (!want) return true;
            if (*want != have) return false;
            if (have) seen.emplace_back(words);
            return true;
        };
        if (!flag(rule.oom_kill, job.oom_kill, "cgroup recorded an OOM kill") ||
            !flag(rule.time_limit, job.time_limit, "Slurm: job reached its time limit") ||
            !flag(rule.cancelled, job.cancelled, "Slurm: job cancelled") ||
            !flag(rule.node_failure, job.node_failure, "Slurm: node failure") ||
            !flag(rule.stalled, job.stalled, "sampler: the job stopped making progress") ||
            !flag(rule.stall_named, job.stall_named, "sampler: one node diverged"))
            continue;
        std::string_view source =
            rule.exit_codes.empty() && rule.signals.empty() && !rule.oom_kill ? "slurm" : "exit_status";
        out.push_back({rule.priority, 0, &rule, nullptr, {0, std::string(source), fmt::format("{}", fmt::join(seen, ", "))}});
    }
}

std::vector<Evidence> error_evidence(std::string_view log, const Lines& lines) {
    std::vector<Evidence> out;
    for (const ErrorLine& e : error_lines(log, lines, kSignatureLines))
        out.push_back({e.line, "log", clean_text(lines.line(e.line), e.column)});
    return out;
}

const ReasonInfo& reason_of(const RuleCommon& rule) { return *rule.reason; }

void rank(std::vector<Finding>& findings) {
    std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
        if (a.priority != b.priority) return a.priority > b.priority;
        return a.line < b.line;
    });
}

// The tie among ranked findings (engine.hpp): the top-ranked log finding of each category within
// `margin` of the top priority, down to the first finding that is not from the log. Indices into
// findings; fewer than two: no tie.
std::vector<std::size_t> tied(const std::vector<Finding>& findings, int margin) {
    std::vector<std::size_t> out;
    if (findings.empty() || findings.front().evidence.source != "log" ||
        findings.front().rule->reason->category == Category::unknown)
        return out;
    std::vector<Category> seen;
    for (std::size_t i = 0; i < findings.size(); ++i) {
        const Finding& f = findings[i];
        if (f.evidence.source != "log" || f.priority < findings.front().priority - margin) break;
        Category c = f.rule->reason->category;
        if (c == Category::unknown || std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
        seen.push_back(c);
        out.push_back(i);
    }
    if (out.size() < 2) out.clear();
    return out;
}

// The fallback's word on a tie: fills `tie` and returns the index (into findings) of the finding
// that decides. `model` may be null (then the ranking stands).
std::size_t break_tie(const std::vector<Finding>& findings, const std::vector<std::size_t>& candidates,
                      const FallbackModel* model, const JobEnd& job, bool enabled, int margin, double threshold,
                      TieBreak& tie) {
    tie = TieBreak{};
    tie.margin = margin;
    tie.threshold = threshold;
    tie.enabled = enabled && model;
    for (std::size_t i : candidates) {
        const Finding& f = findings[i];
        tie.candidates.push_back({f.rule->id, std::string(f.rule->reason->name), f.rule->reason->category, f.priority,
                                  f.line, -1});
    }
    if (!model) {
        tie.why = "no fallback model: the ranking decides";
        return candidates.front();
    }
    auto features = fallback_features(job.log);
    auto p = model->probabilities(features);
    const auto& reasons = model->reasons();
    // Per candidate: its category's probability, and the category's most probable reason (class).
    std::vector<std::size_t> top_class(tie.candidates.size(), reasons.size());
    for (std::size_t k = 0; k < tie.candidates.size(); ++k) {
        double sum = 0;
        for (std::size_t c = 0; c < reasons.size(); ++c) {
            const ReasonInfo* r = find_reason(reasons[c]);
            if (!r || r->category != tie.candidates[k].category) continue;
            sum += p[c];
            if (top_class[k] == reasons.size() || p[c] > p[top_class[k]]) top_class[k] = c;
        }
        tie.candidates[k].probability = sum;
    }
    std::vector<std::size_t> order(tie.candidates.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return tie.candidates[a].probability > tie.candidates[b].probability;
    });
    std::size_t best = order[0], next = order[1];
    if (top_class[best] < reasons.size() && top_class[next] < reasons.size())
        tie.decided_by = model->decided_by(features, top_class[best], top_class[next], 5);
    const TieCandidate& b = tie.candidates[best];
    std::string says = fmt::format("the learned fallback prefers {} (p={:.2f})", to_string(b.category), b.probability);
    if (best == 0) {
        tie.why = says + ", the ranking's answer: it stands";
    } else if (b.probability < threshold) {
        tie.why = fmt::format("{}, under the {:.2f} threshold: the ranking decides", says, threshold);
    } else if (b.category == Category::infrastructure) {
        tie.why = says + ": the fallback never makes an answer infrastructure, the ranking decides";
    } else if (!enabled) {
        tie.why = says + ", over the threshold, but the tie-breaker is off (tie_breaker = false): the ranking decides";
    } else {
        tie.chosen = best;
        tie.decided = true;
        tie.why = fmt::format("{}, over the {:.2f} threshold: rule {} decides", says, threshold, b.rule);
    }
    return candidates[tie.chosen];
}

// The diagnosis of ranked findings, decided by findings[chosen] (0 unless a tie was broken).
Diagnosis decide(std::vector<Finding>& findings, const Exits& exits, std::size_t chosen, const TieBreak* tie) {
    if (chosen != 0)  // the chosen finding first; the others keep their order
        std::rotate(findings.begin(), findings.begin() + static_cast<std::ptrdiff_t>(chosen),
                    findings.begin() + static_cast<std::ptrdiff_t>(chosen) + 1);
    const Finding& top = findings.front();
    const ReasonInfo& reason = reason_of(*top.rule);

    double confidence = top.rule->confidence;
    if (top.exit_codes && !top.exit_codes->empty()) {
        if (exits.with_code(*top.exit_codes)) confidence += 0.1;
        else if (exits.failure()) confidence -= 0.1;
    }
    std::size_t agreeing = 0;
    bool contested = false;
    for (std::size_t i = 1; i < findings.size(); ++i) {
        const ReasonInfo& other = reason_of(*findings[i].rule);
        if (other.name == reason.name) ++agreeing;
        else if (findings[i].priority >= top.priority) contested = true;
    }
    confidence += std::min(0.06, 0.02 * static_cast<double>(agreeing));
    if (contested) confidence -= 0.15;

    Diagnosis d;
    d.category = reason.category;
    d.reason = std::string(reason.name);
    d.action = top.rule->action.value_or(reason.action);
    d.confidence = std::clamp(confidence, 0.0, 1.0);
    d.rule = top.rule->id;
    if (chosen != 0 && tie) {
        // The fallback chose: never a drain or a requeue, and said so first.
        if (d.action == Action::drain || d.action == Action::requeue) d.action = Action::none;
        d.confidence = std::min(d.confidence, 0.85);
        std::string rivals;
        for (const auto& c : tie->candidates)
            if (c.rule != d.rule)
                rivals += fmt::format("{}{} {} (priority {}, p={:.2f})", rivals.empty() ? "" : ", ", to_string(c.category), c.rule,
                                      c.priority, c.probability);
        std::string words;
        for (std::size_t i = 0; i < tie->decided_by.size(); ++i)
            words += fmt::format("{}\"{}\"", i ? ", " : "", tie->decided_by[i].first);
        d.evidence.push_back(
            {0, "fallback",
             clean_text(fmt::format("rules of different categories tied (priorities within {}): the learned fallback chose {} "
                                    "{} (priority {}, p={:.2f}) over {}, from {}",
                                    tie->margin, to_string(d.category), d.rule, top.priority,
                                    tie->candidates[tie->chosen].probability, rivals, words.empty() ? "no word" : words),
                        0)});
    }
    d.evidence.push_back(top.evidence);

    // Supporting lines: the same reason seen elsewhere (other ranks, other rules), in order.
    std::vector<const Finding*> support;
    for (std::size_t i = 1; i < findings.size(); ++i)
        if (reason_of(*findings[i].rule).name == reason.name) support.push_back(&findings[i]);
    std::stable_sort(support.begin(), support.end(), [](const Finding* a, const Finding* b) { return a->line < b->line; });
    for (const Finding* f : support) {
        if (d.evidence.size() >= 5) break;
        if (std::find(d.evidence.begin(), d.evidence.end(), f->evidence) == d.evidence.end()) d.evidence.push_back(f->evidence);
    }
    if (const ExitStatus* failed = exits.failure()) {
        Evidence status{0, "exit_status", describe(*failed)};
        bool present = std::any_of(d.evidence.begin(), d.evidence.end(), [&](const Evidence& e) {
            return e.source == "exit_status" && e.text.find(status.text) != std::string::npos;
        });
        if (!present) d.evidence.push_back(std::move(status));
    }
    return d;
}

// The fallback's answer as a diagnosis: it names a cause for the person reading and never acts
// (no drain, no requeue), at a confidence below any rule's; the rest of `d` is kept. Returns the
// tokens that decided, quoted, for the evidence line.
std::string answer_by_fallback(Diagnosis& d, const ReasonInfo& reason, const FallbackPrediction& p) {
    d.category = reason.category;
    d.reason = std::string(reason.name);
    d.action = Action::none;
    d.confidence = std::clamp(p.probability, 0.0, 0.85);
    d.rule = "fallback";
    std::string words;
    for (std::size_t i = 0; i < p.decided_by.size() && i < 5; ++i)
        words += fmt::format("{}\"{}\"", i ? ", " : "", p.decided_by[i].first);
    return words;
}

// The fallback's answer over a generic rule's (engine.hpp), or none when it is not confident of
// another category that is not infrastructure.
std::optional<Diagnosis> overruled(const Finding& top, const Exits& exits, std::string_view log, const FallbackModel& model,
                                   double threshold, const RuleSet& rules) {
    FallbackPrediction p = model.predict(log, threshold);
    const ReasonInfo* reason = find_reason(p.reason);
    const ReasonInfo& ruled = reason_of(*top.rule);
    // Never into infrastructure: on the held-out folds its confident infrastructure answers over a
    // RuntimeError were wrong (a watchdog's words after the program's own error).
    if (!reason || reason->name == unknown_reason().name || reason->name == ruled.name ||
        reason->category == Category::infrastructure)
        return std::nullopt;
    // Within the rule's own category, only toward a specific reason, one no generic rule gives (a
    // model_loading_error or cuda_version_mismatch over a ValueError's or RuntimeError's reason):
    // one exception class says nothing more than another, so value_error never replaces
    // runtime_error.
    if (reason->category == ruled.category &&
        std::any_of(rules.log.begin(), rules.log.end(),
                    [&](const LogRule& r) { return r.generic && reason_of(r).name == reason->name; }))
        return std::nullopt;
    Diagnosis d;
    const std::string words = answer_by_fallback(d, *reason, p);
    d.evidence.push_back(
        {0, "fallback",
         clean_text(fmt::format("rule {} ({}) decides by the exception class alone; the learned fallback says {} (p={:.2f}, "
                                "at least {:.2f}) from {}",
                                top.rule->id, ruled.name, reason->name, p.probability, threshold, words),
                    0)});
    d.evidence.push_back(top.evidence);
    if (const ExitStatus* failed = exits.failure()) d.evidence.push_back({0, "exit_status", describe(*failed)});
    return d;
}

}  // namespace

Engine::Engine(RuleSet rules, std::shared_ptr<const FallbackModel> fallback, const FallbackKeys& overrides)
    : rules_(std::make_shared<const RuleSet>(std::move(rules))),
      scanner_(std::make_shared<const LogScanner>(rules_->log)),
      fallback_(std::move(fallback)) {
    configure(overrides);
}

void Engine::configure(const FallbackKeys& overrides) {
    FallbackKeys keys = rules_->fallback;
    keys.override_with(overrides);
    if (keys.threshold) {
        threshold_ = *keys.threshold;
        threshold_source_ = "[fallback] threshold";
    } else if (fallback_ && fallback_->calibrated()) {
        threshold_ = fallback_->threshold();
        threshold_source_ = kFallbackModelFile;
    } else {
        threshold_ = FallbackModel::kDefaultThreshold;
        threshold_source_ = "the default";
    }
    tie_breaker_ = keys.tie_breaker.value_or(kTieBreakerDefault);
    tie_margin_ = keys.tie_margin.value_or(kTieMarginDefault);
    overrule_ = keys.overrule.value_or(kOverruleDefault);
}

Engine Engine::with_fallback(std::shared_ptr<const FallbackModel> fallback, const FallbackKeys& overrides) const {
    Engine copy = *this;
    copy.fallback_ = std::move(fallback);
    copy.configure(overrides);
    return copy;
}

Engine Engine::from_dir(const std::filesystem::path& dir) {
    RuleSet rules = load_rules_dir(dir);
    std::shared_ptr<const FallbackModel> fallback;
    auto model = dir / kFallbackModelFile;
    if (std::filesystem::is_regular_file(model)) {
        std::ifstream in(model, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in) throw RuleError(fmt::format("{}: cannot read the fallback model", model.string()));
        fallback = std::make_shared<const FallbackModel>(FallbackModel::parse(text.str(), model.string()));
    }
    return Engine(std::move(rules), std::move(fallback));
}

Diagnosis Engine::diagnose(const JobEnd& job, const History* history, TieBreak* tie) const {
    return run(job, history, tie, nullptr);
}

Diagnosis Engine::diagnose_without(const JobEnd& job, const std::vector<bool>& without) const {
    return run(job, nullptr, nullptr, &without);
}

Diagnosis Engine::run(const JobEnd& job, const History* history, TieBreak* tie, const std::vector<bool>* without) const {
    if (tie) *tie = TieBreak{};
    Exits exits = collect_exits(job);
    std::vector<Finding> findings;
    gpu_findings(*rules_, job, findings);

    Lines lines(job.log);
    // A job that ended well has no failure for its log to explain; only a hardware event on its
    // GPUs is still news (the GPU is broken for the next job).
    // A stall the sampler found is news even where this node's tasks ended clean: the job was
    // cancelled under them (a node without the batch script sees exit 0).
    if (!exits.success() || job.stalled) {
        status_findings(*rules_, job, exits, findings);
        for (const LogHit& hit : scanner_->scan(job.log, lines)) {
            if (without && hit.rule < without->size() && (*without)[hit.rule]) continue;
            const LogRule& rule = rules_->log[hit.rule];
            findings.push_back({rule.priority, hit.line, &rule, &rule.exit_codes,
                                {hit.line, "log", clean_text(lines.line(hit.line), hit.column)}, rule.generic});
        }
    }
    if (!findings.empty()) {
        rank(findings);
        std::size_t chosen = 0;
        TieBreak met;
        if (auto candidates = tied(findings, tie_margin_); !candidates.empty() && (tie || (tie_breaker_ && fallback_))) {
            chosen = break_tie(findings, candidates, fallback_.get(), job, tie_breaker_, tie_margin_, threshold_, met);
            if (tie) *tie = met;
        }
        if (findings[chosen].generic && fallback_)
            if (auto d = overruled(findings[chosen], exits, job.log, *fallback_, overrule_, *rules_)) return std::move(*d);
        return decide(findings, exits, chosen, &met);
    }

    Diagnosis d;
    if (exits.success()) {
        d.evidence.push_back({0, "exit_status", "the job exited 0: nothing to diagnose"});
        return d;
    }
    d.evidence = error_evidence(job.log, lines);
    if (history && !d.evidence.empty()) {
        if (auto match = history->nearest(evidence_signature(d.evidence))) {
            if (const ReasonInfo* reason = find_reason(match->failure->reason); reason && reason->name != "unknown") {
                d.category = reason->category;
                d.reason = std::string(reason->name);
                d.action = reason->action;
                d.confidence = std::clamp(0.4 + 0.5 * match->similarity, 0.0, 0.9);
                d.rule = fmt::format("history:{}", match->failure->job_id);
                d.evidence.insert(d.evidence.begin(),
                                  {0, "history",
                                   fmt::format("no rule matched; nearest labelled failure is job {} ({}), similarity {:.2f}",
                                               match->failure->job_id, reason->name, match->similarity)});
            }
        }
    }
    // The learned fallback: only where neither a rule nor the site's history decided. It names a
    // cause for the person reading; it never drains or requeues.
    if (fallback_ && d.reason == unknown_reason().name) {
        FallbackPrediction p = fallback_->predict(job.log, threshold_);  // the engine's (a key may override the model's)
        if (const ReasonInfo* reason = find_reason(p.reason); reason && reason->name != unknown_reason().name) {
            const std::string words = answer_by_fallback(d, *reason, p);
            d.evidence.insert(d.evidence.begin(),
                              {0, "fallback",
                               clean_text(fmt::format("no rule matched; the learned fallback says {} (p={:.2f}) from {}",
                                                      reason->name, p.probability, words),
                                          0)});
        }
    }
    if (const ExitStatus* failed = exits.failure()) d.evidence.push_back({0, "exit_status", describe(*failed)});
    return d;
}

Signature log_signature(std::string_view log) {
    Lines lines(log);
    return evidence_signature(error_evidence(log, lines));
}

Signature evidence_signature(const std::vector<Evidence>& evidence) {
    std::vector<std::string> texts;
    for (const auto& e : evidence)
        if (e.source == "log") texts.push_back(e.text);
    return make_signature(texts);
}

Diagnosis diagnose_noexcept(const Engine& engine, const JobEnd& job, const History* history) noexcept {
    try {
        return engine.diagnose(job, history);
    } catch (const std::exception& error) {
        Diagnosis d;
        try {
            d.evidence.push_back({0, "engine", fmt::format("diagnosis failed: {}", error.what())});
        } catch (...) {
        }
        return d;
    } catch (...) {
        return Diagnosis{};
    }
}

std::optional<Engine> load_engine_noexcept(const std::filesystem::path& dir, std::string& error) noexcept {
    try {
        return Engine::from_dir(dir);
    } catch (const std::exception& e) {
        try {
            error = e.what();
        } catch (...) {
        }
    } catch (...) {
        try {
            error = "rules: unexpected failure loading " + dir.string();
        } catch (...) {
        }
    }
    return std::nullopt;
}

}  // namespace acme::diagnose
