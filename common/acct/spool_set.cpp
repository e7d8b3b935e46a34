#include "common/acct/spool_set.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "common/store/spool.hpp"

namespace acme::acct {
namespace {

namespace fs = std::filesystem;

std::set<std::string> table_columns(store::Database& db, std::string_view table) {
    std::set<std::string> columns;
    auto q = db.prepare("SELECT name FROM pragma_table_info(?)");
    q.bind(1, table);
    while (q.step()) columns.insert(q.column_text(0));
    return columns;
}

// A spool written by an older plugin lacks the newer columns: read them as NULL instead of
// skipping the node (its telemetry is still worth reporting).
std::string select_list(const std::set<std::string>& have, std::initializer_list<std::string_view> wanted) {
    std::string out;
    for (auto name : wanted) {
        if (!out.empty()) out += ", ";
        // Expressions are only asked of a v4 spool (read_jobs falls back before that).
        const bool expression = name.find('(') != std::string_view::npos;
        out += expression || have.count(std::string(name)) ? std::string(name) : "NULL";
    }
    return out;
}

std::string text_or_empty(store::Statement& q, int column) { return q.is_null(column) ? std::string() : q.column_text(column); }

struct Reader {
    const ReadOptions& options;
    SpoolSet& out;
    std::unordered_map<std::int64_t, size_t> job_index{};
    struct Rank {
        bool final = false;
        std::int64_t restarts = 0;
        double end = 0;
        auto operator<=>(const Rank&) const = default;
    };
    std::vector<Rank> ranks{};  // parallel to out.jobs while reading
    bool indexed = false;
    int files_read = 0;

    static bool live_state(const std::string& state) {
        for (auto live : {"PENDING", "RUNNING", "REQUEUED", "SUSPENDED", "COMPLETING", "CONFIGURING"})
            if (state.rfind(live, 0) == 0) return true;
        return false;
    }

    // sacct's window: a job counts when it ended at or after start and began (or, pending, was
    // submitted) at or before end. Bound values only.
    std::string window_sql() const {
        std::string where = " WHERE 1";
        if (options.start) where += " AND (COALESCE(NULLIF(end_time, 0), ended_at) IS NULL OR COALESCE(NULLIF(end_time, 0), ended_at) >= :start)";
        if (options.end) where += " AND COALESCE(start_time, started_at, submit_time, 0) <= :end";
        if (!options.job_ids.empty()) where += " AND job_id IN (SELECT value FROM json_each(:ids))";
        return where;
    }

    void bind_window(store::Statement& q, store::Database& db, std::string_view sql) const {
        (void)db;
        if (options.start) q.bind(index_of(sql, ":start"), *options.start);
        if (options.end) q.bind(index_of(sql, ":end"), *options.end);
        if (!options.job_ids.empty()) {
            std::string ids = "[";
            for (size_t i = 0; i < options.job_ids.size(); ++i) ids += (i ? "," : "") + std::to_string(options.job_ids[i]);
            ids += "]";
            q.bind(index_of(sql, ":ids"), ids);
        }
    }

    // Named parameters are numbered by first appearance, in text order.
    static int index_of(std::string_view sql, std::string_view name) {
        int index = 0;
        for (auto n : {":start", ":end", ":ids"}) {
            if (sql.find(n) == std::string_view::npos) continue;
            ++index;
            if (n == name) return index;
        }
        return 0;
    }

    void read_jobs(store::Database& db, const std::string& node) {
        start_file();
        const auto have = table_columns(db, "jobs");
        const bool full = options.full_jobs;
        const std::string sql = fmt::format(
            "SELECT job_id, {}, {} FROM jobs{}",
            select_list(have, {"node", "gpus", "job_type", "state", "num_nodes", "gpus_total", "restarts",
                               "COALESCE(submit_time, 0)", "COALESCE(start_time, started_at, 0)",
                               "COALESCE(end_time, ended_at, 0)", "batch_host"}),
            full ? select_list(have, {"uid", "user", "account", "partition", "name", "nodelist", "exit_code",
                                      "derived_exit_code", "telemetry_error", "job_type_source"})
                 : std::string("NULL"),
            window_sql());
        // The COALESCE expressions name v4 columns; on an older spool fall back to the sampler's.
        std::string effective = sql;
        if (!have.count("start_time")) {
            effective = fmt::format("SELECT job_id, node, gpus, NULL, NULL, NULL, NULL, NULL, 0, COALESCE(started_at, 0), "
                                    "COALESCE(ended_at, 0), NULL, {} FROM jobs WHERE 1{}",
                                    full ? "uid, NULL, NULL, NULL, NULL, NULL, NULL, NULL, " +
                                               std::string(have.count("telemetry_error") ? "telemetry_error" : "NULL") + ", NULL"
                                         : std::string("NULL"),
                                    options.job_ids.empty() ? "" : " AND job_id IN (SELECT value FROM json_each(:ids))");
        }
        auto q = db.prepare(effective);
        bind_window(q, db, effective);
        while (q.step()) {
            const std::int64_t id = q.column_int(0);
            // job_id is each file's primary key: only a second file can repeat an id, so the
            // index exists only from then on (one collected spool of a million jobs needs none).
            size_t at = out.jobs.size();
            bool inserted = true;
            if (indexed) {
                const auto [it, fresh] = job_index.try_emplace(id, out.jobs.size());
                at = it->second;
                inserted = fresh;
            }
            if (inserted) out.jobs.emplace_back().job_id = id;
            Job& job = out.jobs[at];
            const std::string row_node = q.is_null(1) ? node : q.column_text(1);
            const std::string ids = text_or_empty(q, 2);
            if (!ids.empty()) job.gpu_ids += static_cast<int>(std::count(ids.begin(), ids.end(), ',')) + 1;
            if (options.node_rows) job.nodes.push_back({row_node, ids});
            // Job-wide fields come from the row written last in the job's life: a requeued job's
            // nodes each recorded the run they saw (the first one "PENDING" at requeue), so a
            // final state beats a live one, then more restarts, then a later end. Any row fills
            // what is still unknown.
            const std::string row_state = text_or_empty(q, 4);
            const Rank rank{!row_state.empty() && !live_state(row_state), q.is_null(7) ? 0 : q.column_int(7),
                            q.column_double(10)};
            if (inserted) ranks.push_back(rank);
            const bool authoritative = inserted || ranks[at] < rank;
            if (authoritative) ranks[at] = rank;
            auto take = [&](std::string& field, int column) {
                if (!q.is_null(column) && (authoritative || field.empty())) field = q.column_text(column);
            };
            auto take_int = [&](int& field, int column) {
                if (!q.is_null(column) && (authoritative || field == 0)) field = static_cast<int>(q.column_int(column));
            };
            auto take_time = [&](double& field, int column) {
                const double v = q.column_double(column);
                if (v > 0 && (authoritative || field == 0)) field = v;
            };
            take(job.job_type, 3);
            take(job.state, 4);
            take_int(job.num_nodes, 5);
            take_int(job.gpus_total, 6);
            take_int(job.restarts, 7);
            take_time(job.submit, 8);
            take_time(job.start, 9);
            take_time(job.end, 10);
            take(job.batch_host, 11);
            if (full) {
                JobText& text = job.mutable_text();
                if (!q.is_null(12) && (authoritative || text.uid < 0)) text.uid = q.column_int(12);
                take(text.user, 13);
                take(text.account, 14);
                take(text.partition, 15);
                take(text.name, 16);
                take(text.nodelist, 17);
                take(text.exit_code, 18);
                take(text.derived_exit_code, 19);
                take(text.telemetry_error, 20);
                take(text.job_type_source, 21);
            }
        }
    }

    // After read_spools sorted the jobs by id.
    bool wanted(std::int64_t job_id) const {
        const auto it = std::lower_bound(out.jobs.begin(), out.jobs.end(), job_id,
                                         [](const Job& job, std::int64_t id) { return job.job_id < id; });
        return it != out.jobs.end() && it->job_id == job_id;
    }

    void start_file() {
        if (files_read++ == 0 || indexed) return;
        for (size_t i = 0; i < out.jobs.size(); ++i) job_index.emplace(out.jobs[i].job_id, i);
        indexed = true;
    }

    void read_summaries(store::Database& db, const std::string& node) {
        if (table_columns(db, "gpu_summaries").empty()) return;
        auto q = db.prepare(
            "SELECT job_id, node, gpu, samples, util_avg, util_max, mem_max, mem_total, energy_mj, power_avg_mw, "
            "power_max_mw, temp_max, xids, ecc_uncorrected_delta, verdict FROM gpu_summaries");
        while (q.step()) {
            GpuSummary s;
            s.job_id = q.column_int(0);
            if (!wanted(s.job_id)) continue;
            s.node = q.is_null(1) ? node : q.column_text(1);
            s.gpu = static_cast<int>(q.column_int(2));
            s.samples = q.column_int(3);
            s.util_avg = q.column_optional_double(4);
            s.util_max = q.column_optional_double(5);
            s.mem_max = q.column_optional_int(6);
            s.mem_total = q.column_optional_int(7);
            s.energy_mj = q.column_optional_int(8);
            s.power_avg_mw = q.column_optional_double(9);
            s.power_max_mw = q.column_optional_int(10);
            s.temp_max = q.column_optional_int(11);
            s.xids = q.column_int(12);
            s.ecc_uncorrected = q.column_optional_int(13);
            s.verdict = text_or_empty(q, 14);
            out.summaries.push_back(std::move(s));
        }
    }

    void read_diagnoses(store::Database& db) {
        const bool has_rule = table_columns(db, "diagnoses").count("rule") != 0;
        auto q = db.prepare(fmt::format(
            "SELECT job_id, restart, node, ts, category, reason, confidence, action, {} FROM diagnoses", has_rule ? "rule" : "NULL"));
        while (q.step()) {
            Diagnosis d;
            d.job_id = q.column_int(0);
            if (!wanted(d.job_id)) continue;
            d.restart = q.column_int(1);
            d.node = q.column_text(2);
            d.ts = q.column_double(3);
            d.category = q.column_text(4);
            d.reason = q.column_text(5);
            d.confidence = q.column_double(6);
            d.action = q.column_text(7);
            d.rule = text_or_empty(q, 8);
            out.diagnoses.push_back(std::move(d));
        }
    }

    void read_events(store::Database& db, const std::string& node) {
        auto q = db.prepare("SELECT job_id, gpu, ts, kind, COALESCE(code, 0) FROM gpu_events WHERE ts >= ? AND ts <= ? ORDER BY ts");
        q.bind_all(options.start.value_or(0.0), options.end.value_or(1e18));
        while (q.step()) {
            GpuEvent e;
            e.node = node;
            e.job_id = q.column_optional_int(0);
            e.gpu = static_cast<int>(q.column_int(1));
            e.ts = q.column_double(2);
            e.kind = q.column_text(3);
            e.code = q.column_int(4);
            out.events.push_back(std::move(e));
        }
    }

    void read_task_exits(store::Database& db) {
        auto q = db.prepare("SELECT job_id, step_id, node, ts, COALESCE(exit_code, 0), COALESCE(signal, 0) FROM task_exits");
        while (q.step()) {
            TaskExit t{q.column_int(0), q.column_int(1), q.column_text(2), q.column_double(3),
                       static_cast<int>(q.column_int(4)), static_cast<int>(q.column_int(5))};
            if (wanted(t.job_id)) out.task_exits.push_back(std::move(t));
        }
    }

    // Spool v5 (recovery): absent on older spools, which simply have no drains or checks.
    void read_recovery(store::Database& db, const std::string& node) {
        if (!table_columns(db, "recoveries").empty()) {
            auto q = db.prepare("SELECT node, job_id, ts, COALESCE(drain_reason, '') FROM recoveries "
                                "WHERE drained = 1 AND ts >= ? AND ts <= ? ORDER BY ts");
            q.bind_all(options.start.value_or(0.0), options.end.value_or(1e18));
            while (q.step()) out.drains.push_back({q.column_text(0), q.column_text(3), q.column_int(1), q.column_double(2)});
        }
        if (!table_columns(db, "health_checks").empty()) {
            auto q = db.prepare("SELECT node, ts, passed, detail FROM health_checks WHERE ts <= ? ORDER BY ts DESC LIMIT 1");
            q.bind(1, options.end.value_or(1e18));
            if (q.step()) {
                HealthCheck h{q.column_text(0), q.column_text(3), q.column_double(1), q.column_int(2) != 0};
                if (h.node.empty()) h.node = node;
                out.last_health.push_back(std::move(h));
            }
        }
    }
};

}  // namespace

SpoolSet read_spools(const std::string& dir, const ReadOptions& options) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".db") files.push_back(it->path());
    if (ec) throw std::runtime_error(fmt::format("cannot read telemetry directory {}: {}", dir, ec.message()));
    std::sort(files.begin(), files.end());

    SpoolSet out;
    Reader reader{options, out};
    // Jobs first, from every file, so summaries and diagnoses are kept only for jobs in the set.
    std::vector<std::pair<std::string, store::Database>> open;
    size_t rows = 0;
    for (const auto& path : files) {
        try {
            auto db = store::open_spool_read_only(path.string());
            // Sizing the job table up front spares a million-job report its regrowth and rehashing.
            auto count = db.prepare("SELECT COUNT(*) FROM jobs");
            if (count.step()) rows += static_cast<size_t>(count.column_int(0));
            open.emplace_back(path.stem().string(), std::move(db));
        } catch (const std::exception& error) {
            out.problems.push_back(fmt::format("{}: {}", path.filename().string(), error.what()));
        }
    }
    if (options.job_ids.empty()) {
        out.jobs.reserve(rows);
        reader.ranks.reserve(rows);
    }
    for (auto it = open.begin(); it != open.end();) {
        try {
            reader.read_jobs(it->second, it->first);
            ++it;
        } catch (const std::exception& error) {
            out.problems.push_back(fmt::format("{}.db: {}", it->first, error.what()));
            it = open.erase(it);
        }
    }
    // One file is already in job order (the primary key); only a merge needs the sort.
    const auto by_id = [](const Job& a, const Job& b) { return a.job_id < b.job_id; };
    if (!std::is_sorted(out.jobs.begin(), out.jobs.end(), by_id)) std::sort(out.jobs.begin(), out.jobs.end(), by_id);
    for (auto& [node, db] : open) {
        try {
            if (options.summaries) reader.read_summaries(db, node);
            if (options.diagnoses) reader.read_diagnoses(db);
            if (options.steps) reader.read_task_exits(db);
            if (options.events) {
                reader.read_events(db, node);
                reader.read_recovery(db, node);
            }
            out.nodes.push_back(node);
        } catch (const std::exception& error) {
            out.problems.push_back(fmt::format("{}.db: {}", node, error.what()));
        }
    }
    return out;
}

}  // namespace acme::acct
