#include "acct/gpuacct/core/sacct_selection.hpp"

#include <grp.h>

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

#include "acct/gpuacct/core/sacct_filters.hpp"
#include "common/slurm/accounting.hpp"
#include "common/slurm/jobs.hpp"
#include "common/util/parse.hpp"

namespace acme::acct {
namespace {

std::optional<std::uint32_t> time_limit_of(const std::string& text, const char* option) {
    if (text.empty()) return std::nullopt;
    std::string error;
    const auto v = parse_time_limit(text, error);
    if (!v) throw Failure{fmt::format("{}: {}", option, error)};
    return *v;
}

bool in_list(const std::vector<std::string>& list, const std::string& value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

SacctFilter sacct_filter_of(const QueryOptions& o) {
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

bool ran_on(const Job& job, const std::vector<std::string>& nodes) {
    std::vector<std::string> ran;
    if (!job.text().nodelist.empty()) ran = slurm::expand_hostlist(job.text().nodelist);
    for (const auto& n : job.nodes) ran.push_back(n.node);
    return std::any_of(ran.begin(), ran.end(), [&](const std::string& n) { return in_list(nodes, n); });
}

SacctSelection::SacctSelection(const SacctFilter& f, const QueryOptions& o, bool ask_slurm, Source source)
    : f_(f), source_(source), clusters_(f.clusters) {
    std::string local;
    // sacct lists only the local cluster's jobs unless -M or -L says otherwise.
    if (clusters_.empty() && !o.allclusters && source == Source::slurmdbd && ask_slurm) {
        local = slurm::local_cluster_name();
        if (!local.empty()) clusters_.push_back(local);
    }
    if (source == Source::spool && !f.clusters.empty()) {
        // The spools are this cluster's: -M keeps them when it names this cluster.
        if (local.empty() && ask_slurm) local = slurm::local_cluster_name();
        none_ = !in_list(f.clusters, local);
        clusters_.clear();
    }
}

bool SacctSelection::keeps(const Job& job, const AccountedExtra& x) const {
    const SacctFilter& f = f_;
    if (none_) return false;
    if (!f.nodes.empty() && !ran_on(job, f.nodes)) return false;
    if (!f.names.empty() && !in_list(f.names, job.text().name)) return false;
    if (source_ == Source::slurmdbd && !clusters_.empty() && !in_list(clusters_, x.cluster)) return false;
    if (!f.qos.empty() && !in_list(f.qos, x.qos)) return false;
    if (!f.gids.empty() && std::find(f.gids.begin(), f.gids.end(), x.gid) == f.gids.end()) return false;
    if (!f.associations.empty() && std::find(f.associations.begin(), f.associations.end(), x.associd) == f.associations.end())
        return false;
    std::optional<std::uint32_t> limit;
    if (x.time_limit_s) limit = static_cast<std::uint32_t>(*x.time_limit_s / 60);
    return time_limit_matches(limit, x.unlimited, f.tl_min, f.tl_max);
}

void apply_sacct_filter(const SacctFilter& f, const QueryOptions& o, bool ask_slurm, Source source, Context& context) {
    const SacctSelection selection(f, o, ask_slurm, source);
    const AccountedExtra none;
    std::erase_if(context.jobs, [&](const Job& job) {
        const auto a = context.accounted.find(job.job_id);
        return !selection.keeps(job, a == context.accounted.end() ? none : a->second);
    });
}

bool outside(const Job& job, const Period& period) {
    if (period.start && job.end > 0 && job.end < *period.start) return true;
    const double began = job.start > 0 ? job.start : job.submit;
    return period.end && began > *period.end;
}

void truncate_to(const Period& period, double now, Job& job) {
    if (period.start && job.start > 0 && job.start < *period.start) job.start = *period.start;
    const double end = period.end.value_or(now);
    if (period.end && job.start > 0 && (job.end <= 0 || job.end > end)) job.end = end;
}

void truncate_to(const Period& period, double now, std::vector<Job>& jobs) {
    for (auto& job : jobs) truncate_to(period, now, job);
}

}  // namespace acme::acct
