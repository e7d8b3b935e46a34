// An RAII layer over SQLite: one connection, prepared statements with bound values only,
// WAL and a busy timeout by default, and a transaction helper. Every store in acme-slurm
// (node spools, evalschedd's state) goes through this file; nothing else includes sqlite3.h.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

struct sqlite3;
struct sqlite3_stmt;

namespace acme::store {

// A failed SQLite call. what() is one line naming the database file and the operation.
class Error : public std::runtime_error {
public:
    Error(int code, const std::string& message, std::string statement = {})
        : std::runtime_error(message), code_(code), statement_(std::move(statement)) {}
    int code() const noexcept { return code_; }
    // The SQL that failed, for a debugger; kept out of what(): a message names the file and
    // the problem, and SQL text in a log line or an API answer helps no user (issue 16).
    const std::string& statement() const noexcept { return statement_; }
    // SQLITE_BUSY / SQLITE_LOCKED after the busy timeout ran out.
    bool busy() const noexcept;

private:
    int code_;
    std::string statement_;
};

// A SQL NULL, for bind().
struct Null {};

class Statement {
public:
    Statement(sqlite3* db, sqlite3_stmt* stmt) noexcept : db_(db), stmt_(stmt) {}
    Statement(Statement&& other) noexcept
        : db_(std::exchange(other.db_, nullptr)), stmt_(std::exchange(other.stmt_, nullptr)) {}
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    // Parameters are 1-based, as in SQLite.
    Statement& bind(int index, std::int64_t value);
    template <std::integral T>
        requires(!std::same_as<T, std::int64_t>)
    Statement& bind(int index, T value) {
        return bind(index, static_cast<std::int64_t>(value));
    }
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view value);
    Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
    Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
    Statement& bind(int index, Null);
    template <typename T>
    Statement& bind(int index, const std::optional<T>& value) {
        return value ? bind(index, *value) : bind(index, Null{});
    }

    // Binds every argument in order, from parameter 1.
    template <typename... Args>
    Statement& bind_all(const Args&... args) {
        int index = 0;
        (bind(++index, args), ...);
        return *this;
    }

    // Advances to the next row: true while there is one, false when done.
    bool step();
    // Runs a statement that returns no rows.
    void run() {
        while (step()) {
        }
    }
    void reset();

    bool is_null(int column) const;
    std::int64_t column_int(int column) const;
    double column_double(int column) const;
    std::string column_text(int column) const;
    std::optional<std::int64_t> column_optional_int(int column) const;
    std::optional<double> column_optional_double(int column) const;
    std::optional<std::string> column_optional_text(int column) const;

private:
    sqlite3* db_;
    sqlite3_stmt* stmt_;
};

struct OpenOptions {
    bool read_only = false;
    bool create = true;
    bool wal = true;
    std::chrono::milliseconds busy_timeout{10000};
};

class Database {
public:
    explicit Database(const std::string& path, OpenOptions options = {});
    Database(Database&& other) noexcept
        : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    const std::string& path() const noexcept { return path_; }

    // Runs SQL text that binds nothing (schema, pragmas). Never for values.
    void exec(std::string_view sql);
    Statement prepare(std::string_view sql);
    std::int64_t last_insert_rowid() const noexcept;
    int changes() const noexcept;

    // Runs fn inside BEGIN IMMEDIATE ... COMMIT. IMMEDIATE takes the write lock up front, so
    // two writers wait on the busy timeout instead of failing a read-to-write upgrade with
    // SQLITE_BUSY. An exception from fn rolls back and propagates.
    template <typename Fn>
    auto transaction(Fn&& fn) -> std::invoke_result_t<Fn&> {
        exec("BEGIN IMMEDIATE");
        try {
            if constexpr (std::is_void_v<std::invoke_result_t<Fn&>>) {
                fn();
                exec("COMMIT");
            } else {
                auto result = fn();
                exec("COMMIT");
                return result;
            }
        } catch (...) {
            rollback_noexcept();
            throw;
        }
    }

private:
    void rollback_noexcept() noexcept;

    sqlite3* db_ = nullptr;
    std::string path_;
};

}  // namespace acme::store
