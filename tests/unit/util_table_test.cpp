#include <doctest/doctest.h>

#include <cstdlib>

#include "common/util/table.hpp"

using namespace acme::util;

namespace {
TextTable sample() {
    TextTable t;
    t.columns = {{"ID", true, false, 4, std::nullopt}, {"NAME", false, true, 4, std::nullopt}, {"REASON", false, true, 6, std::nullopt}};
    t.rows = {{"7", "gsm8k", "ok"}, {"12", "a-very-long-dataset-name", std::string(100, 'x')}};
    return t;
}
std::size_t widest_line(const std::string& s) {
    std::size_t w = 0, at = 0;
    for (std::size_t nl; (nl = s.find('\n', at)) != std::string::npos; at = nl + 1) w = std::max(w, display_width(s.substr(at, nl - at)));
    return w;
}
}  // namespace

TEST_CASE("a table wider than the width is cut to it, widest column first, cut cells marked '+'") {
    TableStyle s;
    s.width = 40;
    const std::string out = render_table(sample(), s);
    CHECK(widest_line(out) <= 40);
    CHECK(out.find("ID  NAME") == 0);
    CHECK(out.find(" 7  gsm8k") != std::string::npos);   // short cells keep their text, ids keep width
    CHECK(out.find("x+\n") != std::string::npos);
    s.width = 0;  // --long
    CHECK(render_table(sample(), s).find(std::string(100, 'x')) != std::string::npos);
}

TEST_CASE("parsable2 is sacct -P: '|' between cells, nothing cut, no trailing '|'; parsable has one") {
    TableStyle s;
    s.parsable2 = true;
    CHECK(render_table(sample(), s) == "ID|NAME|REASON\n7|gsm8k|ok\n12|a-very-long-dataset-name|" + std::string(100, 'x') + "\n");
    s.parsable2 = false;
    s.parsable = true;
    s.noheader = true;
    CHECK(render_table(sample(), s).find("7|gsm8k|ok|\n") == 0);
}

TEST_CASE("fixed widths, dashes and right-justification, as gpuacct's sacct-style tables need") {
    TextTable t;
    t.columns = {{"JobID", true, false, 4, 8}, {"State", false, true, 4, 6}};
    t.rows = {{"123", "COMPLETED"}};
    TableStyle s;
    s.dashes = true;
    s.gap = " ";
    CHECK(render_table(t, s) == "   JobID State\n-------- ------\n     123 COMPL+\n");
}

TEST_CASE("sacct's print_fields: a gap after every field, the last too, and --delimiter for -p/-P") {
    TextTable t;
    t.columns = {{"JobID", false, false, 4, 6}, {"State", true, false, 4, 4}};
    t.rows = {{"123", "FAILED"}};
    TableStyle s;
    s.dashes = true;
    s.gap = " ";
    s.trailing_gap = true;
    CHECK(render_table(t, s) == "JobID  Stat \n------ ---- \n123    FAI+ \n");
    s.noheader = true;
    CHECK(render_table(t, s) == "123    FAI+ \n");
    s.parsable2 = true;
    s.noheader = false;
    s.delimiter = "::";
    CHECK(render_table(t, s) == "JobID::State\n123::FAILED\n");
    s.parsable2 = false;
    s.parsable = true;
    CHECK(render_table(t, s) == "JobID::State::\n123::FAILED::\n");
}

TEST_CASE("widths count UTF-8 code points and never cut inside one") {
    CHECK(display_width("naïve") == 5);
    CHECK(cut_to("naïveté", 4, '+') == "naï+");
    CHECK(cut_to("abc", 3, '+') == "abc");
    CHECK(cut_to("abc", 0, '+').empty());
}

TEST_CASE("the width: COLUMNS, else 80 when not a terminal") {
    setenv("COLUMNS", "123", 1);
    CHECK(terminal_width(-1) == 123);
    setenv("COLUMNS", "junk", 1);
    CHECK(terminal_width(-1) == 80);
    unsetenv("COLUMNS");
    CHECK(terminal_width(-1) == 80);
}
