#include "acct/gpuacct/cli.hpp"

#include <grp.h>
#include <unistd.h>

#include <cctype>

#include <algorithm>
#include <array>
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

#include "acct/gpuacct/json_sacct.hpp"
#include "acct/gpuacct/report.hpp"
#include "acct/gpuacct/slurm_view.hpp"
#include "acct/gpuacct/views.hpp"
#include "acct/gpuacct/core/job_states.hpp"
#include "acct/gpuacct/core/prometheus_source.hpp"
#include "acct/gpuacct/core/sacct_filters.hpp"
#include "acct/gpuacct/core/yaml.hpp"
#include "common/slurm/jobs.hpp"
#include "common/store/spool.hpp"
#include "common/store/spool_gpu.hpp"
#include "acct/gpuacct/core/slurmdbd_set.hpp"
#include "common/slurm/accounting.hpp"
#include "common/slurm/job_type.hpp"
#include "acct/gpuacct/core/sacct_time.hpp"
#include "common/util/http_get.hpp"
#include "common/util/parse.hpp"
#include "common/util/version.hpp"
#include "common/util/cli_checks.hpp"

namespace acme::gpuacct {
namespace {

// Bad input: one line naming the thing and what to do; exit 1 with nothing on stdout.
struct Failure {
    std::string message;
};

struct Options {
    std::string jobs, users, accounts, partitions, states, types, start, end, format, spool_dir;
    std::string html, evalsched_db, source;
    bool spool_dir_given = false;  // --spool-dir on the command line or $ACME_SPOOL_DIR
    bool allocations = false, parsable2 = false, parsable = false, noheader = false, json = false;
    bool helpformat = false, allusers = false, failures = false, nodes = false, summary = false;
    double live = 0;  // --live: seconds between refreshes, 0: print once
    // sacct's options (issue 17): filters, output shapes and conventions.
    std::string nodelist, names, qos, gids, timelimit_min, timelimit_max, clusters, associations, units;
    std::string delimiter = "|";
    bool long_format = false, brief = false, duplicates = false, allclusters = false, truncate = false;
    bool noconvert = false, yaml = false, detail = false;
    std::string prometheus;                    // --prometheus as given
    std::optional<util::HttpUrl> prometheus_url;  // --prometheus, else $ACME_PROMETHEUS_URL; none: ask no Prometheus
};

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

struct Period {
    std::optional<double> start, end;
};

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

// --summary and --failures over months of jobs: aggregated as the spools stream, one job at a
// time, so a million jobs are never held (the other views list the jobs or need them all). The
// spools are read in parts side by side, one per core, each part into its own aggregator.
void stream_aggregates(const std::string& dir, const acct::ReadOptions& read, ViewKind kind,
                       const acct::JobFilter& filter, Context& context) {
    const size_t parts = std::max(1u, std::thread::hardware_concurrency());
    std::vector<acct::SummaryAggregator> summary(parts, acct::SummaryAggregator(context.now));
    std::vector<acct::FailureAggregator> failures(parts, acct::FailureAggregator(context.now));
    auto scan = acct::scan_spools(dir, read, parts, [&](size_t part, acct::Job& job, std::span<const acct::Diagnosis> diagnoses) {
        if (!acct::matches(job, filter)) return;
        if (kind == ViewKind::summary) summary[part].add(job);
        else failures[part].add(job, diagnoses);
    });
    context.data.nodes = std::move(scan.nodes);
    context.data.problems = std::move(scan.problems);
    for (size_t part = 1; part < parts; ++part) {
        summary[0].append(std::move(summary[part]));
        failures[0].append(std::move(failures[part]));
    }
    if (kind == ViewKind::summary) context.summary = summary[0].rows();
    else context.failures = failures[0].rows();
}

// Where the job records come from. Slurm's accounting is the normal path (any node, slurmdbd's
// PrivateData deciding what a user sees); node spools when a directory is named, when the site
// has no slurmdbd, or when it does not answer (then said once on stderr).
enum class Source { spool, slurmdbd };

std::string_view source_name(Source s) { return s == Source::slurmdbd ? "slurmdbd" : "spool"; }

// The runs slurmdbd holds, or nullopt when the spools are to be read instead.
std::optional<std::vector<slurm::AccountedRun>> accounted_runs(const Options& o, const Environment& env,
                                                               const std::vector<std::int64_t>& ids,
                                                               const Period& period, bool steps, std::ostream& err) {
    const bool forced = o.source == "slurmdbd";
    if (o.source == "spool" || (!forced && o.spool_dir_given)) return std::nullopt;
    std::string why_not;
    if (!env.ask_slurm) {
        if (forced) throw Failure{"--source slurmdbd: no slurm.conf found (set SLURM_CONF): use --source spool"};
        return std::nullopt;
    }
    if (!slurm::accounting_is_slurmdbd(why_not)) {
        if (forced) throw Failure{fmt::format("--source slurmdbd: {}: use --source spool", why_not)};
        return std::nullopt;
    }
    slurm::RunQuery query{ids, period.start.value_or(0), period.end.value_or(env.now), steps};
    auto runs = slurm::load_accounted_runs(query, why_not);
    if (!runs) {
        if (forced) throw Failure{fmt::format("--source slurmdbd: {}: use --source spool", why_not)};
        fmt::print(err, "gpuacct: note: {}: reading the node spools in {} instead\n", why_not, o.spool_dir);
    }
    return runs;
}

// -j with -S/-E: slurmdbd was asked for the ids only; the period still bounds them, as sacct's
// window does (ended at or after start, began at or before end).
bool outside(const acct::Job& job, const Period& period) {
    if (period.start && job.end > 0 && job.end < *period.start) return true;
    const double began = job.start > 0 ? job.start : job.submit;
    return period.end && began > *period.end;
}

// What to do when the spools cannot be read: they are root's on every node (0700/0600).
std::string spool_hint() {
    return ::geteuid() == 0 ? "give --spool-dir DIR or set ACME_SPOOL_DIR"
                            : "node spools are readable by root only: leave out --spool-dir to read Slurm's accounting "
                              "(slurmdbd), or run as root on the node";
}

// slurmdbd learns a job's GPU numbers only at its end (the record in AdminComment). For a job
// still running, the numbers so far come from the site's Prometheus when its URL is known (any
// node, any user), else from the node spools when this host can read them (a compute node, a
// single-host cluster); elsewhere the job is listed without them.
void add_running_summaries(const Options& o, const acct::ReadOptions& read, const acct::JobFilter& filter,
                           double now, acct::SpoolSet& data, std::ostream& err) {
    if (!read.summaries) return;
    std::vector<std::int64_t> running;
    std::vector<acct::prometheus::RunningJob> started;
    for (const auto& job : data.jobs) {
        if (!(job.end <= 0 || job.state.starts_with("RUNNING")) || !acct::matches(job, filter)) continue;
        if (std::any_of(data.summaries.begin(), data.summaries.end(), [&](const acct::GpuSummary& s) { return s.job_id == job.job_id; }))
            continue;
        running.push_back(job.job_id);
        started.push_back({job.job_id, job.start});
    }
    if (running.empty()) return;
    if (o.prometheus_url) {
        util::HttpClient client(*o.prometheus_url);
        std::string error;
        auto rows = acct::prometheus::running_summaries([&](const std::string& target) { return client.get(target); },
                                                        started, now, error);
        if (!error.empty()) {
            fmt::print(err, "gpuacct: warning: Prometheus at {}: {}; running jobs are listed without their GPU numbers\n",
                       o.prometheus_url->text, error);
            return;
        }
        for (auto& s : rows) data.summaries.push_back(std::move(s));
        return;
    }
    if (access(o.spool_dir.c_str(), R_OK | X_OK) != 0) return;
    acct::ReadOptions so_far;
    so_far.job_ids = running;
    so_far.full_jobs = false;
    so_far.node_rows = false;
    so_far.summaries = true;
    try {
        auto spool = acct::read_spools(o.spool_dir, so_far);
        for (auto& s : spool.summaries)
            if (s.so_far) data.summaries.push_back(std::move(s));
    } catch (const std::exception&) {
        // Only extra numbers for running jobs: the listing stands without them.
    }
}

// sacct's filters beyond JobFilter's, parsed before anything is read (bad input: no output).
struct SacctFilter {
    std::vector<std::string> nodes, names, qos, clusters;
    std::vector<std::int64_t> gids;
    std::vector<std::uint32_t> associations;
    std::optional<std::uint32_t> tl_min, tl_max;  // minutes; 0xffffffff: UNLIMITED
    bool any_accounting_only() const { return !qos.empty() || !gids.empty() || !associations.empty() || tl_min || tl_max; }
    bool any() const { return any_accounting_only() || !nodes.empty() || !names.empty() || !clusters.empty(); }
};

std::optional<std::uint32_t> time_limit_of(const std::string& text, const char* option) {
    if (text.empty()) return std::nullopt;
    std::string error;
    const auto v = acct::parse_time_limit(text, error);
    if (!v) throw Failure{fmt::format("{}: {}", option, error)};
    return *v;
}

SacctFilter sacct_filter_of(const Options& o) {
    SacctFilter f;
    if (!o.nodelist.empty()) {
        f.nodes = slurm::expand_hostlist(o.nodelist);
        if (f.nodes.empty()) throw Failure{fmt::format("Invalid node list for -N: \"{}\": give NODE[,NODE...] or a range n[1-3]", o.nodelist.substr(0, 64))};
    }
    f.names = util::split_list(o.names);
    f.qos = util::split_list(o.qos);
    for (const auto& g : util::split_list(o.gids)) {
        std::int64_t gid = -1;
        const auto [end, ec] = std::from_chars(g.data(), g.data() + g.size(), gid);
        if (ec != std::errc() || end != g.data() + g.size() || gid < 0) {
            group gr{}, *found = nullptr;
            std::array<char, 4096> buffer{};
            if (getgrnam_r(g.c_str(), &gr, buffer.data(), buffer.size(), &found) != 0 || !found)
                throw Failure{fmt::format("Invalid group: \"{}\": give a group name or GID", g.substr(0, 64))};
            gid = found->gr_gid;
        }
        f.gids.push_back(gid);
    }
    for (const auto& a : util::split_list(o.associations)) {
        std::uint32_t id = 0;
        const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), id);
        if (ec != std::errc() || end != a.data() + a.size())
            throw Failure{fmt::format("Invalid association id: \"{}\": give ASSOC_ID[,...] (sacctmgr show assoc format=id)", a.substr(0, 64))};
        f.associations.push_back(id);
    }
    f.tl_min = time_limit_of(o.timelimit_min, "--timelimit-min");
    f.tl_max = time_limit_of(o.timelimit_max, "--timelimit-max");
    if (!o.allclusters) f.clusters = util::split_list(o.clusters);
    // -M all is -L, as in sacct.
    if (std::find(f.clusters.begin(), f.clusters.end(), "all") != f.clusters.end()) f.clusters.clear();
    return f;
}

bool in_list(const std::vector<std::string>& list, const std::string& value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

// sacct's -N: a job that ran on any of the nodes; its node list is Slurm's (ranged) or the
// spools' rows.
bool ran_on(const acct::Job& job, const std::vector<std::string>& nodes) {
    std::vector<std::string> ran;
    if (!job.text().nodelist.empty()) ran = slurm::expand_hostlist(job.text().nodelist);
    for (const auto& n : job.nodes) ran.push_back(n.node);
    return std::any_of(ran.begin(), ran.end(), [&](const std::string& n) { return in_list(nodes, n); });
}

void apply_sacct_filter(const SacctFilter& f, const Options& o, const Environment& env, Source source, Context& context) {
    std::string local;
    // sacct lists only the local cluster's jobs unless -M or -L says otherwise.
    std::vector<std::string> clusters = f.clusters;
    if (clusters.empty() && !o.allclusters && source == Source::slurmdbd && env.ask_slurm) {
        local = slurm::local_cluster_name();
        if (!local.empty()) clusters.push_back(local);
    }
    if (source == Source::spool && !f.clusters.empty()) {
        // The spools are this cluster's: -M keeps them when it names this cluster.
        if (local.empty() && env.ask_slurm) local = slurm::local_cluster_name();
        if (!in_list(f.clusters, local)) context.jobs.clear();
        clusters.clear();
    }
    std::erase_if(context.jobs, [&](const acct::Job& job) {
        if (!f.nodes.empty() && !ran_on(job, f.nodes)) return true;
        if (!f.names.empty() && !in_list(f.names, job.text().name)) return true;
        const auto a = context.accounted.find(job.job_id);
        const AccountedExtra none;
        const AccountedExtra& x = a == context.accounted.end() ? none : a->second;
        if (source == Source::slurmdbd && !clusters.empty() && !in_list(clusters, x.cluster)) return true;
        if (!f.qos.empty() && !in_list(f.qos, x.qos)) return true;
        if (!f.gids.empty() && std::find(f.gids.begin(), f.gids.end(), x.gid) == f.gids.end()) return true;
        if (!f.associations.empty() &&
            std::find(f.associations.begin(), f.associations.end(), x.associd) == f.associations.end())
            return true;
        std::optional<std::uint32_t> limit;
        if (x.time_limit_s) limit = static_cast<std::uint32_t>(*x.time_limit_s / 60);
        return !acct::time_limit_matches(limit, x.unlimited, f.tl_min, f.tl_max);
    });
}

// -T: a job's start and end cut to the period, as sacct's --truncate (Elapsed follows).
void truncate_to(const Period& period, double now, std::vector<acct::Job>& jobs) {
    for (auto& job : jobs) {
        if (period.start && job.start > 0 && job.start < *period.start) job.start = *period.start;
        const double end = period.end.value_or(now);
        if (period.end && job.start > 0 && (job.end <= 0 || job.end > end)) job.end = end;
    }
}

// --detail: the GPM activity of the spools' GPUs (the job view's only extra read).
void add_spool_gpm(const std::string& dir, Context& context) {
    for (const auto& job : context.jobs)
        for (const auto& n : job.nodes) {
            try {
                auto db = store::open_spool_read_only(store::spool_path(dir, n.node));
                for (const auto& g : store::job_gpu_summaries(db, job.job_id))
                    if (g.gpm_sm_avg || g.gpm_tensor_avg || g.gpm_dram_bw_avg)
                        context.gpm[{job.job_id, n.node, g.gpu}] = {g.gpm_sm_avg, g.gpm_tensor_avg, g.gpm_dram_bw_avg};
            } catch (const std::exception&) {
                // Read already, or skipped with a warning: the view stands without GPM.
            }
        }
}

Context load(const Options& o, const Environment& env, ViewKind kind, bool everything, std::ostream& err,
             const std::vector<std::int64_t>& ids, const Period& period, const acct::JobFilter& filter,
             Source* source_out = nullptr) {
    acct::ReadOptions read;
    read.start = period.start;
    read.end = period.end;
    read.job_ids = ids;
    read.full_jobs = everything || kind == ViewKind::jobs || !filter.users.empty() || !filter.accounts.empty() ||
                     !filter.partitions.empty();
    read.node_rows = everything || kind == ViewKind::jobs || kind == ViewKind::nodes;
    read.summaries = everything || kind == ViewKind::jobs;
    read.steps = kind == ViewKind::jobs && !o.allocations && !everything;
    read.diagnoses = everything || kind != ViewKind::summary;
    const SacctFilter sacct = sacct_filter_of(o);
    if (sacct.any()) read.full_jobs = read.node_rows = true;
    read.events = everything || kind == ViewKind::nodes || o.detail || o.long_format;
    Context context;
    context.now = env.now;
    context.units.unit = o.units.empty() ? (o.noconvert ? 'n' : 0) : static_cast<char>(std::toupper(static_cast<unsigned char>(o.units[0])));
    context.allocations = o.allocations;
    // The steps carry seff's TotalCPU and MaxRSS: fetch them only for a view that shows them.
    std::string format = o.format;
    for (auto& c : format) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool seff_fields = format.empty() || format.find("cpu") != std::string::npos ||
                             format.find("rss") != std::string::npos || format.find("memeff") != std::string::npos;
    const bool steps = everything || o.json || (kind == ViewKind::jobs && seff_fields);
    const auto runs = accounted_runs(o, env, ids, period, steps, err);
    const Source source = runs ? Source::slurmdbd : Source::spool;
    if (source_out) *source_out = source;
    if (source == Source::spool && sacct.any_accounting_only())
        throw Failure{"-q, -g, -k, -K and -x need Slurm's accounting (slurmdbd): the node spools do not record "
                      "QOS, group, time limit or association: leave out --spool-dir/--source spool"};
    if (runs) {
        // The newest run of each job speaks for it (as spool_set_from_accounting takes it).
        std::unordered_map<std::int64_t, std::uint64_t> newest;
        for (const auto& r : *runs) {
            const auto seen = newest.find(r.job_id);
            if (seen != newest.end() && seen->second > r.db_index) continue;
            newest[r.job_id] = r.db_index;
            AccountedExtra x;
            if (r.timelimit_min) x.time_limit_s = *r.timelimit_min * 60.0;
            x.unlimited = r.timelimit_unlimited;
            x.qos = r.qos;
            x.cluster = r.cluster;
            x.gid = r.gid;
            x.associd = r.associd;
            context.accounted[r.job_id] = std::move(x);
        }
        if (o.detail || o.long_format) context.gpm = acct::gpm_from_accounting(*runs);
    }
    // slurmdbd's rows are held whole anyway: --summary and --failures aggregate them in memory.
    const bool streamed = !runs && !everything && !sacct.any() && (kind == ViewKind::summary || kind == ViewKind::failures);
    if (runs) {
        std::vector<std::string> warnings;
        context.data = acct::spool_set_from_accounting(*runs, read, warnings);
        for (const auto& w : warnings) fmt::print(err, "gpuacct: warning: {}\n", w);
        // sacct -D: a row per run, each with its own record's GPU figures. The job view
        // (--detail) stays one block per job.
        if (o.duplicates && kind == ViewKind::jobs && !everything && !o.detail) {
            context.per_run = true;
            context.data.jobs.clear();
            // Each run's diagnoses numbered as its row (runs_from_accounting says why).
            context.data.diagnoses.clear();
            for (auto& r : acct::runs_from_accounting(*runs)) {
                for (auto& d : r.diagnoses) context.data.diagnoses.push_back(std::move(d));
                if (!r.gpus.empty()) {
                    auto use = acct::gpu_use_by_job(r.gpus);
                    context.run_use[{r.job.job_id, r.job.restarts}] = std::move(use.begin()->second);
                }
                context.data.jobs.push_back(std::move(r.job));
            }
        }
        add_running_summaries(o, read, filter, env.now, context.data, err);
        if (!ids.empty()) std::erase_if(context.data.jobs, [&](const acct::Job& job) { return outside(job, period); });
    } else {
        try {
            if (streamed) stream_aggregates(o.spool_dir, read, kind, filter, context);
            else context.data = acct::read_spools(o.spool_dir, read);
        } catch (const std::runtime_error& error) {
            throw Failure{fmt::format("{}: {}", error.what(), spool_hint())};
        }
        // Every file skipped is not an empty cluster: say so and fail instead of printing an
        // empty table (a user pointed at root's spools, most often).
        if (context.data.nodes.empty() && !context.data.problems.empty())
            throw Failure{fmt::format("could read none of the {} spool file(s) in {} ({}): {}", context.data.problems.size(),
                                      o.spool_dir, context.data.problems.front(), spool_hint())};
    }
    for (const auto& problem : context.data.problems) fmt::print(err, "gpuacct: warning: skipped {}\n", problem);
    std::erase_if(context.data.jobs, [&](const acct::Job& job) { return !acct::matches(job, filter); });
    context.jobs = std::move(context.data.jobs);
    context.data.jobs.clear();
    apply_sacct_filter(sacct, o, env, source, context);
    if (o.truncate) truncate_to(period, env.now, context.jobs);
    if (source == Source::spool && (o.detail || o.long_format)) add_spool_gpm(o.spool_dir, context);
    if (env.ask_slurm && (everything || kind == ViewKind::nodes)) context.slurm_nodes = slurm_nodes(err);
    if (source == Source::spool && env.ask_slurm && (everything || kind == ViewKind::jobs))
        check_accounting(context.jobs, ids, period.start.value_or(0), period.end.value_or(env.now), err);
    return context;
}

int report(const Options& o, const Environment& env, std::ostream& out, std::ostream& err) {
    const auto ids = o.jobs.empty() ? std::vector<std::int64_t>() : parse_job_ids(o.jobs);
    const Period period = period_of(o, ids, env.now);
    const auto filter = filter_of(o, env);
    Source source = Source::spool;
    Context context = load(o, env, ViewKind::jobs, true, err, ids, period, filter, &source);
    ReportInput input;
    input.source = std::string(source_name(source));
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
    const auto ids = o.jobs.empty() ? std::vector<std::int64_t>() : parse_job_ids(o.jobs);
    const Period period = period_of(o, ids, env.now);
    const auto filter = filter_of(o, env);
    Source source = Source::spool;
    const auto thresholds = o.detail || o.long_format ? detail_thresholds(env) : acct::DetailThresholds{};
    Context context = load(o, env, kind, false, err, ids, period, filter, &source);
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
    const Table table = build_view(kind, context);
    if (o.json || o.yaml) {
        auto json = render_json(table, render);
        json["source"] = source_name(source);
        json["period"] = period_json(period);
        json["skipped"] = context.data.problems;
        // The jobs in sacct --json's layout beside gpuacct's rows (kept for existing scripts).
        if (kind == ViewKind::jobs) json.update(sacct_jobs_json(context, table, json["rows"]));
        if (o.yaml) out << acct::to_yaml(json);
        else out << json.dump(2) << '\n';
    } else {
        out << render_text(table, render);
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
    CLI::App app{"gpuacct: sacct-style reports of GPU use, failures and node health from the acme node spools",
                 "gpuacct"};
    app.set_help_flag("-h,--help", "print this help and exit");
    app.set_version_flag("-V,--version", acme::version_line("gpuacct"), "print the version and exit");
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
    app.add_flag("--detail", o.detail, "with -j: each job as jobstats shows it (per node and GPU, notes)");
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

    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend());
        app.parse(std::move(reversed));
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e, out, err);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e, out, err);
    } catch (const CLI::ParseError& e) {
        fmt::print(err, "gpuacct: error: {}: see gpuacct --help\n", e.what());
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
    if (o.source == "slurmdbd" && spool_dir->count() > 0) {
        fmt::print(err, "gpuacct: error: --spool-dir reads node spools, --source slurmdbd does not: give one\n");
        return 1;
    }
    try {
        if (*report_cmd) return report(o, env, out, err);
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
