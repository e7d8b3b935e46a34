// The one way a store maps a table's columns to a struct: a table of columns, each naming its
// SQL expression beside the struct field its value goes to. The SELECT list is written from the
// same table the reader walks, so every reader of a table reads it the same way and none counts
// column positions by hand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/store/database.hpp"

namespace acme::store {

// A column read into a struct: `read` stores the statement's column `at` in the row.
template <class Row>
struct Column {
    const char* sql;  // a column name, or an expression
    void (*read)(Row&, const Statement&, int at);
};

// Reads one column into `row.*Field` by the field's type; NULL text reads as "".
template <class Row, auto Field>
void read_field(Row& row, const Statement& q, int at) {
    auto& value = row.*Field;
    using T = std::remove_cvref_t<decltype(value)>;
    if constexpr (std::is_same_v<T, std::string>) value = q.column_text(at);
    else if constexpr (std::is_same_v<T, double>) value = q.column_double(at);
    else if constexpr (std::is_same_v<T, std::optional<double>>) value = q.column_optional_double(at);
    else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) value = q.column_optional_int(at);
    else if constexpr (std::is_same_v<T, bool>) value = q.column_int(at) != 0;
    else if constexpr (std::is_integral_v<T>) value = static_cast<T>(q.column_int(at));
    else static_assert(!sizeof(T), "no column reader for this field's type");
}

// The column `sql` read into `Field` of Row: field<Row, &Row::name>("name").
template <class Row, auto Field>
constexpr Column<Row> field(const char* sql) {
    return {sql, &read_field<Row, Field>};
}

// "a, b, c" of the columns; a column whose SQL `as_null` says is not wanted (not asked for, or
// absent from an older file) is selected as NULL, so every column keeps its position.
template <class Row, std::size_t N, class AsNull>
std::string select_list(const Column<Row> (&columns)[N], AsNull&& as_null) {
    std::string out;
    for (const auto& c : columns) {
        if (!out.empty()) out += ", ";
        out += as_null(std::string_view(c.sql)) ? "NULL" : c.sql;
    }
    return out;
}

template <class Row, std::size_t N>
std::string select_list(const Column<Row> (&columns)[N]) {
    return select_list(columns, [](std::string_view) { return false; });
}

// Fills `row` from a statement whose columns from `first` on are select_list(columns).
template <class Row, std::size_t N>
void read_into(const Column<Row> (&columns)[N], const Statement& q, Row& row, int first = 0) {
    for (std::size_t i = 0; i < N; ++i) columns[i].read(row, q, first + static_cast<int>(i));
}

template <class Row, std::size_t N>
Row read_row(const Column<Row> (&columns)[N], const Statement& q, int first = 0) {
    Row row;
    read_into(columns, q, row, first);
    return row;
}

// The columns a table has in this file (none when the table is absent): a reader of older files
// selects what they lack as NULL instead of failing.
inline std::set<std::string> table_columns(Database& db, std::string_view table) {
    std::set<std::string> columns;
    auto q = db.prepare("SELECT name FROM pragma_table_info(?)");
    q.bind(1, table);
    while (q.step()) columns.insert(q.column_text(0));
    return columns;
}

}  // namespace acme::store
