// Text tables for the commands (evalsched, and gpuacct's sacct-style views): columns sized to
// their contents, then capped so a line fits the terminal, as sacct cuts a value that does not
// fit its field and marks it with a trailing '+'. The width comes from COLUMNS, else the
// terminal (TIOCGWINSZ on stdout), else 80 when stdout is not a terminal, so a pipe or a job
// log gets the same lines as an 80-column terminal; --long (width 0) shows every cell whole,
// and -P/--parsable2 joins the cells with '|' untouched, with a header line and no trailing '|'
// (sacct -P: the form scripts read). Widths count code points, so UTF-8 is never cut mid-character.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acme::util {

struct TableColumn {
    std::string name;
    bool right = false;        // right-justified (numbers)
    bool shrink = true;        // may be cut to fit the width; false for ids and counts
    std::size_t min_width = 4; // cut no narrower than this (the header may be cut too)
    std::optional<std::size_t> width;  // a fixed width (sacct's %N); longer cells are cut
};

struct TextTable {
    std::vector<TableColumn> columns;
    std::vector<std::vector<std::string>> rows;  // a short row is padded with empty cells
};

struct TableStyle {
    std::size_t width = 80;    // the line's cap in columns; 0: no cap (--long)
    bool parsable2 = false;    // -P: the delimiter between cells, nothing cut or padded
    bool parsable = false;     // -p: the same with a trailing delimiter
    std::string delimiter = "|";  // of -p and -P (sacct's --delimiter)
    bool noheader = false;
    bool dashes = false;       // a dashed line under the header, as sacct prints
    std::string gap = "  ";    // between columns
    // sacct's print_fields writes the gap after every field, the last one too, so its lines
    // end in a space; false trims the line's trailing blanks instead.
    bool trailing_gap = false;
    char cut_mark = '+';       // the last character of a cut cell
};

std::string render_table(const TextTable& table, const TableStyle& style);

// COLUMNS when it is a number > 0, else the terminal's width when `fd` is one, else 80.
std::size_t terminal_width(int fd);

// Code points in `text` (invalid UTF-8 bytes count one each).
std::size_t display_width(std::string_view text);
// `text` cut to `width` code points, the last one replaced by `mark` when cut (width 0: "").
std::string cut_to(std::string_view text, std::size_t width, char mark);

}  // namespace acme::util
