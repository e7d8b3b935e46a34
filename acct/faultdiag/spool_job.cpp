#include "acct/faultdiag/spool_job.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "common/diagnose/diagnosis_json.hpp"
#include "common/diagnose/llm_client.hpp"
#include "common/store/spool.hpp"
#include "common/store/spool_failures.hpp"
#include "common/store/spool_gpu.hpp"
#include "common/store/spool_jobs.hpp"

namespace acme::faultdiag {
namespace {

std::vector<int> parse_gpus(const std::string& text) {
    // SLURM_JOB_GPUS: "0,1,3"; anything unreadable means "unknown", i.e. no filtering.
    std::vector<int> gpus;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t end = text.find(',', i);
        if (end == std::string::npos) end = text.size();
        try {
            gpus.push_back(std::stoi(text.substr(i, end - i)));
        } catch (...) {
            return {};
        }
        i = end + 1;
    }
    return gpus;
}

diagnose::Category category_named(const std::string& name) {
    for (auto c : {diagnose::Category::infrastructure, diagnose::Category::framework, diagnose::Category::script})
        if (diagnose::to_string(c) == name) return c;
    return diagnose::Category::unknown;
}

// More decisive first: a named cause beats unknown, then the higher confidence.
bool better(const StoredDiagnosis& a, const StoredDiagnosis& b) {
    if (a.restart != b.restart) return a.restart > b.restart;
    // The model is asked only when the rules did not decide, and its answer is stored after theirs.
    const bool a_model = diagnose::from_model(a.diagnosis), b_model = diagnose::from_model(b.diagnosis);
    if (a.node == b.node && a_model != b_model) return a_model;
    bool a_known = a.diagnosis.reason != "unknown", b_known = b.diagnosis.reason != "unknown";
    if (a_known != b_known) return a_known;
    return a.diagnosis.confidence > b.diagnosis.confidence;
}

void read_one(store::Database& db, std::int64_t job_id, SpoolJob& job, bool& any) {
    for (auto& row : store::job_diagnoses(db, job_id)) {
        any = true;
        StoredDiagnosis s;
        s.node = std::move(row.node);
        s.restart = row.restart;
        s.ts = row.ts;
        s.diagnosis.category = category_named(row.category);
        s.diagnosis.reason = std::move(row.reason);
        s.diagnosis.confidence = row.confidence;
        s.diagnosis.evidence = diagnose::evidence_from_json(row.evidence_json);
        s.diagnosis.action = diagnose::parse_action(row.action).value_or(diagnose::Action::none);
        if (!job.stored || better(s, *job.stored)) job.stored = std::move(s);
    }

    std::vector<int> gpus;
    if (const auto text = store::job_gpus(db, job_id)) {
        any = true;
        gpus = parse_gpus(*text);
    }

    for (const int status : store::task_wait_statuses(db, job_id)) {
        any = true;
        job.task_wait_statuses.push_back(status);
    }

    for (auto& row : store::job_gpu_events(db, job_id)) {
        any = true;
        // GPU ids are per node: filter here, where the node's own job GPUs are known.
        if (!gpus.empty() && std::find(gpus.begin(), gpus.end(), row.gpu) == gpus.end()) continue;
        diagnose::GpuEvent e;
        e.gpu = row.gpu;
        e.ts = row.ts;
        e.kind = std::move(row.kind);
        e.code = row.code;
        e.detail = std::move(row.detail);
        job.gpu_events.push_back(std::move(e));
    }

    if (auto tail = store::newest_log_tail(db, job_id)) {
        any = true;
        job.log = std::move(*tail);
    }
}

}  // namespace

SpoolJob read_spool_job(const std::string& dir, std::int64_t job_id) {
    SpoolJob job;
    job.job_id = job_id;
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
        if (entry.path().extension() == ".db") files.push_back(entry.path());
    if (ec)
        throw std::runtime_error(fmt::format("cannot read spool directory {} ({}): pass --spool-dir DIR", dir, ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        try {
            auto db = store::open_spool_read_only(file.string());
            bool any = false;
            read_one(db, job_id, job, any);
            if (any) job.nodes.push_back(file.stem().string());
        } catch (const std::exception& error) {
            job.warnings.push_back(fmt::format("skipped {}: {}", file.string(), error.what()));
        }
    }
    return job;
}

}  // namespace acme::faultdiag
