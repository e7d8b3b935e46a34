#include "common/util/table.hpp"

#include <algorithm>
#include <cstdlib>

#include <sys/ioctl.h>
#include <unistd.h>

namespace acme::util {
namespace {

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Byte offset of code point `n` in `text` (text.size() when it has fewer).
std::size_t offset_of(std::string_view text, std::size_t n) {
    std::size_t i = 0;
    for (std::size_t seen = 0; i < text.size(); ++seen) {
        if (seen == n) return i;
        ++i;
        while (i < text.size() && continuation(static_cast<unsigned char>(text[i]))) ++i;
    }
    return i;
}

}  // namespace

std::size_t display_width(std::string_view text) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < text.size(); ++i)
        if (!continuation(static_cast<unsigned char>(text[i])) || i == 0) ++n;
    return n;
}

std::string cut_to(std::string_view text, std::size_t width, char mark) {
    if (display_width(text) <= width) return std::string(text);
    if (width == 0) return {};
    std::string out(text.substr(0, offset_of(text, width - 1)));
    out += mark;
    return out;
}

std::size_t terminal_width(int fd) {
    if (const char* env = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const long v = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && v > 0 && v < 100000) return static_cast<std::size_t>(v);
    }
    winsize ws{};
    if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

std::string render_table(const TextTable& table, const TableStyle& style) {
    const std::size_t ncol = table.columns.size();
    auto cell = [&](const std::vector<std::string>& row, std::size_t i) -> std::string_view {
        return i < row.size() ? std::string_view(row[i]) : std::string_view();
    };
    std::string out;
    if (style.parsable || style.parsable2) {
        auto line = [&](auto&& value_of) {
            for (std::size_t i = 0; i < ncol; ++i) {
                out += value_of(i);
                if (i + 1 < ncol || style.parsable) out += style.delimiter;
            }
            out += '\n';
        };
        if (!style.noheader) line([&](std::size_t i) { return std::string_view(table.columns[i].name); });
        for (const auto& row : table.rows) line([&](std::size_t i) { return cell(row, i); });
        return out;
    }
    // Natural widths, then the widest cuttable column narrowed one at a time until the line fits
    // (or nothing can narrow further): short columns keep their text, long ones share the cut.
    std::vector<std::size_t> width(ncol, 0);
    for (std::size_t i = 0; i < ncol; ++i) {
        const auto& c = table.columns[i];
        if (c.width) {
            width[i] = *c.width;
            continue;
        }
        width[i] = style.noheader ? 0 : display_width(c.name);
        for (const auto& row : table.rows) width[i] = std::max(width[i], display_width(cell(row, i)));
    }
    if (style.width > 0 && ncol > 0) {
        std::size_t total = display_width(style.gap) * (ncol - 1);
        for (auto w : width) total += w;
        while (total > style.width) {
            std::size_t widest = ncol;
            for (std::size_t i = 0; i < ncol; ++i) {
                const auto& c = table.columns[i];
                if (!c.shrink || c.width || width[i] <= c.min_width) continue;
                if (widest == ncol || width[i] > width[widest]) widest = i;
            }
            if (widest == ncol) break;
            --width[widest];
            --total;
        }
    }
    auto line = [&](auto&& value_of, bool header) {
        std::string text;
        for (std::size_t i = 0; i < ncol; ++i) {
            const auto& c = table.columns[i];
            // A cut header is just cut: a '+' there would read as part of its name.
            std::string v = header ? std::string(std::string_view(value_of(i)).substr(0, offset_of(value_of(i), width[i])))
                                   : cut_to(value_of(i), width[i], style.cut_mark);
            const std::string pad(width[i] - display_width(v), ' ');
            text += c.right ? pad + v : v + pad;
            if (i + 1 < ncol || style.trailing_gap) text += style.gap;
        }
        if (!style.trailing_gap)
            while (!text.empty() && text.back() == ' ') text.pop_back();
        out += text + '\n';
    };
    if (!style.noheader) {
        line([&](std::size_t i) { return std::string_view(table.columns[i].name); }, true);
        if (style.dashes) {
            std::string d;
            for (std::size_t i = 0; i < ncol; ++i)
                d += std::string(width[i], '-') + (i + 1 < ncol || style.trailing_gap ? style.gap : "");
            out += d + '\n';
        }
    }
    for (const auto& row : table.rows) line([&](std::size_t i) { return cell(row, i); }, false);
    return out;
}

}  // namespace acme::util
