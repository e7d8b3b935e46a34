#include "common/store/spool_reuse.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/store/spool.hpp"

namespace acme::store {
namespace {

struct KeyedTable {
    std::string name;
    std::string time_column;  // empty: the table has none, all the job's rows move
};

// Every table with a job_id column, and its time column when it has one. Read from the schema
// itself, so a table a later migration adds moves too. The names come from sqlite_master and
// pragma_table_info, never from a user.
std::vector<KeyedTable> job_keyed_tables(Database& db) {
    std::vector<KeyedTable> tables;
    auto q = db.prepare(
        "SELECT m.name, "
        "  (SELECT c.name FROM pragma_table_info(m.name) c WHERE c.name IN ('ts', 'started_at', 'first_ts') "
        "   ORDER BY c.cid LIMIT 1) "
        "FROM sqlite_master m WHERE m.type = 'table' AND m.name <> 'jobs' "
        "AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'job_id') ORDER BY m.name");
    while (q.step()) tables.push_back({q.column_text(0), q.column_optional_text(1).value_or("")});
    return tables;
}

std::string sql_identifier(std::string_view identifier) {
    std::string out = "\"";
    for (char c : identifier) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

}  // namespace

std::string retired_spool_path(const std::string& spool_path) {
    const auto slash = spool_path.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string(".") : spool_path.substr(0, slash);
    const std::string file = slash == std::string::npos ? spool_path : spool_path.substr(slash + 1);
    return dir + "/retired/" + file;
}

namespace {

// Whether the spool's row for job_id is another job's: it holds a SLUID, and not this one.
bool held_by_another_job(Database& db, long long job_id, const std::string& sluid) {
    auto q = db.prepare("SELECT sluid FROM jobs WHERE job_id = ?");
    q.bind_all(job_id);
    if (!q.step()) return false;
    const auto held = q.column_optional_text(0);
    return held && !held->empty() && *held != sluid;
}

}  // namespace

int retire_reused_job_id(Database& db, long long job_id, const std::string& sluid, double job_start) {
    if (sluid.empty() || job_start <= 0) return 0;
    if (!held_by_another_job(db, job_id, sluid)) return 0;  // the common case: no write lock taken
    // The retired spool: the spool's directory is root's and private (0700); retired/ is too.
    const std::string path = retired_spool_path(db.path());
    const std::string dir = path.substr(0, path.rfind('/'));
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw std::runtime_error(fmt::format("{}: cannot make the retired spools' directory", dir));
    open_spool(path);  // made and migrated as any spool, then closed: attached below
    db.prepare("ATTACH DATABASE ? AS retired").bind_all(path).run();
    int moved = 0;
    try {
        db.transaction([&] {
            // Asked again under the write lock: another writer (the sampler, the epilog) may
            // have moved the rows and written this job's row since the look above.
            if (!held_by_another_job(db, job_id, sluid)) return;
            for (const auto& t : job_keyed_tables(db)) {
                const bool timed = !t.time_column.empty();
                const std::string where =
                    timed ? fmt::format("job_id = ?1 AND COALESCE({}, 0) < ?2", sql_identifier(t.time_column)) : "job_id = ?1";
                auto run = [&](const std::string& sql) {
                    auto st = db.prepare(sql);
                    st.bind(1, job_id);
                    if (timed) st.bind(2, job_start);
                    st.run();
                };
                run(fmt::format("INSERT OR REPLACE INTO retired.{0} SELECT * FROM main.{0} WHERE {1}", sql_identifier(t.name), where));
                run(fmt::format("DELETE FROM main.{} WHERE {}", sql_identifier(t.name), where));
                moved += db.changes();
            }
            db.prepare("INSERT OR REPLACE INTO retired.jobs SELECT * FROM main.jobs WHERE job_id = ?").bind_all(job_id).run();
            db.prepare("DELETE FROM main.jobs WHERE job_id = ?").bind_all(job_id).run();
            moved += db.changes();
        });
    } catch (...) {
        db.exec("DETACH DATABASE retired");
        throw;
    }
    db.exec("DETACH DATABASE retired");
    return moved;
}

}  // namespace acme::store
