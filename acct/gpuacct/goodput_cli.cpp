#include "acct/gpuacct/goodput_cli.hpp"

#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "acct/gpuacct/core/goodput_runs.hpp"
#include "acct/gpuacct/core/goodput_spool.hpp"
#include "acct/gpuacct/core/query_options.hpp"
#include "common/slurm/accounting.hpp"

namespace acme::gpuacct {

namespace {

void need_slurmdbd(bool spool, bool ask_slurm, const char* what) {
    if (spool || !ask_slurm)
        throw acct::Failure{fmt::format("{} reads every run of a job from slurmdbd (sacct -D), and node spools keep only a "
                                        "job's last run: run it where Slurm's accounting answers, without --spool-dir",
                                        what)};
}

// Every row the query names; why not in one line when slurmdbd cannot be read.
std::vector<slurm::AccountedRun> read_rows(const slurm::RunQuery& query, bool spool, bool ask_slurm, const char* what) {
    need_slurmdbd(spool, ask_slurm, what);
    std::string why_not;
    auto rows = slurm::load_accounted_runs(query, why_not);
    if (!rows) throw acct::Failure{fmt::format("{} needs slurmdbd: {}", what, why_not)};
    return std::move(*rows);
}

void warn(const std::vector<std::string>& warnings, std::ostream& err) {
    for (const auto& w : warnings) fmt::print(err, "gpuacct: warning: {}\n", w);
}

}  // namespace

int print_goodput(const GoodputRequest& request, std::ostream& out, std::ostream& err) {
    slurm::RunQuery query;
    query.job_ids = request.ids;
    query.steps = false;
    std::vector<std::string> warnings;
    const auto jobs = acct::goodput_runs(read_rows(query, request.spool, request.ask_slurm, "--goodput"), warnings);
    warn(warnings, err);
    if (jobs.empty()) {
        std::string ids;
        for (auto id : request.ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
        throw acct::Failure{fmt::format("no job {} in slurmdbd's records (or not yours to see)", ids)};
    }
    nlohmann::json listed = nlohmann::json::array();
    std::string text;
    for (const auto& [job_id, runs] : jobs) {
        const auto g = acct::compute_goodput(runs, request.now);
        if (request.json) listed.push_back({{"job_id", job_id}, {"goodput", acct::goodput_json(g)}});
        else text += (text.empty() ? "" : "\n") + acct::render_goodput(job_id, g);
    }
    if (request.json) out << nlohmann::json{{"jobs", listed}}.dump(2) << '\n';
    else out << text;
    return 0;
}

namespace {

// gpuacct goodput from node spools: a job's newest run is split as from slurmdbd, its earlier
// runs (not held) are counted and named (goodput_spool.hpp).
acct::ClusterGoodput spool_cluster_goodput(const ClusterGoodputRequest& request, std::ostream& err) {
    acct::ReadOptions read;
    read.start = request.start;
    read.end = request.end;
    acct::SpoolScan scan;
    acct::ClusterGoodput c;
    try {
        c = acct::stream_spool_goodput(request.spool_dir, read, {request.users, request.accounts, request.partitions, {}, {}},
                                       request.now, scan);
    } catch (const std::runtime_error& error) {
        throw acct::Failure{fmt::format("gpuacct goodput: {}", error.what())};
    }
    if (scan.nodes.empty() && !scan.problems.empty())
        throw acct::Failure{fmt::format("could read none of the {} spool file(s) in {} ({})", scan.problems.size(),
                                        request.spool_dir, scan.problems.front())};
    for (const auto& p : scan.problems) fmt::print(err, "gpuacct: warning: skipped {}\n", p);
    return c;
}

}  // namespace

int print_cluster_goodput(const ClusterGoodputRequest& request, std::ostream& out, std::ostream& err) {
    acct::ClusterGoodput c;
    if (request.spool || (!request.ask_slurm && !request.slurmdbd)) {
        c = spool_cluster_goodput(request, err);
    } else {
        slurm::RunQuery query;
        query.start = request.start;
        query.end = request.end;
        query.steps = false;
        query.qos_names = false;  // not shown: its own round trip to slurmdbd saved
        // Summed one job at a time: no job is kept, so a million cost the sums (and libslurm's list).
        acct::ClusterGoodputStream stream({request.users, request.accounts, request.partitions}, request.now);
        std::vector<std::string> warnings;
        std::string why_not;
        if (!slurm::for_each_accounted_job(query, [](size_t) {}, [&](auto rows) { stream.add_job(rows, warnings); }, why_not))
            // --source slurmdbd asked for slurmdbd alone: pointing at the spools would contradict it.
            throw acct::Failure{request.slurmdbd
                                    ? fmt::format("gpuacct goodput --source slurmdbd needs slurmdbd ({})", why_not)
                                    : fmt::format("gpuacct goodput needs slurmdbd ({}), or give --spool-dir to read the node spools",
                                                  why_not)};
        c = stream.result();
        warn(warnings, err);
    }
    if (request.json) out << acct::cluster_goodput_json(c).dump(2) << '\n';
    else out << acct::render_cluster_goodput(c);
    return 0;
}

}  // namespace acme::gpuacct
