#include "acct/gpuacct/table.hpp"

#include <cmath>
#include <cstdlib>
#include <ostream>

#include <fmt/format.h>

#include "acct/gpuacct/core/sacct_time.hpp"
#include "common/util/table.hpp"

namespace acme::gpuacct {
namespace {

// sacct's convert_num_unit: the largest unit that keeps the value >= 1, two decimals unless whole.
std::string with_unit(double value, double base, std::string_view units) {
    size_t unit = 0;
    while (std::fabs(value) >= base && unit + 1 < units.size()) {
        value /= base;
        ++unit;
    }
    const std::string suffix = units[unit] == ' ' ? "" : std::string(1, units[unit]);
    if (value == std::floor(value)) return fmt::format("{:.0f}{}", value, suffix);
    return fmt::format("{:.2f}{}", value, suffix);
}

std::vector<acct::FieldSpec> selected(const Table& table, const RenderOptions& options) {
    if (!options.format.empty()) return options.format;
    std::vector<acct::FieldSpec> out;
    for (auto name : table.defaults) out.push_back({name, std::nullopt});
    return out;
}

size_t index_of(const Table& table, std::string_view name) {
    for (size_t i = 0; i < table.fields.size(); ++i)
        if (table.fields[i].name == name) return i;
    throw std::logic_error(fmt::format("gpuacct: view {} has no field {}", table.view, name));
}

}  // namespace

Cell text_cell(std::string text) {
    Cell c;
    c.value = text.empty() ? nlohmann::json() : nlohmann::json(text);
    c.text = std::move(text);
    return c;
}

Cell int_cell(std::optional<std::int64_t> value) {
    if (!value) return {};
    return {std::to_string(*value), *value};
}

Cell real_cell(std::optional<double> value, int decimals) {
    if (!value || !std::isfinite(*value)) return {};
    const double scale = std::pow(10.0, decimals);
    const double rounded = std::round(*value * scale) / scale;
    return {fmt::format("{:.{}f}", *value, decimals), rounded};
}

Cell time_cell(double epoch) {
    if (!(epoch > 0)) return {"Unknown", nullptr};
    return {acct::format_sacct_time(epoch), static_cast<std::int64_t>(epoch)};
}

Cell elapsed_cell(std::optional<double> s) {
    if (!s) return {};
    return {acct::format_elapsed(*s), static_cast<std::int64_t>(std::llround(*s))};
}

Cell bytes_cell(std::optional<std::int64_t> bytes) {
    if (!bytes) return {};
    return {with_unit(static_cast<double>(*bytes), 1024, " KMGTP"), *bytes};
}

Cell bytes_cell(std::optional<std::int64_t> bytes, char unit, char original) {
    if (!bytes || unit == 0) return bytes_cell(bytes);
    static constexpr std::string_view kUnits = " KMGTP";
    const char want = unit == 'n' ? original : unit;
    const auto power = kUnits.find(want);
    if (power == std::string_view::npos || want == ' ') return bytes_cell(bytes);
    const double value = static_cast<double>(*bytes) / std::pow(1024.0, static_cast<double>(power));
    // sacct's convert_num_unit: two decimals unless whole.
    const std::string text = value == std::floor(value) ? fmt::format("{:.0f}{}", value, want) : fmt::format("{:.2f}{}", value, want);
    return {text, *bytes};
}

Cell sacct_bytes_cell(std::optional<std::int64_t> bytes, char unit, char original) {
    if (!bytes || unit != 0) return bytes_cell(bytes, unit, original);
    // src/common/slurm_protocol_defs.c convert_num_unit2, CONVERT_NUM_UNIT_EXACT: divide while
    // the value is a multiple of half the divisor (2.5G is still exact).
    static constexpr std::string_view kUnits = " KMGTP";
    double value = static_cast<double>(*bytes);
    size_t power = 0;
    while (value >= 1024 && std::fmod(std::floor(value), 512) == 0 && power + 1 < kUnits.size()) {
        value /= 1024;
        ++power;
    }
    const std::string suffix = kUnits[power] == ' ' ? "" : std::string(1, kUnits[power]);
    if (*bytes == 0) return {"0", *bytes};
    const std::string text = value == std::floor(value) ? fmt::format("{:.0f}{}", value, suffix) : fmt::format("{:.2f}{}", value, suffix);
    return {text, *bytes};
}

Cell cpu_time_cell(std::optional<double> s) {
    if (!s) return {};
    return {acct::format_cpu_time(*s), static_cast<std::int64_t>(std::llround(*s))};
}

Cell energy_cell(std::optional<double> joules) {
    if (!joules) return {};
    return {with_unit(*joules, 1000, " KMGTP"), std::llround(*joules)};
}

// sacct's print_fields on the commands' one table renderer: every field at its width (a
// negative one left-justified), a gap after each field, the last too, a dashed line under the
// header; the fixed widths are sacct's, so the line is never capped to the terminal.
std::string render_text(const Table& table, const RenderOptions& options) {
    util::TextTable text;
    std::vector<size_t> columns;
    for (const auto& s : selected(table, options)) {
        columns.push_back(index_of(table, s.name));
        const int width = s.width.value_or(table.fields[columns.back()].width);
        text.columns.push_back({std::string(s.name), width > 0, false, 0, static_cast<size_t>(std::abs(width))});
    }
    for (const auto& row : table.rows) {
        std::vector<std::string> cells;
        for (size_t c : columns) cells.push_back(row[c].text);
        text.rows.push_back(std::move(cells));
    }
    util::TableStyle style;
    style.width = 0;
    style.parsable = options.parsable;
    style.parsable2 = options.parsable2 && !options.parsable;
    style.delimiter = options.delimiter;
    style.noheader = options.noheader;
    style.dashes = true;
    style.gap.assign(1, ' ');  // (not = " ": GCC 12 warns a false -Wrestrict on it)
    style.trailing_gap = true;
    return util::render_table(text, style);
}

// Big enough that a batch's string costs nothing per row, small enough to stay a few MB.
constexpr size_t kBatchRows = 4096;

TextStream::TextStream(const Table& shape, const RenderOptions& options, std::ostream& out)
    : batch_{shape.view, shape.fields, shape.defaults, {}}, options_(options), out_(out), wanted_(shape.fields.size(), false) {
    for (const auto& s : selected(shape, options)) wanted_[index_of(shape, s.name)] = true;
    batch_.rows.reserve(kBatchRows);
}

void TextStream::add(std::vector<Cell>&& row) {
    batch_.rows.push_back(std::move(row));
    if (batch_.rows.size() >= kBatchRows) flush();
}

void TextStream::finish() {
    if (!batch_.rows.empty() || !header_done_) flush();
}

void TextStream::flush() {
    RenderOptions options = options_;
    options.noheader = options_.noheader || header_done_;
    out_ << render_text(batch_, options);
    header_done_ = true;
    batch_.rows.clear();
}

nlohmann::json render_json(const Table& table, const RenderOptions& options) {
    const auto specs = options.format.empty() ? std::vector<acct::FieldSpec>() : options.format;
    std::vector<size_t> columns;
    if (specs.empty())
        for (size_t i = 0; i < table.fields.size(); ++i) columns.push_back(i);
    else
        for (const auto& s : specs) columns.push_back(index_of(table, s.name));
    nlohmann::json fields = nlohmann::json::array(), rows = nlohmann::json::array();
    for (size_t c : columns) fields.push_back(table.fields[c].name);
    for (const auto& row : table.rows) {
        nlohmann::json object = nlohmann::json::object();
        for (size_t c : columns) object[std::string(table.fields[c].name)] = row[c].value;
        rows.push_back(std::move(object));
    }
    return {{"view", table.view}, {"fields", fields}, {"rows", rows}};
}

std::string render_helpformat(const Table& table) {
    std::string out;
    size_t n = 0;
    for (const auto& f : table.fields) {
        out += fmt::format("{:<20}", f.name);
        if (++n % 4 == 0) {
            while (!out.empty() && out.back() == ' ') out.pop_back();
            out += '\n';
        }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (n % 4) out += '\n';
    return out;
}

std::vector<std::string_view> field_names(const Table& table) {
    std::vector<std::string_view> out;
    for (const auto& f : table.fields) out.push_back(f.name);
    return out;
}

}  // namespace acme::gpuacct
