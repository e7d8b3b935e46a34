// --json of the jobs view: sacct --json's layout (Slurm 22.05, openapi/dbv0.0.38) for the
// fields both have, and gpuacct's own fields of each job under "acme". A field sacct has that
// gpuacct does not know (array, het, mcs, steps' TRES ...) is left out, never made up.
#include <grp.h>

#include <array>
#include <cmath>
#include <map>

#include "acct/gpuacct/json_sacct.hpp"
#include "common/util/version.hpp"

namespace acme::gpuacct {
namespace {

using nlohmann::json;

json or_null(const std::string& s) { return s.empty() ? json() : json(s); }

std::string group_name(std::int64_t gid) {
    if (gid < 0) return {};
    group gr{}, *found = nullptr;
    std::array<char, 4096> buffer{};
    if (getgrgid_r(static_cast<gid_t>(gid), &gr, buffer.data(), buffer.size(), &found) == 0 && found) return found->gr_name;
    return std::to_string(gid);
}

// sacct's exit_code object: "EXIT:SIGNAL" as status, return_code and the signal.
json exit_json(const std::string& text) {
    if (text.empty()) return json();
    const auto colon = text.find(':');
    int code = 0, signal = 0;
    try {
        code = std::stoi(text.substr(0, colon));
        if (colon != std::string::npos) signal = std::stoi(text.substr(colon + 1));
    } catch (const std::exception&) {
        return json();
    }
    json e = {{"status", signal ? "SIGNALED" : code ? "FAILED" : "SUCCESS"}, {"return_code", code}};
    if (signal) e["signal"] = {{"signal_id", signal}};
    return e;
}

json time_of(double t) { return t > 0 ? json(static_cast<std::int64_t>(t)) : json(0); }

}  // namespace

json sacct_jobs_json(const Context& context, const Table& table, const json& rows) {
    // The job's own rows (not its steps'): those whose JobID cell is the bare number, one per
    // job in the jobs' order (with -D one per run, so the id alone does not name the row).
    std::vector<const json*> job_rows;
    for (size_t i = 0; i < table.rows.size() && i < rows.size(); ++i) {
        const auto& id = table.rows[i].empty() ? json() : table.rows[i][0].value;
        if (id.is_number_integer()) job_rows.push_back(&rows[i]);
    }
    json jobs = json::array();
    for (size_t k = 0; k < context.jobs.size(); ++k) {
        const acct::Job& job = context.jobs[k];
        const acct::JobText& t = job.text();
        const auto a = context.accounted.find(job.job_id);
        const AccountedExtra* x = a == context.accounted.end() ? nullptr : &a->second;
        json j;
        j["account"] = or_null(t.account);
        j["allocation_nodes"] = job.num_nodes > 0 ? job.num_nodes : static_cast<int>(job.nodes.size());
        j["association"] = {{"account", or_null(t.account)},
                            {"cluster", x ? or_null(x->cluster) : json()},
                            {"partition", or_null(t.partition)},
                            {"user", or_null(t.user)}};
        j["cluster"] = x ? or_null(x->cluster) : json();
        j["derived_exit_code"] = exit_json(t.derived_exit_code);
        json time = {{"elapsed", static_cast<std::int64_t>(acct::job_elapsed(job, context.now))},
                     {"end", time_of(job.end)},
                     {"start", time_of(job.start)},
                     {"submission", time_of(job.submit)}};
        // sacct's limit is in minutes; an unlimited job's is null here (sacct writes INFINITE's number).
        if (x && x->time_limit_s) time["limit"] = static_cast<std::int64_t>(*x->time_limit_s / 60);
        else time["limit"] = json();
        if (t.total_cpu_s) time["total"] = {{"seconds", static_cast<std::int64_t>(*t.total_cpu_s)}, {"microseconds", 0}};
        j["time"] = std::move(time);
        j["exit_code"] = exit_json(t.exit_code);
        j["group"] = x ? or_null(group_name(x->gid)) : json();
        j["job_id"] = job.job_id;
        j["name"] = or_null(t.name);
        std::string nodes = t.nodelist;
        if (nodes.empty())
            for (const auto& n : job.nodes) nodes += (nodes.empty() ? "" : ",") + n.node;
        j["nodes"] = nodes.empty() ? "None assigned" : nodes;
        j["partition"] = or_null(t.partition);
        j["qos"] = x ? or_null(x->qos) : json();
        j["state"] = {{"current", job.state.empty() ? (job.end > 0 ? "UNKNOWN" : "RUNNING") : job.state}};
        j["user"] = or_null(t.user);
        j["acme"] = k < job_rows.size() ? *job_rows[k] : json::object();
        // The stall verdicts and the straggler report: what the job view shows, for scripts.
        if (const auto stalls = job_stalls(context, job.job_id); !stalls.empty()) {
            json list = json::array();
            for (const auto& st : stalls) {
                json o = {{"restart", st.restart}, {"ts", static_cast<std::int64_t>(st.ts)},
                          {"since", static_cast<std::int64_t>(st.since)}, {"named", or_null(st.named)},
                          {"hardware", st.hardware}, {"withdrawn", st.withdrawn}, {"evidence", st.evidence},
                          {"action", st.action}};
                list.push_back(std::move(o));
            }
            j["acme"]["stalls"] = std::move(list);
        }
        if (const auto slow = job.restarts == 0 ? record::straggler_scores(node_work(context, job.job_id))
                                                : std::vector<record::NodeSlowness>{};
            !slow.empty()) {
            json list = json::array();
            for (const auto& n : slow)
                list.push_back({{"node", n.node}, {"slowness", std::round(n.score * 100) / 100},
                                {"work_pct", std::round(n.work * 10) / 10}, {"typical_pct", std::round(n.typical * 10) / 10},
                                {"signal", n.signal}});
            j["acme"]["slowness"] = std::move(list);
        }
        jobs.push_back(std::move(j));
    }
    return {{"meta", {{"plugin", {{"type", "gpuacct"}, {"name", acme::version_line("gpuacct")}}}}},
            {"errors", json::array()},
            {"jobs", std::move(jobs)}};
}

}  // namespace acme::gpuacct
