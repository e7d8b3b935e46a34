#include "acct/gpuacct/core/load.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "acct/gpuacct/core/goodput_runs.hpp"
#include "acct/gpuacct/core/goodput_spool.hpp"
#include "acct/gpuacct/core/job_states.hpp"
#include "acct/gpuacct/core/prometheus_source.hpp"
#include "acct/gpuacct/core/sacct_selection.hpp"
#include "acct/gpuacct/core/slurm_view.hpp"
#include "acct/gpuacct/core/slurmdbd_set.hpp"
#include "common/slurm/accounting.hpp"
#include "common/store/spool.hpp"
#include "common/store/spool_gpu.hpp"

namespace acme::acct {
namespace {

// --summary and --failures over months of jobs: aggregated as the spools stream, one job at a
// time, so a million jobs are never held (the other views list the jobs or need them all). The
// spools are read in parts side by side, one per core, each part into its own aggregator.
void stream_aggregates(const std::string& dir, const ReadOptions& read, ViewKind kind,
                       const JobFilter& filter, Context& context) {
    const size_t parts = std::max(1u, std::thread::hardware_concurrency());
    std::vector<SummaryAggregator> summary(parts, SummaryAggregator(context.now));
    std::vector<FailureAggregator> failures(parts, FailureAggregator(context.now));
    auto scan = scan_spools(dir, read, parts, [&](size_t part, Job& job, std::span<const Diagnosis> diagnoses) {
        if (!matches(job, filter)) return;
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

// The runs slurmdbd holds, handed over a job at a time (slurm::for_each_accounted_job); false
// when the spools are to be read instead.
bool accounted_runs(const QueryOptions& o, const LoadRequest& r, bool steps, bool qos, std::ostream& err,
                    const std::function<void(size_t)>& count,
                    const std::function<void(std::span<const slurm::AccountedRun>)>& each) {
    const bool forced = o.source == "slurmdbd";
    if (o.source == "spool" || (!forced && o.spool_dir_given)) return false;
    std::string why_not;
    if (!r.ask_slurm) {
        if (forced) throw Failure{"--source slurmdbd: no slurm.conf found (set SLURM_CONF): use --source spool"};
        return false;
    }
    if (!slurm::accounting_is_slurmdbd(why_not)) {
        if (forced) throw Failure{fmt::format("--source slurmdbd: {}: use --source spool", why_not)};
        return false;
    }
    slurm::RunQuery query{r.ids, r.period.start.value_or(0), r.period.end.value_or(r.now), steps, qos};
    if (slurm::for_each_accounted_job(query, count, each, why_not)) return true;
    if (forced) throw Failure{fmt::format("--source slurmdbd: {}: use --source spool", why_not)};
    fmt::print(err, "gpuacct: note: {}: reading the node spools in {} instead\n", why_not, o.spool_dir);
    return false;
}

// Whether --summary or --failures needs a job's ACME1 records (decoding them is most of the
// cost of a job read from slurmdbd): --summary counts a job's GPUs from its TRES, and from the
// record's GPU ids only when the TRES has none; --failures counts a run that failed, which
// needs the diagnoses only of a job that ended badly or ran more than once (a requeue chain's
// earlier runs failed). -N looks at the nodes the records name too.
bool needs_records(ViewKind kind, const SacctFilter& sacct, std::span<const slurm::AccountedRun* const> runs) {
    const slurm::AccountedRun& newest = *runs.back();
    if (!sacct.nodes.empty()) return true;
    if (kind == ViewKind::summary) return static_cast<int>(newest.gpus.value_or(0)) <= 0;
    return runs.size() > 1 || state_is_failure(newest.state);
}

// Whether the jobs view needs this job's records (RecordUse); -N looks at the nodes they name.
bool needs_records(const RecordUse& use, const SacctFilter& sacct, const slurm::AccountedRun& newest) {
    return use.always || !sacct.nodes.empty() || (use.nodes && newest.num_nodes <= 0) ||
           (use.nodelist && newest.nodes.empty()) || (use.gpus && static_cast<int>(newest.gpus.value_or(0)) <= 0);
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
void add_running_summaries(const QueryOptions& o, const ReadOptions& read, const JobFilter& filter, double now,
                           SpoolSet& data, std::ostream& err) {
    if (!read.summaries) return;
    std::vector<std::int64_t> running;
    std::vector<prometheus::RunningJob> started;
    for (const auto& job : data.jobs) {
        if (!(job.end <= 0 || job.state.starts_with("RUNNING")) || !matches(job, filter)) continue;
        if (std::any_of(data.summaries.begin(), data.summaries.end(), [&](const GpuSummary& s) { return s.job_id == job.job_id; }))
            continue;
        running.push_back(job.job_id);
        started.push_back({job.job_id, job.start});
    }
    if (running.empty()) return;
    if (o.prometheus_url) {
        util::HttpClient client(*o.prometheus_url);
        std::string error;
        auto rows = prometheus::running_summaries([&](const std::string& target) { return client.get(target); },
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
    ReadOptions so_far;
    so_far.job_ids = running;
    so_far.full_jobs = false;
    so_far.node_rows = false;
    so_far.summaries = true;
    try {
        auto spool = read_spools(o.spool_dir, so_far);
        for (auto& s : spool.summaries)
            if (s.so_far) data.summaries.push_back(std::move(s));
    } catch (const std::exception&) {
        // Only extra numbers for running jobs: the listing stands without them.
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

}  // namespace

Context load(const QueryOptions& o, const LoadRequest& r, std::ostream& err, Source* source_out) {
    const ViewKind kind = r.kind;
    const bool everything = r.everything;
    const auto& ids = r.ids;
    const Period& period = r.period;
    const JobFilter& filter = r.filter;
    ReadOptions read;
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
    read.evidence = (o.detail || o.long_format) && !o.jobs.empty();  // the job view's Failure block
    Context context;
    context.now = r.now;
    context.units.unit = o.units.empty() ? (o.noconvert ? 'n' : 0) : static_cast<char>(std::toupper(static_cast<unsigned char>(o.units[0])));
    context.allocations = o.allocations;
    // The steps carry seff's TotalCPU and MaxRSS: fetch them only for a view that shows them.
    std::string format = o.format;
    for (auto& c : format) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool seff_fields = format.empty() || format.find("cpu") != std::string::npos ||
                             format.find("rss") != std::string::npos || format.find("memeff") != std::string::npos;
    // Not for the report: it shows no step figures, and slurmdbd fetches the steps with one
    // query per job (the report took 7x sacct's time at 10,000 jobs).
    const bool steps = !everything && (o.json || (kind == ViewKind::jobs && seff_fields));
    // The QOS by name: for -q, and the jobs' JSON (sacct --json's qos); no other view shows it.
    const bool qos = !sacct.qos.empty() || ((o.json || o.yaml) && kind == ViewKind::jobs && !everything);
    // slurmdbd's rows a job at a time, each job's made into what the view needs and let go: the
    // rows are never all held beside the jobs built from them.
    const bool per_run = o.duplicates && kind == ViewKind::jobs && !everything && !o.detail;
    std::unique_ptr<AccountingSetBuilder> builder;
    // --summary and --failures from slurmdbd: each job made, selected and counted as it comes,
    // none kept (slurmdbd's list is then gpuacct's memory, as it is sacct's).
    const bool aggregate = !everything && (kind == ViewKind::summary || kind == ViewKind::failures);
    std::optional<SacctSelection> selection;  // made once slurmdbd answered (it may ask slurmctld)
    AccountedJobs one_job;
    SummaryAggregator summary(r.now);
    FailureAggregator failures(r.now);
    // The report's goodput chart, from the rows already read.
    std::optional<ClusterGoodputStream> goodput;
    if (everything) goodput.emplace(GoodputFilter{filter.users, filter.accounts, filter.partitions}, r.now);
    std::vector<std::string> warnings, said;
    std::vector<Job> run_jobs;                 // sacct -D: a row per run
    std::vector<Diagnosis> run_diagnoses;      // each run's numbered as its row
    std::vector<const slurm::AccountedRun*> job_runs;
    const bool from_slurmdbd = accounted_runs(
        o, r, steps, qos, err,
        [&](size_t jobs) {
            if (aggregate) selection.emplace(sacct, o, r.ask_slurm, Source::slurmdbd);
            else builder = std::make_unique<AccountingSetBuilder>(read, jobs);
        },
        [&](std::span<const slurm::AccountedRun> runs) {
            // The newest run of each job speaks for it (as spool_set_from_accounting takes it).
            const slurm::AccountedRun& newest = runs.back();
            AccountedExtra x;
            if (newest.timelimit_min) x.time_limit_s = *newest.timelimit_min * 60.0;
            x.unlimited = newest.timelimit_unlimited;
            x.qos = newest.qos;
            x.cluster = newest.cluster;
            x.gid = newest.gid;
            x.associd = newest.associd;
            job_runs.clear();
            for (const auto& run : runs) job_runs.push_back(&run);
            if (aggregate) {
                // What the held jobs go through below, in the same order: -j's period, the
                // filter, sacct's filters, -T.
                Job& job = one_job.next(job_runs, needs_records(kind, sacct, job_runs), warnings);
                if ((!ids.empty() && outside(job, period)) || !matches(job, filter) || !selection->keeps(job, x)) return;
                if (o.truncate) truncate_to(period, r.now, job);
                if (kind == ViewKind::summary) summary.add(job);
                else failures.add(job, one_job.diagnoses());
                return;
            }
            context.accounted[newest.job_id] = std::move(x);
            if (o.detail || o.long_format) add_gpm(newest, context.gpm);
            builder->add_job(job_runs, warnings, everything || needs_records(r.records, sacct, newest));
            // A damaged record is warned about by the builder: not twice.
            if (goodput) goodput->add_job(runs, said);
            if (per_run) {
                std::vector<RunRow> rows;
                add_run_rows(job_runs, rows);
                for (auto& row : rows) {
                    for (auto& d : row.diagnoses) run_diagnoses.push_back(std::move(d));
                    if (!row.gpus.empty()) {
                        auto use = gpu_use_by_job(row.gpus);
                        context.run_use[{row.job.job_id, row.job.restarts}] = std::move(use.begin()->second);
                    }
                    run_jobs.push_back(std::move(row.job));
                }
            }
        });
    const Source source = from_slurmdbd ? Source::slurmdbd : Source::spool;
    if (source_out) *source_out = source;
    if (source == Source::spool && sacct.any_accounting_only())
        throw Failure{"-q, -g, -k, -K and -x need Slurm's accounting (slurmdbd): the node spools do not record "
                      "QOS, group, time limit or association: leave out --spool-dir/--source spool"};
    const bool streamed = !from_slurmdbd && !everything && !sacct.any() && (kind == ViewKind::summary || kind == ViewKind::failures);
    if (from_slurmdbd && aggregate) {
        // Counted already, every filter applied: no job is held.
        if (kind == ViewKind::summary) context.summary = summary.rows();
        else context.failures = failures.rows();
        for (const auto& w : warnings) fmt::print(err, "gpuacct: warning: {}\n", w);
        return context;
    }
    if (from_slurmdbd) {
        context.data = builder->finish();
        builder.reset();
        if (goodput) context.goodput = goodput->result();
        for (const auto& w : warnings) fmt::print(err, "gpuacct: warning: {}\n", w);
        // sacct -D: a row per run, each with its own record's GPU figures. The job view
        // (--detail) stays one block per job.
        if (per_run) {
            context.per_run = true;
            context.data.jobs = std::move(run_jobs);
            context.data.diagnoses = std::move(run_diagnoses);
        }
        add_running_summaries(o, read, filter, r.now, context.data, err);
        if (!ids.empty()) std::erase_if(context.data.jobs, [&](const Job& job) { return outside(job, period); });
    } else {
        try {
            if (streamed) stream_aggregates(o.spool_dir, read, kind, filter, context);
            else context.data = read_spools(o.spool_dir, read);
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
    // The report's goodput chart from the spools just read, filtered as gpuacct goodput is.
    if (everything && source == Source::spool)
        context.goodput =
            spool_cluster_goodput(o.spool_dir, context.data, {filter.users, filter.accounts, filter.partitions, {}, {}}, r.now);
    std::erase_if(context.data.jobs, [&](const Job& job) { return !matches(job, filter); });
    context.jobs = std::move(context.data.jobs);
    context.data.jobs.clear();
    apply_sacct_filter(sacct, o, r.ask_slurm, source, context);
    if (o.truncate) truncate_to(period, r.now, context.jobs);
    if (source == Source::spool && (o.detail || o.long_format)) add_spool_gpm(o.spool_dir, context);
    if (r.ask_slurm && (everything || kind == ViewKind::nodes)) context.slurm_nodes = slurm_nodes(err);
    if (source == Source::spool && r.ask_slurm && (everything || kind == ViewKind::jobs))
        check_accounting(context.jobs, ids, period.start.value_or(0), period.end.value_or(r.now), err);
    return context;
}

}  // namespace acme::acct
