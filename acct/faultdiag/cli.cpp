#include "acct/faultdiag/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (fmt 11 keeps it here only)
#include <fmt/ostream.h>

#include "acct/faultdiag/log_input.hpp"
#include "acct/faultdiag/render.hpp"
#include "acct/faultdiag/rule_suggestion.hpp"
#include "acct/faultdiag/slurmdbd_job.hpp"
#include "acct/faultdiag/spool_job.hpp"
#include "common/slurm/accounting.hpp"
#include "common/diagnose/engine.hpp"
#include "common/diagnose/history_store.hpp"
#include "common/diagnose/llm_client.hpp"
#include "common/diagnose/log_scan.hpp"
#include "common/store/labels_store.hpp"
#include "common/util/version.hpp"
#include "common/util/cli_checks.hpp"

namespace acme::faultdiag {
namespace {

struct Options {
    std::vector<std::string> files;
    bool json = false;
    bool list_reasons = false;
    std::int64_t job = -1;
    std::vector<std::string> label;  // JOBID REASON
    std::string exit_code;           // "<exit>:<signal>", as SLURM_JOB_EXIT_CODE2
    std::string rules_dir, spool_dir, labels_path;
    bool rules_given = false;  // --rules on the command line: try them, do not show the stored answer
    bool spool_given = false;  // --spool-dir on the command line: the node spools, not slurmdbd
    std::int64_t suggest = -1;  // --suggest-rule JOBID
    diagnose::LlmConfig llm;    // --llm-*: off unless --llm-endpoint
    bool explain = false;       // --explain: what the learned fallback says of each log, and why
};

// A problem with one named thing and what to do about it; becomes one line and exit 1.
struct Failure {
    std::string message;
};


std::optional<diagnose::History> load_history(const std::string& path, std::ostream& err) {
    std::string error;
    auto history = diagnose::load_history_noexcept(path, error);
    if (!error.empty()) fmt::print(err, "faultdiag: warning: labels store not used: {}\n", error);
    return history;
}

diagnose::Engine load_engine(const std::string& dir) {
    try {
        return diagnose::Engine::from_dir(dir);
    } catch (const diagnose::RuleError& error) {
        throw Failure{error.what()};
    }
}

// The rules' answer, or the model's where the rules did not decide and --llm-endpoint is given.
diagnose::Diagnosis with_model(const Options& o, std::string_view log, diagnose::Diagnosis d, std::ostream& err) {
    if (!o.llm.enabled()) return d;
    auto asked = diagnose::ask_model(o.llm, log, d);
    if (!asked.note.empty() && !asked.diagnosis) fmt::print(err, "faultdiag: note: {}\n", asked.note);
    return asked.diagnosis ? *asked.diagnosis : d;
}

// --explain: the learned fallback's answer for a log whether or not it decided (it decides only
// where no rule and no history did, and only above its threshold), and the words that weighed
// most for it against the runner-up; and, when rules of different categories tied, the
// candidates and what the tie-breaker did.
struct Explanation {
    bool model = false;
    diagnose::FallbackPrediction prediction;
    double threshold = 0;
    std::string threshold_source;
    diagnose::TieBreak tie;  // no candidates: no tie
};

Explanation explain(const diagnose::Engine& engine, const std::string& log, diagnose::TieBreak tie) {
    Explanation e;
    e.tie = std::move(tie);
    if (const auto* model = engine.fallback()) {
        e.model = true;
        e.threshold = engine.fallback_threshold();
        e.threshold_source = std::string(engine.fallback_threshold_source());
        e.prediction = model->predict(log, e.threshold);
    }
    return e;
}

class Printer {
public:
    Printer(std::ostream& out, bool json) : out_(out), json_(json) {}
    void print(const std::string& title, const std::string& origin, const diagnose::Diagnosis& d,
               const Explanation* why = nullptr) {
        if (json_) {
            auto j = render_json(title, origin, d);
            if (why) {
                nlohmann::json f = nlohmann::json::object();
                if (why->model) {
                    f["best"] = why->prediction.best;
                    f["probability"] = why->prediction.probability;
                    f["threshold"] = why->threshold;
                    f["threshold_from"] = why->threshold_source;
                    f["reason"] = why->prediction.reason;
                    f["decided_by"] = nlohmann::json::array();
                    for (const auto& [word, weight] : why->prediction.decided_by)
                        f["decided_by"].push_back({{"feature", word}, {"weight", weight}});
                }
                j["fallback"] = f;
                if (!why->tie.candidates.empty()) {
                    nlohmann::json t;
                    t["margin"] = why->tie.margin;
                    t["tie_breaker"] = why->tie.enabled;
                    t["decided"] = why->tie.decided;
                    t["why"] = why->tie.why;
                    t["candidates"] = nlohmann::json::array();
                    for (const auto& c : why->tie.candidates) {
                        nlohmann::json one{{"rule", c.rule},         {"reason", c.reason},
                                           {"category", std::string(diagnose::to_string(c.category))},
                                           {"priority", c.priority}, {"line", c.line}};
                        one["probability"] = c.probability >= 0 ? nlohmann::json(c.probability) : nlohmann::json(nullptr);
                        t["candidates"].push_back(std::move(one));
                    }
                    t["decided_by"] = nlohmann::json::array();
                    for (const auto& [word, weight] : why->tie.decided_by)
                        t["decided_by"].push_back({{"feature", word}, {"weight", weight}});
                    j["tie"] = t;
                }
            }
            out_ << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
            return;
        }
        if (blocks_++) out_ << '\n';
        render_plain(out_, title, origin, d);
        if (!why) return;
        if (!why->model) {
            out_ << "  fallback:   no model (" << diagnose::kFallbackModelFile << " is not in the rules directory)\n";
            return;
        }
        out_ << fmt::format("  fallback:   {} p={:.2f} ({} the {:.2f} threshold of {}{})\n", why->prediction.best,
                            why->prediction.probability, why->prediction.probability >= why->threshold ? "over" : "under",
                            why->threshold, why->threshold_source, d.rule == "fallback" ? "; it decided" : "");
        for (const auto& [word, weight] : why->prediction.decided_by)
            out_ << fmt::format("    {:+.3f}  \"{}\"\n", weight, word);
        if (why->tie.candidates.empty()) return;
        out_ << fmt::format("  tie:        rules of {} categories within {} of the top priority (tie-breaker {}){}\n",
                            why->tie.candidates.size(), why->tie.margin, why->tie.enabled ? "on" : "off",
                            why->tie.decided ? "; the fallback decided" : "");
        for (const auto& c : why->tie.candidates)
            out_ << fmt::format("    {:<14} {} ({}, priority {}{}) p={:.2f}\n", diagnose::to_string(c.category), c.rule,
                                c.reason, c.priority, c.line ? fmt::format(", line {}", c.line) : std::string(),
                                c.probability);
        out_ << fmt::format("    {}\n", why->tie.why);
        for (const auto& [word, weight] : why->tie.decided_by)
            out_ << fmt::format("    {:+.3f}  \"{}\"\n", weight, word);
    }

private:
    std::ostream& out_;
    bool json_;
    int blocks_ = 0;
};

int list_reasons(std::ostream& out, bool json) {
    if (json) {
        auto array = nlohmann::json::array();
        for (const auto& r : diagnose::reasons())
            array.push_back({{"reason", r.name}, {"category", diagnose::to_string(r.category)},
                             {"action", diagnose::to_string(r.action)}, {"summary", r.summary}});
        out << array.dump() << '\n';
        return 0;
    }
    fmt::print(out, "{:<24}{:<16}{:<10}{}\n", "REASON", "CATEGORY", "ACTION", "MEANING");
    for (const auto& r : diagnose::reasons())
        fmt::print(out, "{:<24}{:<16}{:<10}{}\n", r.name, diagnose::to_string(r.category), diagnose::to_string(r.action),
                   r.summary);
    return 0;
}

std::int64_t parse_job_id(const std::string& text) {
    std::int64_t id = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || id <= 0)
        throw Failure{fmt::format("\"{}\" is not a job id: give the numeric Slurm job id", text)};
    return id;
}

std::string who() {
    if (const char* user = std::getenv("SUDO_USER"); user && *user) return user;
    if (const char* user = std::getenv("USER"); user && *user) return user;
    return fmt::format("uid {}", getuid());
}

int label(const Options& o, std::istream& in, std::ostream& out, std::ostream& err) {
    std::int64_t job_id = parse_job_id(o.label[0]);
    const diagnose::ReasonInfo* reason = diagnose::find_reason(o.label[1]);
    if (!reason || reason->name == "unknown") {
        fmt::print(err, "faultdiag: unknown reason \"{}\": run `faultdiag --reasons` for the list\n", o.label[1]);
        return 2;
    }
    diagnose::Signature signature;
    std::string from;
    if (!o.files.empty()) {
        auto inputs = read_inputs(o.files, in);
        signature = diagnose::log_signature(concatenated(inputs));
        from = fmt::format("{}", fmt::join(o.files, ", "));
    } else {
        SpoolJob job = read_spool_job(o.spool_dir, job_id);
        if (job.stored) signature = diagnose::evidence_signature(job.stored->diagnosis.evidence);
        from = fmt::format("the evidence stored in {}", o.spool_dir);
    }
    if (signature.empty())
        throw Failure{fmt::format("job {}: no error lines to remember from {}: give its log, e.g. faultdiag --label {} {} slurm-{}.out",
                                  job_id, from, job_id, reason->name, job_id)};
    try {
        std::filesystem::path parent = std::filesystem::path(o.labels_path).parent_path();
        if (!parent.empty()) std::filesystem::create_directories(parent);
        auto db = store::open_labels(o.labels_path);
        store::put_label(db, {job_id, std::string(reason->name), diagnose::to_text(signature),
                              static_cast<double>(std::time(nullptr)), who()});
    } catch (const std::exception& error) {
        throw Failure{fmt::format("cannot write labels store {}: {}: pass --labels FILE or fix its permissions",
                                  o.labels_path, error.what())};
    }
    fmt::print(out, "job {} labelled {} ({}), from {}\n", job_id, reason->name, diagnose::to_string(reason->category), from);
    return 0;
}

// --job from Slurm's accounting: the diagnosis in the job's acme record. slurmdbd keeps no log
// tail (the record never holds one), so looking again needs the caller's log file.
int diagnose_accounted(const Options& o, const AccountedJob& job, const std::vector<Input>& inputs,
                       std::ostream& out, std::ostream& err) {
    for (const auto& warning : job.warnings) fmt::print(err, "faultdiag: warning: {}\n", warning);
    if (!job.missing_nodes.empty())
        fmt::print(err, "faultdiag: note: job {}: no acme record from node(s) {} (their epilog never reported)\n", o.job,
                   fmt::join(job.missing_nodes, ","));
    Printer printer(out, o.json);
    const std::string title = fmt::format("job {}", o.job);
    if (job.stored && inputs.empty() && !o.rules_given) {
        printer.print(title, fmt::format("stored by faultguard on {} (restart {}), from slurmdbd", job.stored->node,
                                         job.stored->restart),
                      job.stored->diagnosis);
        return 0;
    }
    if (inputs.empty()) {
        // PrivateData: another user's job is not returned, so this says no more than "not yours".
        if (!job.found)
            throw Failure{fmt::format("job {} is not in Slurm's accounting, or not yours to see: check the id, or give its log file",
                                      o.job)};
        // A run that completed has nothing to diagnose: that is an answer, not an error.
        if (!job.stored && job.state == "COMPLETED" && (job.exit_code.empty() || job.exit_code == "0:0")) {
            if (o.json)
                out << nlohmann::json{{"input", title}, {"state", job.state}, {"exit_code", job.exit_code.empty() ? "0:0" : job.exit_code},
                                      {"category", nullptr}, {"reason", nullptr}}.dump()
                    << '\n';
            else
                fmt::print(out, "job {} COMPLETED {}: nothing to diagnose\n", o.job, job.exit_code.empty() ? "0:0" : job.exit_code);
            return 0;
        }
        if (!job.stored && (job.state == "RUNNING" || job.state == "PENDING" || job.state == "SUSPENDED"))
            throw Failure{fmt::format("job {} is {} in Slurm's accounting: faultguard diagnoses it when it ends", o.job, job.state)};
        if (!job.stored)
            throw Failure{fmt::format("job {} ({} {}) has no diagnosis in its acme record in slurmdbd (faultguard did not run "
                                      "on its nodes, or its record did not reach slurmdbd): give its log file",
                                      o.job, job.state.empty() ? "state unknown" : job.state,
                                      job.exit_code.empty() ? "?" : job.exit_code)};
        throw Failure{fmt::format("job {}: slurmdbd keeps no log to diagnose again with --rules: give its log file", o.job)};
    }
    auto engine = load_engine(o.rules_dir);
    auto history = load_history(o.labels_path, err);
    diagnose::JobEnd end;
    end.log = concatenated(inputs);
    const std::string exit_code = !o.exit_code.empty() ? o.exit_code : job.exit_code;
    if (!exit_code.empty()) end.job_exit = diagnose::parse_exit_code2(exit_code);
    printer.print(title, job.found ? "diagnosed from the log given (job found in slurmdbd)" : "not in slurmdbd; from the log only",
                  with_model(o, end.log, engine.diagnose(end, history ? &*history : nullptr), err));
    return 0;
}

int diagnose_job(const Options& o, const Defaults& defaults, std::istream& in, std::ostream& out, std::ostream& err) {
    auto inputs = read_inputs(o.files, in);
    // Slurm's accounting first, as every login node can ask it; the node spools when a spool
    // directory is named or the site has no slurmdbd (then silently, as before), or when
    // slurmdbd does not answer (said once).
    if (!o.spool_given && defaults.ask_slurm) {
        std::string why_not;
        if (slurm::accounting_is_slurmdbd(why_not)) {
            auto job = read_accounted_job(o.job, why_not);
            // Right after a failure (a script that runs faultdiag when its job ended) the
            // record is seconds away: wait for it rather than say there is none.
            if (job && inputs.empty() && record_may_be_on_its_way(*job, static_cast<double>(std::time(nullptr)))) {
                fmt::print(err, "faultdiag: note: job {} ended {:.0f} s ago; waiting up to {:.0f} s for faultguard's record\n",
                           o.job, std::max(0.0, static_cast<double>(std::time(nullptr)) - job->end), kRecordArrivalSeconds);
                while (job && record_may_be_on_its_way(*job, static_cast<double>(std::time(nullptr)))) {
                    std::this_thread::sleep_for(std::chrono::seconds(1));
                    job = read_accounted_job(o.job, why_not);
                }
            }
            if (job) return diagnose_accounted(o, *job, inputs, out, err);
            fmt::print(err, "faultdiag: note: {}: reading the node spools in {} instead\n", why_not, o.spool_dir);
        }
    }
    SpoolJob job;
    try {
        job = read_spool_job(o.spool_dir, o.job);
    } catch (const std::runtime_error& error) {
        throw Failure{error.what()};
    }
    for (const auto& warning : job.warnings) fmt::print(err, "faultdiag: warning: {}\n", warning);
    Printer printer(out, o.json);
    std::string title = fmt::format("job {}", o.job);
    // The plugin's own answer, made with the full log tail at job end, is the better one,
    // unless the caller brings the log, or rules, to look again.
    if (job.stored && inputs.empty() && !o.rules_given) {
        printer.print(title, fmt::format("stored by faultguard on {} (restart {})", job.stored->node, job.stored->restart),
                      job.stored->diagnosis);
        return 0;
    }
    if (!job.found() && inputs.empty())
        throw Failure{::geteuid() != 0 && !job.warnings.empty()
                          ? fmt::format("job {}: the spools under {} are readable by root only: leave out --spool-dir to "
                                        "read Slurm's accounting (slurmdbd), or run as root on the node",
                                        o.job, o.spool_dir)
                          : fmt::format("job {} is in no spool under {}: check the id, pass --spool-dir DIR, or give its "
                                        "log file", o.job, o.spool_dir)};
    auto engine = load_engine(o.rules_dir);
    auto history = load_history(o.labels_path, err);
    // Without files, the tail faultguard stored is the log.
    std::string log = inputs.empty() ? job.log : concatenated(inputs);
    diagnose::JobEnd end;
    end.log = log;
    end.task_wait_statuses = job.task_wait_statuses;
    end.gpu_events = job.gpu_events;
    if (!o.exit_code.empty()) end.job_exit = diagnose::parse_exit_code2(o.exit_code);
    auto d = with_model(o, log, engine.diagnose(end, history ? &*history : nullptr), err);
    std::string origin = job.found() ? fmt::format("re-diagnosed from the spool ({})", fmt::join(job.nodes, ", "))
                                     : std::string("not in the spool; from the log only");
    printer.print(title, origin, d);
    return 0;
}

int diagnose_files(const Options& o, std::istream& in, std::ostream& out, std::ostream& err) {
    auto inputs = read_inputs(o.files, in);
    auto engine = load_engine(o.rules_dir);
    auto history = load_history(o.labels_path, err);
    Printer printer(out, o.json);
    for (const auto& input : inputs) {
        diagnose::JobEnd end;
        end.log = input.text;
        if (!o.exit_code.empty()) end.job_exit = diagnose::parse_exit_code2(o.exit_code);
        diagnose::TieBreak tie;
        auto d = with_model(o, input.text, engine.diagnose(end, history ? &*history : nullptr, o.explain ? &tie : nullptr),
                            err);
        if (o.explain) {
            auto why = explain(engine, input.text, std::move(tie));
            printer.print(input.name, "", d, &why);
        } else {
            printer.print(input.name, "", d);
        }
    }
    return 0;
}

// --suggest-rule JOBID [--label CATEGORY/REASON] [LOG...]: a draft rule from the model's
// accepted answer for the job, or from a person's label and the job's evidence line.
int suggest_rule(const Options& o, const Defaults& defaults, std::istream& in, std::ostream& out, std::ostream& err) {
    const auto inputs = read_inputs(o.files, in);
    std::string log = concatenated(inputs);
    std::optional<diagnose::Diagnosis> stored;
    bool asked_slurmdbd = false;
    if (!o.spool_given && defaults.ask_slurm) {
        std::string why_not;
        if (slurm::accounting_is_slurmdbd(why_not)) {
            if (auto job = read_accounted_job(o.suggest, why_not)) {
                asked_slurmdbd = true;
                if (job->stored) stored = job->stored->diagnosis;
            }
        }
    }
    if (!asked_slurmdbd) {
        try {
            SpoolJob job = read_spool_job(o.spool_dir, o.suggest);
            for (const auto& warning : job.warnings) fmt::print(err, "faultdiag: warning: {}\n", warning);
            if (job.stored) stored = job.stored->diagnosis;
            if (log.empty()) log = job.log;
        } catch (const std::runtime_error& error) {
            if (log.empty()) throw Failure{error.what()};
        }
    }
    RuleSuggestion ask{o.suggest, stored, std::move(log), o.label.empty() ? std::string() : o.label[0], who()};
    DraftedRule draft;
    try {
        draft = suggest_rule(ask);
    } catch (const NoDraft& e) {
        throw Failure{e.what()};
    }
    out << draft.toml;
    if (!draft.message.empty()) fmt::print(err, "faultdiag: {}\n", draft.message);
    return draft.status;
}

}  // namespace

int run(const std::vector<std::string>& args, const Defaults& defaults, std::istream& in, std::ostream& out,
        std::ostream& err) {
    Options o;
    o.rules_dir = defaults.rules_dir;
    o.spool_dir = defaults.spool_dir;
    o.labels_path = defaults.labels_path;

    CLI::App app{"faultdiag: name the cause of a failed job from its log, exit status and GPU events", "faultdiag"};
    app.set_version_flag("-V,--version", acme::version_line("faultdiag"), "print the version and exit");
    app.formatter(std::make_shared<acme::util::HelpFormatter>());
    app.add_option("files", o.files, "log files to diagnose, '-' for standard input");
    app.add_flag("--json", o.json, "one JSON object per input, one per line");
    app.add_flag("--explain", o.explain,
                 "also show what the learned fallback says of each log file and the words that decided it, and any tie "
                 "between rules of different categories with what the tie-breaker did");
    auto* job = app.add_option("--job", o.job, "diagnose a finished job: its stored diagnosis from slurmdbd (--spool-dir: the node spools)")->check(util::positive_integer());
    auto* lbl = app.add_option("--label", o.label,
                               "record the confirmed REASON of JOBID for history matching; with --suggest-rule: "
                               "CATEGORY/REASON, the reason of the draft rule")
                    ->expected(1, 2)
                    ->allow_extra_args(false)
                    ->type_name("JOBID REASON");
    auto* reasons = app.add_flag("--reasons", o.list_reasons, "list the reasons, their categories and actions");
    app.add_option("--exit-code", o.exit_code, "the job's exit as EXIT:SIGNAL (SLURM_JOB_EXIT_CODE2), e.g. 0:9")
        ->check([](const std::string& value) {
            return diagnose::parse_exit_code2(value) ? std::string() : std::string("must be EXIT:SIGNAL, e.g. 1:0 or 0:9");
        });
    app.add_option("--rules", o.rules_dir, "directory of *.toml rule files")->capture_default_str();
    app.add_option("--spool-dir", o.spool_dir, "directory of node spool files <node>.db")->capture_default_str();
    app.add_option("--labels", o.labels_path, "the labels store (history)")->capture_default_str();
    auto* suggest = app.add_option("--suggest-rule", o.suggest,
                                   "print a draft TOML rule from the model's accepted answer for JOBID (or from --label)")
                        ->check(util::positive_integer())
                        ->type_name("JOBID");
    app.add_option("--llm-endpoint", o.llm.endpoint,
                   "ask this OpenAI-compatible server (http://HOST:PORT) when the rules do not decide; off by default");
    app.add_option("--llm-model", o.llm.model, "the server's model name");
    app.add_option("--llm-token-file", o.llm.token_file, "a file only its owner can read, holding the bearer token");
    app.add_option("--llm-timeout", o.llm.timeout, "seconds for the whole request to the model")
        ->check(CLI::Range(0.1, 120.0))
        ->capture_default_str();
    app.add_option("--llm-below", o.llm.below, "also ask when the rules' confidence is below this")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    job->excludes(lbl)->excludes(reasons)->excludes(suggest);
    suggest->excludes(reasons);
    lbl->excludes(reasons);

    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend());
        app.parse(std::move(reversed));
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e, out, err);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e, out, err);
    } catch (const CLI::ParseError& e) {
        fmt::print(err, "faultdiag: {}: see faultdiag --help\n", util::usage_problem(e));
        return 2;
    }
    o.rules_given = app.count("--rules") > 0;
    o.spool_given = app.count("--spool-dir") > 0;
    if (o.suggest > 0 && o.label.size() == 2) o.files.insert(o.files.begin(), o.label[1]);  // --label C/R LOG
    if (o.suggest > 0 && o.label.size() == 2) o.label.pop_back();
    if (o.suggest <= 0 && o.label.size() == 1) {
        fmt::print(err, "faultdiag: --label needs JOBID REASON (or CATEGORY/REASON with --suggest-rule): see faultdiag --help\n");
        return 2;
    }
    if (const auto problem = diagnose::check_llm_config(o.llm); !problem.empty()) {
        // The config's words name plugstack keys (llm_model=); here they are flags (--llm-model).
        std::string flag = problem;
        for (std::size_t i = 0; i < flag.size() && flag[i] != '='; ++i)
            if (flag[i] == '_') flag[i] = '-';
        fmt::print(err, "faultdiag: --{}: see faultdiag --help\n", flag);
        return 2;
    }

    try {
        if (o.list_reasons) return list_reasons(out, o.json);
        if (o.suggest > 0) return suggest_rule(o, defaults, in, out, err);
        if (!o.label.empty()) return label(o, in, out, err);
        if (o.job > 0) return diagnose_job(o, defaults, in, out, err);
        if (o.files.empty()) {
            if (defaults.stdin_is_terminal) {
                fmt::print(err, "faultdiag: no log given: pass a FILE, '-' for standard input, or --job JOBID (see --help)\n");
                return 2;
            }
            o.files.push_back("-");
        }
        return diagnose_files(o, in, out, err);
    } catch (const Failure& failure) {
        fmt::print(err, "faultdiag: {}\n", failure.message);
        return 1;
    } catch (const std::exception& error) {
        fmt::print(err, "faultdiag: {}\n", error.what());
        return 1;
    }
}

}  // namespace acme::faultdiag
