// A view's output: named fields with sacct's default widths, rows of cells that carry both the
// text a table shows and the typed value --json gives. Rendering follows sacct's print_fields:
// a header and a dashed line, right-justified unless the width is negative, values longer than
// the width cut with a trailing '+'; -P/--parsable2 joins fields with '|' untouched. The text is drawn by
// the commands' one table renderer, common/util/table.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "acct/gpuacct/core/format_spec.hpp"

namespace acme::gpuacct {

struct Field {
    std::string_view name;
    int width;               // sacct's default: negative is left-justified
    std::string_view help;   // one line for --helpformat and the man page
};

struct Cell {
    std::string text;
    nlohmann::json value;  // null when empty
};

Cell text_cell(std::string text);
Cell int_cell(std::optional<std::int64_t> value);
Cell real_cell(std::optional<double> value, int decimals);
Cell time_cell(double epoch);                // sacct's YYYY-MM-DDTHH:MM:SS; JSON: epoch seconds
Cell elapsed_cell(std::optional<double> s);  // [DD-]HH:MM:SS; JSON: seconds
Cell bytes_cell(std::optional<std::int64_t> bytes);   // 1.50G (base 1024); JSON: bytes
// The same with sacct's --units (unit 'K'..'P': always that unit) and --noconvert (unit 'n':
// the unit the value was recorded in, `original`); unit 0 is the one-argument form.
Cell bytes_cell(std::optional<std::int64_t> bytes, char unit, char original);
// sacct's own memory fields (ReqMem, MaxRSS): with no --units, converted as sacct's default
// (CONVERT_NUM_UNIT_EXACT) does, only while no precision is lost ("8000M", "8G", "2396K").
Cell sacct_bytes_cell(std::optional<std::int64_t> bytes, char unit, char original);
Cell cpu_time_cell(std::optional<double> s);  // sacct's TotalCPU: MM:SS.mmm below an hour; JSON: seconds
Cell energy_cell(std::optional<double> joules);      // 12.30K (base 1000); JSON: joules

struct Table {
    std::string view;                      // jobs | failures | nodes | summary
    std::vector<Field> fields;             // every field the view has
    std::vector<std::string_view> defaults;
    std::vector<std::vector<Cell>> rows;   // cells in `fields` order
};

struct RenderOptions {
    std::vector<acct::FieldSpec> format;   // empty: the view's defaults
    bool parsable2 = false, parsable = false, noheader = false;
    std::string delimiter = "|";  // sacct's --delimiter, for -p and -P
};

std::string render_text(const Table& table, const RenderOptions& options);

// render_text of a long listing printed a batch of rows at a time, so its rows are never all
// held: sacct's widths are fixed (no column is sized by its rows), so each batch prints as its
// rows would in the whole table. The header comes once, before the first row, or alone when
// there is none.
class TextStream {
public:
    // `shape`: the view's fields and defaults (its rows are not read).
    TextStream(const Table& shape, const RenderOptions& options, std::ostream& out);
    // The fields the output shows, by field index: the cells a row needs computed.
    const std::vector<bool>& wanted() const { return wanted_; }
    void add(std::vector<Cell>&& row);
    // Prints what is left; the header when no row came.
    void finish();

private:
    void flush();

    Table batch_;
    RenderOptions options_;
    std::ostream& out_;
    std::vector<bool> wanted_;
    bool header_done_ = false;
};
// {"view": ..., "fields": [...], "rows": [{field: value}]}, only the selected fields.
nlohmann::json render_json(const Table& table, const RenderOptions& options);
// --helpformat: the field names, several a line, as sacct -e prints them.
std::string render_helpformat(const Table& table);
std::vector<std::string_view> field_names(const Table& table);

}  // namespace acme::gpuacct
