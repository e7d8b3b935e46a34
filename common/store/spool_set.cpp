#include "common/store/spool_set.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <filesystem>
#include <limits>
#include <queue>
#include <set>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "common/store/columns.hpp"
#include "common/store/spool.hpp"
#include "common/store/spool_gpu.hpp"

namespace acme::store {
namespace {

namespace fs = std::filesystem;

// A spool written by an older plugin lacks the newer columns: read them as NULL instead of
// skipping the node (its telemetry is still worth reporting).
std::string select_list(const std::set<std::string>& have, std::initializer_list<std::string_view> wanted) {
    std::string out;
    for (auto name : wanted) {
        if (!out.empty()) out += ", ";
        // Expressions are only asked of a v4 spool (prepare_jobs falls back before that).
        const bool expression = name.find('(') != std::string_view::npos;
        out += expression || have.count(std::string(name)) ? std::string(name) : "NULL";
    }
    return out;
}

// The spool files of a directory, each opened read-only: a report never writes a node's file.
struct NodeFile {
    std::string node;  // the file's name without .db
    std::optional<Database> db;  // set unless failed
    bool failed = false;   // an error while reading: read no further
    std::string problem;   // the first error, as SpoolSet::problems words it
};

// Every *.db file directly in dir, in name order (which decides between nodes that disagree).
std::vector<NodeFile> open_node_files(const std::string& dir, std::vector<std::string>& problems) {
    std::error_code ec;
    std::vector<fs::path> paths;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".db") paths.push_back(it->path());
    if (ec) throw std::runtime_error(fmt::format("cannot read telemetry directory {}: {}", dir, ec.message()));
    std::sort(paths.begin(), paths.end());
    std::vector<NodeFile> files;
    for (const auto& path : paths) {
        try {
            auto db = open_spool_read_only(path.string());
            // Preparing reads the schema: a file that is not a spool fails here, before any
            // merge, and is reported as it always was.
            db.prepare("SELECT COUNT(*) FROM jobs");
            files.push_back({path.stem().string(), std::move(db), false, {}});
        } catch (const std::exception& error) {
            problems.push_back(fmt::format("{}: {}", path.filename().string(), error.what()));
        }
    }
    return files;
}

void fail(NodeFile& file, const std::exception& error) {
    if (!file.failed) file.problem = fmt::format("{}.db: {}", file.node, error.what());
    file.failed = true;
}

// The files read without error are the nodes; the others' first errors are the problems.
void report(const std::vector<NodeFile>& files, std::vector<std::string>& nodes, std::vector<std::string>& problems) {
    for (const auto& file : files) {
        if (file.failed) problems.push_back(file.problem);
        else nodes.push_back(file.node);
    }
}

// The same files again, for another thread: a connection serves one thread at a time.
std::vector<NodeFile> reopen(const std::vector<NodeFile>& files) {
    std::vector<NodeFile> out;
    for (const auto& file : files) {
        // Braces, not parentheses: clang 14 (make fuzz compiles all of libacme) has no
        // parenthesized aggregate init.
        NodeFile& copy = out.emplace_back(NodeFile{file.node, std::nullopt, file.failed, file.problem});
        if (file.failed) continue;
        try {
            copy.db = open_spool_read_only(file.db->path());
        } catch (const std::exception& error) {
            fail(copy, error);
        }
    }
    return out;
}

struct IdRange {
    std::int64_t first = std::numeric_limits<std::int64_t>::min(), last = std::numeric_limits<std::int64_t>::max();
};

// The one reader of the jobs and diagnoses tables, shared by every view. Each file's rows come
// in job id order (jobs by its primary key, diagnoses by theirs), so a k-way merge on the id
// puts together a job's rows from every node and the diagnoses that go with it, one job at a
// time: no index of a million ids, no sort, nothing kept once the job is handed on.
class JobMerge {
public:
    // Reads the jobs with ids in [first, last] (a part of the id space: see scan_spools).
    JobMerge(std::vector<NodeFile>& files, const ReadOptions& options, IdRange ids)
        : files_(files), options_(options), ids_(ids) {
        for (size_t i = 0; i < files_.size(); ++i) {
            try {
                if (files_[i].failed) continue;
                jobs_.push_back({i, prepare_jobs(*files_[i].db)});
                if (options_.diagnoses) diagnoses_.push_back({i, prepare_diagnoses(*files_[i].db)});
            } catch (const std::exception& error) {
                fail(files_[i], error);
            }
        }
    }

    // visit(Job&, std::span<const Diagnosis>) for every job, in id order.
    template <typename Visit>
    void run(Visit&& visit) {
        for (size_t c = 0; c < jobs_.size(); ++c) advance(jobs_, job_heap_, c);
        for (size_t c = 0; c < diagnoses_.size(); ++c) advance(diagnoses_, diagnosis_heap_, c);
        Job job;
        while (!job_heap_.empty()) {
            const std::int64_t id = job_heap_.top().first;
            job.job_id = id;
            Rank best;
            // Equal ids pop in file order, as the files were read before the merge.
            for (bool first = true; !job_heap_.empty() && job_heap_.top().first == id; first = false) {
                const size_t c = job_heap_.top().second;
                job_heap_.pop();
                take_row(job, jobs_[c], first, best);
                advance(jobs_, job_heap_, c);
            }
            visit(job, job_diagnoses(id));
            job = Job{};
        }
    }

private:
    struct Cursor {
        size_t file;
        Statement rows;
    };
    // (job id of the cursor's current row, cursor): the smallest id on top, then the first file.
    using Heap = std::priority_queue<std::pair<std::int64_t, size_t>, std::vector<std::pair<std::int64_t, size_t>>,
                                     std::greater<>>;

    // Which of a job's rows speaks for the job: a requeued job's nodes each recorded the run
    // they saw (the first one "PENDING" at requeue), so a final state beats a live one, then
    // more restarts, then a later end.
    struct Rank {
        bool final = false;
        std::int64_t restarts = 0;
        double end = 0;
        auto operator<=>(const Rank&) const = default;
    };

    // The batch host breaks ties between diagnoses (final_diagnosis); the listing shows it.
    bool reads_batch_host() const { return options_.full_jobs || options_.diagnoses; }

    static bool live_state(std::string_view state) {
        static constexpr std::array<std::string_view, 6> kLive = {"PENDING",   "RUNNING",    "REQUEUED",
                                                                  "SUSPENDED", "COMPLETING", "CONFIGURING"};
        for (auto live : kLive)
            if (state.starts_with(live)) return true;
        return false;
    }

    // Steps the cursor and puts it back in the heap at its new row; a file that fails to step
    // is reported and leaves the merge with what it gave so far.
    void advance(std::vector<Cursor>& cursors, Heap& heap, size_t c) {
        NodeFile& file = files_[cursors[c].file];
        if (file.failed) return;
        try {
            if (cursors[c].rows.step()) heap.emplace(cursors[c].rows.column_int(0), c);
        } catch (const std::exception& error) {
            fail(file, error);
        }
    }

    // The jobs query's parameters, numbered: ?1 and ?2 the part's first and last job id, ?3 the
    // period's start, ?4 its end, ?5 the -j ids. Each is bound only when the query names it.
    static constexpr std::string_view kIdRangeSql = " AND job_id BETWEEN ?1 AND ?2";

    // sacct's window: a job counts when it ended at or after start and began (or, pending, was
    // submitted) at or before end. A spool before v4 has only the sampler's times: the columns
    // it lacks read as NULL.
    std::string window_sql(const std::set<std::string>& have) const {
        const auto column = [&](const char* name) { return have.count(name) ? name : "NULL"; };
        std::string where;
        // No end yet counts as ending at start: one test per row instead of two.
        if (options_.start) where += fmt::format(" AND COALESCE(NULLIF({}, 0), ended_at, ?3) >= ?3", column("end_time"));
        if (options_.end)
            where += fmt::format(" AND COALESCE({}, started_at, {}, 0) <= ?4", column("start_time"), column("submit_time"));
        if (!options_.job_ids.empty()) where += " AND job_id IN (SELECT value FROM json_each(?5))";
        return where;
    }

    void bind_jobs(Statement& q) const {
        q.bind(1, ids_.first);
        q.bind(2, ids_.last);
        if (options_.start) q.bind(3, *options_.start);
        if (options_.end) q.bind(4, *options_.end);
        if (!options_.job_ids.empty()) {
            std::string ids = "[";
            for (size_t i = 0; i < options_.job_ids.size(); ++i) ids += (i ? "," : "") + std::to_string(options_.job_ids[i]);
            ids += "]";
            q.bind(5, ids);
        }
    }

    // Only the columns the views asked for: each one costs SQLite a decode per row, a million
    // times. The layout stays fixed; a column not asked for is a NULL.
    Statement prepare_jobs(Database& db) const {
        const auto have = table_columns(db, "jobs");
        const bool full = options_.full_jobs;
        std::string sql = fmt::format(
            "SELECT job_id, {}, {} FROM jobs WHERE 1{}{} ORDER BY job_id",
            select_list(have, {options_.node_rows ? "node" : "NULL", "gpus", "job_type", "state",
                               full ? "num_nodes" : "NULL", "gpus_total", "restarts", "COALESCE(submit_time, 0)",
                               "COALESCE(start_time, started_at, 0)", "COALESCE(end_time, ended_at, 0)",
                               reads_batch_host() ? "batch_host" : "NULL"}),
            full ? select_list(have, {"uid", "user", "account", "partition", "name", "nodelist", "exit_code",
                                      "derived_exit_code", "telemetry_error", "job_type_source"})
                 : std::string("NULL"),
            kIdRangeSql, window_sql(have));
        // The COALESCE expressions name v4 columns; on an older spool fall back to the sampler's.
        if (!have.count("start_time")) {
            sql = fmt::format("SELECT job_id, node, gpus, NULL, NULL, NULL, NULL, NULL, 0, COALESCE(started_at, 0), "
                              "COALESCE(ended_at, 0), NULL, {} FROM jobs WHERE 1{}{} ORDER BY job_id",
                              full ? "uid, NULL, NULL, NULL, NULL, NULL, NULL, NULL, " +
                                         std::string(have.count("telemetry_error") ? "telemetry_error" : "NULL") + ", NULL"
                                   : std::string("NULL"),
                              kIdRangeSql, window_sql(have));
        }
        auto q = db.prepare(sql);
        bind_jobs(q);
        return q;
    }

    // In job id order through the table's primary key index, from the part's first job on; no
    // upper bound, which through the index would cost a key comparison a row: the merge stops
    // asking past the part's last job. action and rule come after the evidence (the log lines,
    // often on overflow pages): read only for the per-job listing.
    Statement prepare_diagnoses(Database& db) const {
        const bool has_rule = table_columns(db, "diagnoses").count("rule") != 0;
        const bool full = options_.full_jobs;
        const auto as_null = [&](std::string_view c) {
            return (c == "evidence" && !options_.evidence) || (c == "action" && !full) || (c == "rule" && !(full && has_rule));
        };
        auto q = db.prepare(fmt::format("SELECT {} FROM diagnoses WHERE job_id >= ?1 ORDER BY job_id, restart",
                                        diagnosis_columns(as_null)));
        q.bind(1, ids_.first);
        return q;
    }

    // One node's row of the job. Job-wide fields come from the row of the best rank; any row
    // fills what is still unknown.
    void take_row(Job& job, Cursor& cursor, bool first, Rank& best) {
        Statement& q = cursor.rows;
        // Each column is asked for once (a million rows): NULL text reads as empty.
        const std::string ids = q.column_text(2);
        if (!ids.empty()) job.gpu_ids += static_cast<int>(std::count(ids.begin(), ids.end(), ',')) + 1;
        if (options_.node_rows) job.nodes.push_back({q.is_null(1) ? files_[cursor.file].node : q.column_text(1), ids});
        const bool has_state = !q.is_null(4), has_restarts = !q.is_null(7);
        const std::string row_state = has_state ? q.column_text(4) : std::string();
        const std::int64_t restarts = has_restarts ? q.column_int(7) : 0;
        const double end = q.column_double(10);
        const Rank rank{!row_state.empty() && !live_state(row_state), restarts, end};
        const bool authoritative = first || best < rank;
        if (authoritative) best = rank;
        auto take = [&](std::string& field, int column) {
            if (!q.is_null(column) && (authoritative || field.empty())) field = q.column_text(column);
        };
        auto take_int = [&](int& field, int column) {
            if (!q.is_null(column) && (authoritative || field == 0)) field = static_cast<int>(q.column_int(column));
        };
        auto take_time = [&](double& field, double v) {
            if (v > 0 && (authoritative || field == 0)) field = v;
        };
        take(job.job_type, 3);
        if (has_state && (authoritative || job.state.empty())) job.state = row_state;
        take_int(job.gpus_total, 6);
        if (has_restarts && (authoritative || job.restarts == 0)) job.restarts = static_cast<int>(restarts);
        take_time(job.submit, q.column_double(8));
        take_time(job.start, q.column_double(9));
        take_time(job.end, end);
        if (reads_batch_host()) take(job.batch_host, 11);
        if (!options_.full_jobs) return;
        take_int(job.num_nodes, 5);
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

    // The diagnoses of job `id` from every file, in file order; those of jobs outside the
    // period are passed over. One buffer serves every job.
    std::span<const Diagnosis> job_diagnoses(std::int64_t id) {
        size_t count = 0;
        while (!diagnosis_heap_.empty() && diagnosis_heap_.top().first <= id) {
            const auto [job_id, c] = diagnosis_heap_.top();
            diagnosis_heap_.pop();
            Statement& q = diagnoses_[c].rows;
            if (job_id == id) {
                if (count == diagnosis_buffer_.size()) diagnosis_buffer_.emplace_back();
                read_diagnosis(q, diagnosis_buffer_[count++]);
            }
            advance(diagnoses_, diagnosis_heap_, c);
        }
        return {diagnosis_buffer_.data(), count};
    }

    std::vector<NodeFile>& files_;
    const ReadOptions& options_;
    const IdRange ids_;
    std::vector<Cursor> jobs_, diagnoses_;
    Heap job_heap_, diagnosis_heap_;
    std::vector<Diagnosis> diagnosis_buffer_;
};

// The rest of a file, for the jobs already read (sorted by id): per-GPU summaries, task exits,
// GPU events, drains and the last health check.
struct Reader {
    const ReadOptions& options;
    SpoolSet& out;

    bool wanted(std::int64_t job_id) const {
        const auto it = std::lower_bound(out.jobs.begin(), out.jobs.end(), job_id,
                                         [](const Job& job, std::int64_t id) { return job.job_id < id; });
        return it != out.jobs.end() && it->job_id == job_id;
    }

    void read_summaries(Database& db, const std::string& node) {
        if (table_columns(db, "gpu_summaries").empty()) return;
        auto q = db.prepare(fmt::format("SELECT {} FROM gpu_summaries", gpu_summary_columns()));
        read_summary_rows(q, node, false);
        read_summaries_so_far(db, node);
    }

    // The jobs whose sampler has not stopped (jobs.ended_at unset, no gpu_summaries row yet):
    // what finish_job_gpus would write now, from the samples so far, as rows shaped like
    // gpu_summaries' so the table's one reader reads them. One pass over the samples of those
    // jobs through the (job_id, gpu, ts) index; energy is the counter's rise.
    void read_summaries_so_far(Database& db, const std::string& node) {
        auto q = db.prepare(fmt::format(R"sql(
            SELECT {} FROM (
              SELECT job_id, NULL AS node, gpu, NULL AS uuid, COUNT(*) AS samples, AVG(util_gpu) AS util_avg,
                MAX(util_gpu) AS util_max, MAX(mem_used) AS mem_max, MAX(mem_total) AS mem_total,
                MAX(energy_mj) - MIN(energy_mj) AS energy_mj, AVG(power_mw) AS power_avg_mw,
                MAX(power_mw) AS power_max_mw, MAX(temp_c) AS temp_max,
                (SELECT COUNT(*) FROM gpu_events e WHERE e.job_id = s.job_id AND e.gpu = s.gpu AND e.kind = 'xid') AS xids,
                MAX(ecc_uncorrected) - MIN(ecc_uncorrected) AS ecc_uncorrected_delta,
                CASE WHEN COUNT(util_gpu) = 0 THEN 'no-data'
                     WHEN MAX(util_gpu) <= ?1 THEN 'idle'
                     WHEN AVG(util_gpu) < ?2 THEN 'low-util'
                     ELSE 'ok' END AS verdict
              FROM gpu_samples s
              WHERE job_id IN (SELECT job_id FROM jobs WHERE ended_at IS NULL)
                AND NOT EXISTS (SELECT 1 FROM gpu_summaries g WHERE g.job_id = s.job_id)
              GROUP BY job_id, gpu)
            ORDER BY job_id, gpu)sql",
                                        gpu_summary_columns()));
        q.bind_all(kIdleMaxUtil, kLowUtilAvg);
        read_summary_rows(q, node, true);
    }

    // The rows of the jobs read (job_id is the first column); a row without a node is `node`'s.
    void read_summary_rows(Statement& q, const std::string& node, bool so_far) {
        while (q.step()) {
            if (!wanted(q.column_int(0))) continue;
            GpuSummary s = read_gpu_summary(q);
            if (s.node.empty()) s.node = node;
            s.so_far = so_far;
            out.summaries.push_back(std::move(s));
        }
    }

    void read_events(Database& db, const std::string& node) {
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

    void read_task_exits(Database& db) {
        auto q = db.prepare("SELECT job_id, step_id, node, ts, COALESCE(exit_code, 0), COALESCE(signal, 0) FROM task_exits");
        while (q.step()) {
            TaskExit t{q.column_int(0), q.column_int(1), q.column_text(2), q.column_double(3),
                       static_cast<int>(q.column_int(4)), static_cast<int>(q.column_int(5))};
            if (wanted(t.job_id)) out.task_exits.push_back(std::move(t));
        }
    }

    // Spool v6 (stalls), v7 (withdrawn): absent on older spools, which have no verdicts.
    void read_stalls(Database& db) {
        const auto columns = table_columns(db, "stalls");
        if (columns.empty()) return;
        auto q = db.prepare(fmt::format("SELECT job_id, restart, node, ts, since, COALESCE(named_node, ''), hardware, "
                                        "evidence, action, {} FROM stalls ORDER BY job_id, restart, ts",
                                        columns.count("withdrawn") ? "withdrawn" : "0"));
        while (q.step()) {
            Stall st{q.column_int(0), q.column_int(1), q.column_text(2), q.column_double(3), q.column_double(4),
                     q.column_text(5), q.column_int(6) != 0, q.column_int(9) != 0, q.column_text(7), q.column_text(8)};
            if (wanted(st.job_id)) out.stalls.push_back(std::move(st));
        }
    }

    // Spool v5 (recovery): absent on older spools, which simply have no drains or checks.
    void read_recovery(Database& db, const std::string& node) {
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

// The ids split into `parts` runs of equal width between the smallest and the largest id of
// any file: Slurm hands ids out in order, so equal widths hold about equal numbers of jobs. One
// run when the ids are too few to be worth a thread and a second connection to every file.
std::vector<IdRange> split_ids(std::vector<NodeFile>& files, size_t parts) {
    constexpr std::uint64_t kMinIdsPerPart = 1 << 16;
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    for (auto& file : files) {
        if (file.failed) continue;
        try {
            // One aggregate per query: only a lone MIN or MAX is a lookup, two are a full scan.
            auto q = file.db->prepare("SELECT (SELECT MIN(job_id) FROM jobs), (SELECT MAX(job_id) FROM jobs)");
            if (q.step() && !q.is_null(0)) {
                lo = std::min(lo, q.column_int(0));
                hi = std::max(hi, q.column_int(1));
            }
        } catch (const std::exception& error) {
            fail(file, error);
        }
    }
    std::vector<IdRange> out(1);
    if (parts < 2 || hi < lo) return out;
    // Unsigned, so that no difference of two ids can overflow.
    const std::uint64_t width = (static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo)) / parts + 1;
    if (width < kMinIdsPerPart) return out;
    out.resize(parts);
    for (size_t p = 0; p + 1 < parts; ++p) {
        out[p].last = static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + width * (p + 1) - 1);
        out[p + 1].first = out[p].last + 1;
    }
    return out;
}

}  // namespace

SpoolSet read_spools(const std::string& dir, const ReadOptions& options) {
    SpoolSet out;
    auto files = open_node_files(dir, out.problems);
    JobMerge(files, options, IdRange{}).run([&](Job& job, std::span<const Diagnosis> diagnoses) {
        out.jobs.push_back(std::move(job));
        out.diagnoses.insert(out.diagnoses.end(), diagnoses.begin(), diagnoses.end());
    });
    Reader reader{options, out};
    for (auto& file : files) {
        if (file.failed) continue;
        try {
            if (options.summaries) {
                reader.read_summaries(*file.db, file.node);
                reader.read_stalls(*file.db);
            }
            if (options.steps) reader.read_task_exits(*file.db);
            if (options.events) {
                reader.read_events(*file.db, file.node);
                reader.read_recovery(*file.db, file.node);
            }
        } catch (const std::exception& error) {
            fail(file, error);
        }
    }
    report(files, out.nodes, out.problems);
    return out;
}

SpoolScan scan_spools(const std::string& dir, const ReadOptions& options, size_t parts, const JobVisitor& visit) {
    SpoolScan out;
    auto files = open_node_files(dir, out.problems);
    const auto ranges = split_ids(files, parts);
    // Part 0 on this thread with the files as opened, each other part on its own thread with its
    // own connections, opened here before any part runs (part 0 marks the files it fails on); a
    // part's errors stay with its copy of the files until all are joined.
    std::vector<std::vector<NodeFile>> copies(ranges.size());
    for (size_t part = 1; part < ranges.size(); ++part) copies[part] = reopen(files);
    std::vector<std::exception_ptr> errors(ranges.size());
    auto read_part = [&](size_t part) {
        try {
            JobMerge(part == 0 ? files : copies[part], options, ranges[part])
                .run([&](Job& job, std::span<const Diagnosis> diagnoses) { visit(part, job, diagnoses); });
        } catch (...) {
            errors[part] = std::current_exception();
        }
    };
    {
        std::vector<std::jthread> threads;  // joined at the end of the block, even on a throw
        for (size_t part = 1; part < ranges.size(); ++part) threads.emplace_back(read_part, part);
        read_part(0);
    }
    for (const auto& error : errors)
        if (error) std::rethrow_exception(error);
    // A file that failed in any part failed: its first part's error is the one reported.
    for (size_t part = 1; part < ranges.size(); ++part)
        for (size_t i = 0; i < files.size(); ++i)
            if (!files[i].failed && copies[part][i].failed) files[i] = std::move(copies[part][i]);
    report(files, out.nodes, out.problems);
    return out;
}

}  // namespace acme::store
