#include "acct/faultdiag/slurmdbd_job.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/diagnose/diagnosis_json.hpp"
#include "common/record/codec.hpp"
#include "common/record/keys.hpp"
#include "common/record/record.hpp"

namespace acme::faultdiag {
namespace {

namespace key = record::key;

diagnose::Category category_named(const std::string& name) {
    for (auto c : {diagnose::Category::infrastructure, diagnose::Category::framework, diagnose::Category::script})
        if (diagnose::to_string(c) == name) return c;
    return diagnose::Category::unknown;
}

std::string string_of(const nlohmann::json& o, const char* name) {
    return o.contains(name) && o[name].is_string() ? o[name].get<std::string>() : std::string();
}

// As the spool reader: the newest run first, then a named cause over unknown, then confidence.
bool better(const StoredDiagnosis& a, const StoredDiagnosis& b) {
    if (a.restart != b.restart) return a.restart > b.restart;
    const bool a_known = a.diagnosis.reason != "unknown", b_known = b.diagnosis.reason != "unknown";
    if (a_known != b_known) return a_known;
    return a.diagnosis.confidence > b.diagnosis.confidence;
}

}  // namespace

AccountedJob accounted_job(std::span<const slurm::AccountedRun> all, std::int64_t job_id) {
    AccountedJob out;
    std::vector<const slurm::AccountedRun*> runs;
    for (const auto& r : all)
        if (r.job_id == job_id) runs.push_back(&r);
    std::stable_sort(runs.begin(), runs.end(), [](const auto* a, const auto* b) { return a->db_index < b->db_index; });
    out.found = !runs.empty();
    if (!out.found) return out;
    out.exit_code = runs.back()->exit_code;
    out.state = runs.back()->state;
    out.end = runs.back()->end;
    for (size_t k = 0; k < runs.size(); ++k) {
        std::string error;
        const auto text = record::decode_token(runs[k]->admin_comment, error);
        std::optional<nlohmann::json> r;
        if (text) r = record::parse_record(*text, error);
        if (!r) {
            if (!error.empty()) out.warnings.push_back(fmt::format("job {}: {}", job_id, error));
            continue;
        }
        if ((*r)[key::job].get<long long>() != job_id) {
            out.warnings.push_back(fmt::format("job {}: its ACME1 record is of job {}", job_id, (*r)[key::job].get<long long>()));
            continue;
        }
        const std::int64_t restart = r->contains(key::restart) && (*r)[key::restart].is_number_integer()
                                         ? (*r)[key::restart].get<std::int64_t>()
                                         : static_cast<std::int64_t>(k);
        out.missing_nodes = record::missing_nodes(*r);
        for (const auto& [node, part] : (*r)[key::nodes].items()) {
            if (!part.contains(key::part::diagnosis) || !part[key::part::diagnosis].is_object()) continue;
            const auto& d = part[key::part::diagnosis];
            StoredDiagnosis s;
            s.node = node;
            s.restart = restart;
            s.ts = part.contains(key::part::ts) && part[key::part::ts].is_number() ? part[key::part::ts].get<double>() : 0;
            s.diagnosis.category = category_named(string_of(d, key::diagnosis::category));
            s.diagnosis.reason = string_of(d, key::diagnosis::reason);
            if (s.diagnosis.reason.empty()) s.diagnosis.reason = "unknown";
            s.diagnosis.confidence = d.contains(key::diagnosis::confidence) && d[key::diagnosis::confidence].is_number() ? d[key::diagnosis::confidence].get<double>() : 0;
            s.diagnosis.action = diagnose::parse_action(string_of(d, key::diagnosis::action)).value_or(diagnose::Action::none);
            s.diagnosis.rule = string_of(d, key::diagnosis::rule);
            if (d.contains(key::diagnosis::evidence) && d[key::diagnosis::evidence].is_array())
                s.diagnosis.evidence = diagnose::evidence_from_json(d[key::diagnosis::evidence].dump());
            if (!out.stored || better(s, *out.stored)) out.stored = std::move(s);
        }
    }
    return out;
}

bool record_may_be_on_its_way(const AccountedJob& job, double now) {
    if (!job.found || job.stored || job.end <= 0) return false;
    // A completed job's record holds no diagnosis; one slurmdbd still has running is not over.
    if (job.state == "COMPLETED" || job.state == "RUNNING" || job.state == "PENDING") return false;
    return now - job.end < kRecordArrivalSeconds;
}

std::optional<AccountedJob> read_accounted_job(std::int64_t job_id, std::string& why_not) {
    slurm::RunQuery query;
    query.job_ids = {job_id};
    const auto runs = slurm::load_accounted_runs(query, why_not);
    if (!runs) return std::nullopt;
    return accounted_job(*runs, job_id);
}

}  // namespace acme::faultdiag
