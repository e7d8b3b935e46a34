#include "common/store/spool_goodput.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <system_error>

#include "common/store/columns.hpp"
#include "common/store/spool.hpp"

namespace acme::store {
namespace {

// Orders rows and job ids by job id, either way round (std::equal_range asks both).
struct ById {
    static std::int64_t id(const Stall& s) { return s.job_id; }
    static std::int64_t id(const std::pair<std::int64_t, double>& p) { return p.first; }
    static std::int64_t id(std::int64_t job_id) { return job_id; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
        return id(a) < id(b);
    }
};

}  // namespace

GoodputSide read_goodput_side(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<fs::path> paths;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".db") paths.push_back(it->path());
    std::sort(paths.begin(), paths.end());
    GoodputSide out;
    for (const auto& path : paths) {
        try {
            auto db = open_spool_read_only(path.string());
            // Spool v6 brought the stalls (v7 their withdrawal); an older spool has no verdicts.
            const auto columns = table_columns(db, "stalls");
            if (!columns.empty()) {
                auto q = db.prepare(std::string("SELECT job_id, restart, node, ts, since, action FROM stalls") +
                                    (columns.count("withdrawn") ? " WHERE withdrawn = 0" : ""));
                while (q.step()) {
                    Stall s;
                    s.job_id = q.column_int(0);
                    s.restart = q.column_int(1);
                    s.node = q.column_text(2);
                    s.ts = q.column_double(3);
                    s.since = q.column_double(4);
                    s.action = q.column_text(5);
                    out.stalls.push_back(std::move(s));
                }
            }
            if (!table_columns(db, "gpu_summaries").empty()) {
                // The verdict is decided when the sampler stops (gpu_verdict): a job still
                // running has no summary yet and counts no idle GPU here. Spool v9's partial
                // index answers this without the table; an older spool is read whole.
                auto q = db.prepare("SELECT job_id, COALESCE(last_ts, 0) FROM gpu_summaries WHERE verdict = 'idle'");
                while (q.step()) out.idle_gpus.emplace_back(q.column_int(0), q.column_double(1));
            }
        } catch (const std::exception&) {
            // Reported by scan_spools, which reads the same file's jobs.
        }
    }
    // By job id, each file's rows in file order within a job (stable).
    std::stable_sort(out.stalls.begin(), out.stalls.end(), [](const Stall& a, const Stall& b) { return a.job_id < b.job_id; });
    std::stable_sort(out.idle_gpus.begin(), out.idle_gpus.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
}

std::span<const Stall> GoodputSide::stalls_of(std::int64_t job_id) const {
    const auto [first, last] = std::equal_range(stalls.begin(), stalls.end(), job_id, ById{});
    return {first, last};
}

std::span<const std::pair<std::int64_t, double>> GoodputSide::idle_gpus_of(std::int64_t job_id) const {
    const auto [first, last] = std::equal_range(idle_gpus.begin(), idle_gpus.end(), job_id, ById{});
    return {first, last};
}

}  // namespace acme::store
