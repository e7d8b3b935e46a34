#include "acct/faultdiag/spool_job.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "common/diagnose/diagnosis_json.hpp"
#include "common/store/spool.hpp"

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
    bool a_known = a.diagnosis.reason != "unknown", b_known = b.diagnosis.reason != "unknown";
    if (a_known != b_known) return a_known;
    return a.diagnosis.confidence > b.diagnosis.confidence;
}

void read_one(store::Database& db, std::int64_t job_id, SpoolJob& job, bool& any) {
    auto diag = db.prepare(
        "SELECT node, restart, ts, category, reason, confidence, evidence, action FROM diagnoses WHERE job_id = ?");
    diag.bind_all(job_id);
    while (diag.step()) {
        any = true;
        StoredDiagnosis s;
        s.node = diag.column_text(0);
        s.restart = diag.column_int(1);
        s.ts = diag.column_double(2);
        s.diagnosis.category = category_named(diag.column_text(3));
        s.diagnosis.reason = diag.column_text(4);
        s.diagnosis.confidence = diag.column_double(5);
        s.diagnosis.evidence = diagnose::evidence_from_json(diag.column_text(6));
        s.diagnosis.action = diagnose::parse_action(diag.column_text(7)).value_or(diagnose::Action::none);
        if (!job.stored || better(s, *job.stored)) job.stored = std::move(s);
    }

    std::vector<int> gpus;
    auto jobs = db.prepare("SELECT gpus FROM jobs WHERE job_id = ?");
    jobs.bind_all(job_id);
    if (jobs.step()) {
        any = true;
        gpus = parse_gpus(jobs.column_optional_text(0).value_or(""));
    }

    auto exits = db.prepare("SELECT wait_status FROM task_exits WHERE job_id = ?");
    exits.bind_all(job_id);
    while (exits.step()) {
        any = true;
        job.task_wait_statuses.push_back(static_cast<int>(exits.column_int(0)));
    }

    auto events = db.prepare("SELECT gpu, ts, kind, code, detail FROM gpu_events WHERE job_id = ? ORDER BY ts");
    events.bind_all(job_id);
    while (events.step()) {
        any = true;
        diagnose::GpuEvent e;
        e.gpu = static_cast<int>(events.column_int(0));
        e.ts = events.column_double(1);
        e.kind = events.column_text(2);
        e.code = events.column_optional_int(3);
        e.detail = events.column_optional_text(4).value_or("");
        // GPU ids are per node: filter here, where the node's own job GPUs are known.
        if (gpus.empty() || std::find(gpus.begin(), gpus.end(), e.gpu) != gpus.end()) job.gpu_events.push_back(std::move(e));
    }

    // Spools older than schema v3 have no log_tails table.
    auto has_tails = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'log_tails'");
    has_tails.step();
    if (has_tails.column_int(0) > 0) {
        auto tail = db.prepare("SELECT text FROM log_tails WHERE job_id = ? ORDER BY restart DESC LIMIT 1");
        tail.bind_all(job_id);
        if (tail.step()) {
            any = true;
            job.log = tail.column_text(0);
        }
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
