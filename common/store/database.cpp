#include "common/store/database.hpp"

#include <chrono>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>

#include <sqlite3.h>

#include <fmt/format.h>

namespace acme::store {
namespace {

bool wal_present(const std::string& path) {
    struct stat st {};
    return ::stat((path + "-wal").c_str(), &st) == 0;
}

bool dir_writable(const std::string& path) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    return ::access(dir.c_str(), W_OK) == 0;
}

// "file:" URI of a path, percent-encoding what a URI would read otherwise.
std::string immutable_uri(const std::string& path) {
    std::string uri = "file:";
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') uri += static_cast<char>(c);
        else uri += fmt::format("%{:02X}", c);
    }
    return uri + "?mode=ro&immutable=1";
}

[[noreturn]] void fail(sqlite3* db, int rc, std::string_view what, std::string_view sql = {}) {
    const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
    const char* msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    throw Error(rc, fmt::format("sqlite {}: {}: {}", (file && *file) ? file : ":memory:", what, msg), std::string(sql));
}

void check(sqlite3* db, int rc, std::string_view what) {
    if (rc != SQLITE_OK) fail(db, rc, what);
}

}  // namespace

bool Error::busy() const noexcept {
    const int primary = code_ & 0xff;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(stmt_);
        db_ = std::exchange(other.db_, nullptr);
        stmt_ = std::exchange(other.stmt_, nullptr);
    }
    return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::int64_t value) {
    check(db_, sqlite3_bind_int64(stmt_, index, value), "bind");
    return *this;
}

Statement& Statement::bind(int index, double value) {
    check(db_, sqlite3_bind_double(stmt_, index, value), "bind");
    return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
    check(db_,
          sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
          "bind");
    return *this;
}

Statement& Statement::bind(int index, Null) {
    check(db_, sqlite3_bind_null(stmt_, index), "bind");
    return *this;
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const char* sql = sqlite3_sql(stmt_);
    fail(db_, rc, "step", sql ? sql : "");
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::int64_t Statement::column_int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::column_text(int column) const {
    const auto* text = sqlite3_column_text(stmt_, column);
    const int size = sqlite3_column_bytes(stmt_, column);
    return text ? std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size)) : std::string();
}

std::optional<std::int64_t> Statement::column_optional_int(int column) const {
    if (is_null(column)) return std::nullopt;
    return column_int(column);
}

std::optional<double> Statement::column_optional_double(int column) const {
    if (is_null(column)) return std::nullopt;
    return column_double(column);
}

std::optional<std::string> Statement::column_optional_text(int column) const {
    if (is_null(column)) return std::nullopt;
    return column_text(column);
}

Database::Database(const std::string& path, OpenOptions options) : path_(path) {
    int flags = SQLITE_OPEN_NOMUTEX;
    flags |= options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    if (options.create && !options.read_only) flags |= SQLITE_OPEN_CREATE;
    struct stat before {};
    const bool existed = ::stat(path.c_str(), &before) == 0;
    // A reader allowed the file but not its directory (an admin group on a 0640 spool) cannot
    // create the -shm a WAL database needs, and every query fails "readonly database". When no
    // -wal exists, nobody is writing and the main file holds everything: read it as immutable.
    // (A writer that starts meanwhile writes to a new -wal, not to the main file, until a
    // checkpoint much later.)
    std::string target = path;
    if (options.read_only && existed && !wal_present(path) && !dir_writable(path)) {
        target = immutable_uri(path);
        flags |= SQLITE_OPEN_URI;
    }
    const int rc = sqlite3_open_v2(target.c_str(), &db_, flags, nullptr);
    // Stores hold private data (log tails, other users' jobs): a file this call creates is the
    // owner's only, whatever the umask; SQLite gives the -wal and -shm files the same mode.
    // An existing file keeps the mode an admin gave it (e.g. 0640 for an admin group).
    if (rc == SQLITE_OK && !existed && (flags & SQLITE_OPEN_CREATE)) ::chmod(path.c_str(), 0600);
    if (rc != SQLITE_OK) {
        const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw Error(rc, fmt::format("sqlite {}: open: {}", path, msg));
    }
    sqlite3_extended_result_codes(db_, 1);
    // The busy timeout must be in place before anything takes a lock, switching to WAL included.
    sqlite3_busy_timeout(db_, static_cast<int>(options.busy_timeout.count()));
    try {
        exec("PRAGMA foreign_keys = ON");
        if (options.wal && !options.read_only) {
            // Two processes switching the same fresh file to WAL at once: one gets SQLITE_BUSY
            // at once, without the busy handler (seen with four samplers opening one spool).
            // Try again within the busy timeout.
            const auto deadline = std::chrono::steady_clock::now() + options.busy_timeout;
            for (;;) {
                try {
                    exec("PRAGMA journal_mode = WAL");
                    break;
                } catch (const Error& e) {
                    if (!e.busy() || std::chrono::steady_clock::now() >= deadline) throw;
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
            }
            // NORMAL is durable across process crashes in WAL mode; only a power cut can lose
            // the last transactions, which a telemetry spool can afford.
            exec("PRAGMA synchronous = NORMAL");
        }
    } catch (...) {
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw;
    }
}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        sqlite3_close_v2(db_);
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
    }
    return *this;
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::exec(std::string_view sql) {
    // sqlite3_exec needs a NUL-terminated string.
    const std::string text(sql);
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        const std::string msg = err ? err : sqlite3_errstr(rc);
        sqlite3_free(err);
        throw Error(rc, fmt::format("sqlite {}: exec: {}", path_, msg), text);
    }
}

Statement Database::prepare(std::string_view sql) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) fail(db_, rc, "prepare", sql);
    return Statement(db_, stmt);
}

std::int64_t Database::last_insert_rowid() const noexcept { return sqlite3_last_insert_rowid(db_); }

int Database::changes() const noexcept { return sqlite3_changes(db_); }

void Database::rollback_noexcept() noexcept {
    // After some errors SQLite has already rolled back; then there is no transaction to end.
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

}  // namespace acme::store
