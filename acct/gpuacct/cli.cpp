#include "acct/gpuacct/cli.hpp"

#include <cctype>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <ctime>
#include <fstream>
#include <ostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "acct/gpuacct/goodput_cli.hpp"
#include "acct/gpuacct/json_sacct.hpp"
#include "acct/gpuacct/report.hpp"
#include "acct/gpuacct/views.hpp"
#include "acct/gpuacct/core/job_states.hpp"
#include "acct/gpuacct/core/load.hpp"
#include "acct/gpuacct/core/sacct_time.hpp"
#include "acct/gpuacct/core/yaml.hpp"
#include "common/slurm/job_type.hpp"
#include "common/util/cli_checks.hpp"
#include "common/util/http_get.hpp"
#include "common/util/parse.hpp"
#include "common/util/version.hpp"

namespace acme::gpuacct {
namespace {

// What the command line asked for, and its one-line complaint: core's (core/query_options.hpp).
using acct::Failure;
using acct::Period;
using Options = acct::QueryOptions;

std::vector<std::int64_t> parse_job_ids(const std::string& list) {
    std::vector<std::int64_t> ids;
    for (const auto& item : util::split_list(list)) {
        // sacct accepts JOBID.STEP; the job is what a spool records.
        const std::string id = item.substr(0, item.find('.'));
        std::int64_t value = 0;
        const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), value);
        if (id.empty() || ec != std::errc() || end != id.data() + id.size() || value <= 0)
            throw Failure{fmt::format("Invalid job id: \"{}\": give JOBID[,JOBID...]", item.substr(0, 64))};
        ids.push_back(value);
    }
    if (ids.empty()) throw Failure{"No job id given to --jobs: give JOBID[,JOBID...]"};
    return ids;
}

double parse_time(const std::string& text, const char* option, double now) {
    std::string error;
    const auto t = acct::parse_sacct_time(text, static_cast<std::time_t>(now), error);
    if (!t) throw Failure{fmt::format("Invalid time for {}: \"{}\": {}", option, text.substr(0, 64), error)};
    return static_cast<double>(*t);
}

ViewKind view_of(const Options& o) {
    if (o.failures) return ViewKind::failures;
    if (o.nodes) return ViewKind::nodes;
    if (o.summary) return ViewKind::summary;
    return ViewKind::jobs;
}

// sacct: without -j the period starts at 00:00 today and ends now; with -j it is unbounded
// unless given.
Period period_of(const Options& o, const std::vector<std::int64_t>& ids, double now) {
    Period p;
    if (!o.start.empty()) p.start = parse_time(o.start, "--starttime", now);
    else if (ids.empty()) p.start = parse_time("today", "--starttime", now);
    if (!o.end.empty()) p.end = parse_time(o.end, "--endtime", now);
    else if (ids.empty()) p.end = now;
    if (p.start && p.end && *p.start > *p.end)
        throw Failure{fmt::format("Start time ({}) requested is after end time ({}): fix -S or -E",
                                  acct::format_sacct_time(*p.start), acct::format_sacct_time(*p.end))};
    return p;
}

acct::JobFilter filter_of(const Options& o, const Environment& env) {
    acct::JobFilter f;
    f.users = util::split_list(o.users);
    if (f.users.empty() && !env.is_root && !o.allusers && !env.user.empty()) f.users.push_back(env.user);
    f.accounts = util::split_list(o.accounts);
    f.partitions = util::split_list(o.partitions);
    if (!o.states.empty()) {
        std::string error;
        auto states = acct::parse_state_list(o.states, error);
        if (!states) throw Failure{error};
        f.states = *states;
    }
    for (const auto& t : util::split_list(o.types)) {
        const auto type = acct::parse_job_type(t);
        if (!type) throw Failure{fmt::format("Invalid job type: \"{}\" (valid: pretrain, sft, eval, debug, mllm, other)", t.substr(0, 64))};
        f.types.emplace_back(*type);
    }
    return f;
}

nlohmann::json period_json(const Period& p) {
    return {{"start", p.start ? nlohmann::json(static_cast<std::int64_t>(*p.start)) : nlohmann::json()},
            {"end", p.end ? nlohmann::json(static_cast<std::int64_t>(*p.end)) : nlohmann::json()}};
}

// The jobs, period and filter the options name, with the environment's clock: what load reads
// besides the options. Bad input throws here, before anything is read.
acct::LoadRequest request_of(const Options& o, const Environment& env, ViewKind kind, bool everything) {
    acct::LoadRequest r;
    r.kind = kind;
    r.everything = everything;
    r.ids = o.jobs.empty() ? std::vector<std::int64_t>() : parse_job_ids(o.jobs);
    r.period = period_of(o, r.ids, env.now);
    r.filter = filter_of(o, env);
    r.now = env.now;
    r.ask_slurm = env.ask_slurm;
    return r;
}

int report(const Options& o, const Environment& env, std::ostream& out, std::ostream& err) {
    const acct::LoadRequest request = request_of(o, env, ViewKind::jobs, true);
    const Period& period = request.period;
    acct::Source source = acct::Source::spool;
    Context context = acct::load(o, request, err, &source);
    ReportInput input;
    input.source = std::string(acct::source_name(source));
    input.period = period_json(period);
    input.generated = env.now;
    input.spool_dir = o.spool_dir;
    for (auto kind : {ViewKind::failures, ViewKind::nodes, ViewKind::summary}) {
        auto json = render_json(build_view(kind, context), {});
        json["period"] = input.period;
        input.views.push_back(std::move(json));
    }
    input.util = acct::util_by_type(context.jobs, context.data.summaries, env.now);
    constexpr std::size_t kTopWasters = 50;
    input.by_user = acct::waste_by(acct::WasteKey::user, context.jobs, context.data.summaries, env.now, kTopWasters);
    input.by_account = acct::waste_by(acct::WasteKey::account, context.jobs, context.data.summaries, env.now, kTopWasters);
    input.xids = acct::xid_summary(context.data.events, period.start.value_or(0), period.end.value_or(env.now), 48);
    if (!o.evalsched_db.empty()) input.trials = load_trials(o.evalsched_db, err);
    if (context.goodput) input.goodput = acct::cluster_goodput_json(*context.goodput);
    const std::string html = render_report(input);
    std::ofstream file(o.html, std::ios::binary | std::ios::trunc);
    if (!(file << html) || !file.flush())
        throw Failure{fmt::format("cannot write {}: check the path and its directory", o.html)};
    fmt::print(out, "gpuacct: report written to {}\n", o.html);
    return 0;
}

// sacct -l's fields that gpuacct has (sacct's order), then what the GPUs did.
constexpr std::string_view kLongFormat =
    "JobID,JobName,Partition,MaxRSS,AllocCPUS,Elapsed,State,ExitCode,ReqMem,TotalCPU,User,Account,Type,Submit,Start,End,"
    "NNodes,NodeList,AllocGPUS,GPUHours,GPUUtil,GPUUtilMax,GPUMemMax,GPUMemTotal,GPUEnergy,GPUPowerAvg,XIDs,Verdict,"
    "Reason";

std::vector<acct::FieldSpec> all_fields(const Table& shape) {
    std::vector<acct::FieldSpec> out;
    for (const auto& f : shape.fields) out.push_back({f.name, std::nullopt});
    return out;
}

// The job view's thresholds: [detail] of gpuacct.toml ($ACME_GPUACCT_CONF, else the installed
// one); no file is the defaults, a bad one is an error naming it.
acct::DetailThresholds detail_thresholds(const Environment& env) {
    if (env.config_path.empty()) return {};
    std::ifstream file(env.config_path);
    if (!file) {
        if (env.config_given) throw Failure{fmt::format("cannot read {} (ACME_GPUACCT_CONF): fix the path or unset it", env.config_path)};
        return {};
    }
    std::stringstream text;
    text << file.rdbuf();
    std::string error;
    const auto t = acct::parse_detail_config(text.str(), error);
    if (!t) throw Failure{fmt::format("{}: {}", env.config_path, error)};
    return *t;
}

// `running`, when given, is set when a job listed has not ended (what --live waits for).
int query(const Options& o, const Environment& env, std::ostream& out, std::ostream& err, bool* running = nullptr) {
    const ViewKind kind = view_of(o);
    const Table shape = view_shape(kind);
    if (o.helpformat) {
        out << render_helpformat(shape);
        return 0;
    }
    RenderOptions render;
    render.parsable2 = o.parsable2;
    render.parsable = o.parsable;
    render.noheader = o.noheader;
    render.delimiter = o.delimiter;
    std::string format = o.format;
    std::string lower = format;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // sacct: -o wins over -b and -l; -o ALL is every field the view has.
    if (lower == "all") format.clear();
    if (format.empty() && lower != "all" && kind == ViewKind::jobs) {
        if (o.brief) format = "JobID,State,ExitCode";
        else if (o.long_format) format = std::string(kLongFormat);
    }
    if (lower == "all") render.format = all_fields(shape);
    if (!format.empty()) {
        std::string error;
        const auto names = field_names(shape);
        auto spec = acct::parse_format_spec(format, names, error);
        if (!spec) throw Failure{fmt::format("{} (gpuacct{} --helpformat lists the fields)", error,
                                             kind == ViewKind::jobs ? "" : kind == ViewKind::failures ? " --failures"
                                                                         : kind == ViewKind::nodes  ? " --nodes"
                                                                                                    : " --summary")};
        render.format = *spec;
    }
    acct::LoadRequest request = request_of(o, env, kind, false);
    // A listing of Slurm's fields alone (-P/-p, -o) reads no job's record: only the job view,
    // JSON, -D's per-run figures and the note under a table need more than -o names.
    if (kind == ViewKind::jobs && !render.format.empty() && (o.parsable || o.parsable2) && !o.detail && !o.long_format &&
        !o.json && !o.yaml && !o.duplicates)
        request.records = jobs_record_use(render.format);
    const auto& ids = request.ids;
    const Period& period = request.period;
    acct::Source source = acct::Source::spool;
    const auto thresholds = o.detail || o.long_format ? detail_thresholds(env) : acct::DetailThresholds{};
    Context context = acct::load(o, request, err, &source);
    if (running)
        // A job whose end is known but whose final state is not yet (the sampler's summary is
        // written before the epilog's record) is not settled: --live waits up to
        // kSettleSeconds for the state, so its last frame says how the job ended.
        *running = std::any_of(context.jobs.begin(), context.jobs.end(), [&](const acct::Job& job) {
            constexpr double kSettleSeconds = 30;
            return job.end <= 0 || (job.state.empty() && env.now - static_cast<double>(job.end) < kSettleSeconds);
        });
    const bool machine = o.parsable || o.parsable2 || o.json || o.yaml;
    // --detail alone is the job view; -l with -j prints sacct's long listing and the view under it.
    if (o.detail && kind == ViewKind::jobs) {
        if (context.jobs.empty() && !ids.empty()) throw Failure{fmt::format("no job {} in the records read (or not yours to see)", o.jobs)};
        out << render_details(context, thresholds);
        return 0;
    }
    if (o.json || o.yaml) {
        const Table table = build_view(kind, context);
        auto json = render_json(table, render);
        json["source"] = acct::source_name(source);
        json["period"] = period_json(period);
        json["skipped"] = context.data.problems;
        // The jobs in sacct --json's layout beside gpuacct's rows (kept for existing scripts).
        if (kind == ViewKind::jobs) json.update(sacct_jobs_json(context, table, json["rows"]));
        if (o.yaml) out << acct::to_yaml(json);
        else out << json.dump(2) << '\n';
    } else {
        if (kind == ViewKind::jobs) {
            // Printed as the rows are made: a listing of every job is never held whole.
            TextStream stream(shape, render, out);
            jobs_rows(context, stream.wanted(), [&](std::vector<Cell>&& row) { stream.add(std::move(row)); });
            stream.finish();
        } else {
            out << render_text(build_view(kind, context), render);
        }
        // A record some node never added to: said under the table, where a reader looks.
        if (kind == ViewKind::jobs && !o.parsable && !o.parsable2)
            for (const auto& job : context.jobs)
                if (!job.text().missing_nodes.empty())
                    fmt::print(out, "note: job {}: no acme record from node(s) {} (their epilog never reported)\n",
                               job.job_id, job.text().missing_nodes);
        if (o.long_format && !ids.empty() && kind == ViewKind::jobs && !machine && !o.noheader && !context.jobs.empty()) {
            // With -D the listing has a row per run; the job view is one block per job, its
            // newest run speaking for it.
            if (context.per_run) {
                std::vector<acct::Job> newest;
                for (size_t i = 0; i < context.jobs.size(); ++i)
                    if (i + 1 == context.jobs.size() || context.jobs[i + 1].job_id != context.jobs[i].job_id)
                        newest.push_back(std::move(context.jobs[i]));
                context.jobs = std::move(newest);
            }
            out << '\n' << render_details(context, thresholds);
        }
    }
    return 0;
}

// --live: the listing again every o.live seconds, like watch(1), until every job listed has
// ended (the last frame shows how it ended) or the user interrupts. Each frame is built whole
// before the screen is cleared, so a slow slurmdbd never shows a blank terminal.
int watch(const Options& o, const Environment& env, std::ostream& out, std::ostream& err) {
    if (o.jobs.empty()) throw Failure{"--live watches the jobs named with -j: give -j JOBID"};
    for (;;) {
        Environment now = env;
        now.now = static_cast<double>(std::time(nullptr));
        std::ostringstream frame;
        bool running = false;
        query(o, now, frame, err, &running);
        if (env.terminal) out << "\033[H\033[2J";
        const std::time_t t = static_cast<std::time_t>(now.now);
        std::tm local{};
        localtime_r(&t, &local);
        fmt::print(out, "Every {:g}s: gpuacct -j {}{}    {:%Y-%m-%dT%H:%M:%S}\n\n", o.live, o.jobs,
                   running ? "" : " (ended)", local);
        out << frame.str() << std::flush;
        if (!running) return 0;
        std::this_thread::sleep_for(std::chrono::duration<double>(o.live));
    }
}

}  // namespace

int run(const std::vector<std::string>& args, const Environment& env, std::ostream& out, std::ostream& err) {
    Options o;
    o.spool_dir = env.spool_dir;
    CLI::App app{"gpuacct: sacct-style reports of GPU use, failures and node health, from Slurm's accounting (slurmdbd) or the acme node spools",
                 "gpuacct"};
    app.set_help_flag("-h,--help", "print this help and exit");
    app.set_version_flag("-V,--version", acme::version_line("gpuacct"), "print the version and exit");
    app.formatter(std::make_shared<acme::util::HelpFormatter>());
    // As sacct (getopt): an option given twice takes its last value.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("-j,--jobs", o.jobs, "JOBID[,JOBID...]: only these jobs (no default period)");
    app.add_option("-u,--user,--uid", o.users, "USER[,USER...]: only their jobs");
    app.add_flag("-a,--allusers", o.allusers, "every user's jobs (the default for root)");
    app.add_option("-A,--accounts", o.accounts, "ACCOUNT[,ACCOUNT...]");
    app.add_option("-r,--partition", o.partitions, "PARTITION[,PARTITION...]");
    app.add_option("-s,--state", o.states, "STATE[,STATE...]: final states, sacct's names or codes (CD, F, TO, NF, OOM, CA ...)");
    app.add_option("--type", o.types, "TYPE[,TYPE...]: pretrain, sft, eval, debug, mllm, other");
    app.add_option("-S,--starttime", o.start, "period start, sacct's formats (default: 00:00 today, none with -j)");
    app.add_option("-E,--endtime", o.end, "period end, sacct's formats (default: now)");
    app.add_flag("-X,--allocations", o.allocations, "jobs only, no step lines");
    app.add_option("-o,--format", o.format, "FIELD[%WIDTH],...: the fields to show (-e lists them)");
    app.add_flag("-P,--parsable2", o.parsable2, "fields separated by '|', no trailing '|'");
    app.add_flag("-p,--parsable", o.parsable, "fields separated by '|', with a trailing '|'");
    app.add_flag("-n,--noheader", o.noheader, "no header line");
    app.add_flag("--json", o.json, "the rows as JSON (man/gpuacct.1; schema: gpuacct.schema.json)");
    app.add_flag("-e,--helpformat", o.helpformat, "list the view's fields");
    // sacct's options (man gpuacct(1), SACCT OPTIONS).
    app.add_option("-N,--nodelist", o.nodelist, "NODE[,NODE...] or n[1-3]: jobs that ran on any of these nodes");
    app.add_option("--name", o.names, "NAME[,NAME...]: jobs with these names (exact)");
    app.add_flag("-l,--long", o.long_format, "sacct's long listing; with -j also the job view (--detail)");
    app.add_flag("-b,--brief", o.brief, "JobID, State and ExitCode only");
    app.add_option("--units", o.units, "K, M, G, T or P: memory in this unit")
        ->check(CLI::IsMember({"K", "M", "G", "T", "P", "k", "m", "g", "t", "p"}));
    app.add_flag("--noconvert", o.noconvert, "memory in the unit it was recorded in (--units wins)");
    app.add_flag("-D,--duplicates", o.duplicates, "every run of a requeued job, one row each (slurmdbd; spools keep the last run)");
    app.add_flag("-L,--allclusters", o.allclusters, "jobs of every cluster slurmdbd holds (default: this one)");
    app.add_option("-M,--clusters", o.clusters, "CLUSTER[,CLUSTER...] or all: jobs of these clusters");
    app.add_option("-q,--qos", o.qos, "QOS[,QOS...]: jobs that ran under these QOS (slurmdbd)");
    app.add_option("-g,--gid,--group", o.gids, "GROUP[,GROUP...]: names or GIDs (slurmdbd)");
    app.add_option("-k,--timelimit-min", o.timelimit_min, "TIME: jobs with this time limit, or the range's minimum with -K (slurmdbd)");
    app.add_option("-K,--timelimit-max", o.timelimit_max, "TIME: the time limit range's maximum, with -k (slurmdbd)");
    app.add_option("-x,--associations", o.associations, "ASSOC_ID[,...]: jobs of these association ids (slurmdbd)");
    app.add_flag("-T,--truncate", o.truncate, "cut start and end times to -S and -E");
    app.add_option("--delimiter", o.delimiter, "CHARACTERS: the separator of -p and -P (default '|')");
    app.add_flag("--yaml", o.yaml, "what --json gives, as YAML");
    app.add_flag("--detail", o.detail, "with -j (needed): each job as jobstats shows it (per node and GPU, notes)");
    bool goodput = false;
    app.add_flag("--goodput", goodput, "with -j (needed): each job's goodput, its requeues included: ETTR, queued, kept, redone, recovery (slurmdbd)");
    auto* failures = app.add_flag("--failures", o.failures, "failures by category and reason (Table 3 order)");
    auto* nodes = app.add_flag("--nodes", o.nodes, "per node XID/ECC counts and failures attributed");
    auto* summary = app.add_flag("--summary", o.summary, "the workload characterization for the period");
    failures->excludes(nodes)->excludes(summary);
    nodes->excludes(summary);
    app.add_option("--live", o.live, "print the -j jobs again every SECONDS until they have all ended, like watch(1)")
        ->expected(0, 1)
        ->default_str("2")
        ->check(util::number_between(0.5, 3600.0));
    auto* spool_dir = app.add_option("--spool-dir", o.spool_dir,
                                     "read node spools: every <node>.db in DIR ($ACME_SPOOL_DIR), not slurmdbd")
                          ->capture_default_str();
    auto* prometheus = app.add_option("--prometheus", o.prometheus,
                                      "URL of the site's Prometheus ($ACME_PROMETHEUS_URL): running jobs' GPU numbers so far");
    app.add_option("--source", o.source, "slurmdbd or spool (default: slurmdbd where Slurm accounting runs on it)")
        ->check(CLI::IsMember({"slurmdbd", "spool"}));
    auto* report_cmd = app.add_subcommand("report", "write a self-contained HTML report");
    report_cmd->add_option("--html", o.html, "the HTML file to write")->required();
    report_cmd->add_option("--evalsched-db", o.evalsched_db, "evalschedd's state file, for the trial timeline");
    report_cmd->fallthrough();
    auto* goodput_cmd = app.add_subcommand("goodput", "the period's GPU-hours and where they went, by cause (slurmdbd or --spool-dir; -S, -E, -u, -A, -r)");
    goodput_cmd->fallthrough();

    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend());
        app.parse(std::move(reversed));
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e, out, err);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e, out, err);
    } catch (const CLI::ParseError& e) {
        fmt::print(err, "gpuacct: error: {}: see gpuacct --help\n", util::usage_problem(e));
        return 1;
    }
    o.spool_dir_given = env.spool_dir_given || spool_dir->count() > 0;
    // The flag wins over the environment; an empty flag asks no Prometheus.
    const bool flag = prometheus->count() > 0;
    const std::string url = flag ? o.prometheus : env.prometheus_url;
    if (!url.empty()) {
        std::string why;
        o.prometheus_url = util::parse_http_url(url, why);
        if (!o.prometheus_url) {
            fmt::print(err, "gpuacct: error: {} \"{}\": {}: give http://HOST:PORT of the site's Prometheus\n",
                       flag ? "--prometheus" : "ACME_PROMETHEUS_URL", url.substr(0, 200), why);
            return 1;
        }
    }
    // The job view is per job (jobstats JOBID): without -j it printed every job of the period.
    if (o.detail && o.jobs.empty()) {
        fmt::print(err, "gpuacct: error: --detail shows the jobs given with -j: add -j JOBID[,JOBID...]\n");
        return 1;
    }
    if (goodput && o.jobs.empty()) {
        fmt::print(err, "gpuacct: error: --goodput shows the jobs given with -j: add -j JOBID[,JOBID...]\n");
        return 1;
    }
    if (o.source == "slurmdbd" && spool_dir->count() > 0) {
        fmt::print(err, "gpuacct: error: --spool-dir reads node spools, --source slurmdbd does not: give one\n");
        return 1;
    }
    try {
        if (*report_cmd) return report(o, env, out, err);
        if (*goodput_cmd) {
            const Period period = period_of(o, {}, env.now);
            const acct::JobFilter filter = filter_of(o, env);
            return print_cluster_goodput({period.start.value_or(0), period.end.value_or(env.now), filter.users, filter.accounts,
                                          filter.partitions, env.now, env.ask_slurm, o.spool_dir_given || o.source == "spool", o.json,
                                          o.spool_dir, o.source == "slurmdbd"},
                                         out, err);
        }
        if (goodput)
            return print_goodput({parse_job_ids(o.jobs), env.now, env.ask_slurm, o.spool_dir_given || o.source == "spool", o.json},
                                 out, err);
        if (o.live > 0) return watch(o, env, out, err);
        return query(o, env, out, err);
    } catch (const Failure& failure) {
        fmt::print(err, "gpuacct: error: {}\n", failure.message);
        return 1;
    } catch (const std::exception& error) {
        fmt::print(err, "gpuacct: error: {}\n", error.what());
        return 1;
    }
}

}  // namespace acme::gpuacct
