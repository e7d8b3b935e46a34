// The one way evalschedd maps a SELECT to what it reads: a table of columns, each naming its
// SQL expression beside where its value goes (a struct's field, or a JSON view's key). The
// SELECT list is written from the same table the reader walks, so the two cannot drift apart
// and no reader counts column positions by hand.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/store/database.hpp"

namespace acme::evalsched {

// A column read into a struct: `read` stores the statement's column `at` in the row.
template <class Row>
struct Column {
    const char* name;
    void (*read)(Row&, const store::Statement&, int at);
};

// "a.id, a.trial, ..." (alias "" for none).
template <class Row, std::size_t N>
std::string select_list(const Column<Row> (&columns)[N], std::string_view alias = "") {
    std::string out;
    for (const auto& c : columns) out += fmt::format("{}{}{}{}", out.empty() ? "" : ", ", alias, alias.empty() ? "" : ".", c.name);
    return out;
}

// The row from a statement whose columns from `first` on are select_list(columns).
template <class Row, std::size_t N>
Row read_row(const Column<Row> (&columns)[N], const store::Statement& q, int first = 0) {
    Row r;
    for (std::size_t i = 0; i < N; ++i) columns[i].read(r, q, first + static_cast<int>(i));
    return r;
}

// A column of a JSON view: the SQL expression, the key it is shown under, and how it reads.
struct JsonColumn {
    enum class Kind {
        integer,
        real,
        text,
        boolean,          // an integer, shown true when not 0
        integer_or_null,  // NULL shown as null
        real_or_null,
        text_or_empty,    // NULL shown as ""
    };
    const char* sql;
    const char* key;
    Kind kind;
};

// "e.id, e.name, ..." as written in the table.
template <std::size_t N>
std::string select_list(const JsonColumn (&columns)[N]) {
    std::string out;
    for (const auto& c : columns) out += fmt::format("{}{}", out.empty() ? "" : ", ", c.sql);
    return out;
}

inline nlohmann::json json_value(const JsonColumn& c, const store::Statement& q, int at) {
    using K = JsonColumn::Kind;
    switch (c.kind) {
    case K::integer: return q.column_int(at);
    case K::real: return q.column_double(at);
    case K::text: return q.column_text(at);
    case K::boolean: return q.column_int(at) != 0;
    case K::integer_or_null: return q.is_null(at) ? nlohmann::json(nullptr) : nlohmann::json(q.column_int(at));
    case K::real_or_null: return q.is_null(at) ? nlohmann::json(nullptr) : nlohmann::json(q.column_double(at));
    case K::text_or_empty: return q.column_optional_text(at).value_or("");
    }
    return nullptr;
}

// The row as a JSON object keyed by the table's keys (added to `into`, which may hold more).
template <std::size_t N>
nlohmann::json row_json(const JsonColumn (&columns)[N], const store::Statement& q, nlohmann::json into = nlohmann::json::object()) {
    for (std::size_t i = 0; i < N; ++i) into[columns[i].key] = json_value(columns[i], q, static_cast<int>(i));
    return into;
}

}  // namespace acme::evalsched
