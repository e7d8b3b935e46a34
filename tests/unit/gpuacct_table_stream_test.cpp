// gpuacct's long listings printed as they are made (TextStream, jobs_rows): what a user reads
// must be the very text the whole table gave, only never held at once.
#include <doctest/doctest.h>

#include <sstream>

#include "acct/gpuacct/table.hpp"
#include "acct/gpuacct/views.hpp"

using namespace acme;
using gpuacct::Cell;
using gpuacct::RenderOptions;
using gpuacct::Table;

namespace {

Table numbers(int rows) {
    Table t{"test", {{"JobID", -12, ""}, {"Name", 10, ""}, {"Unseen", 6, ""}}, {"JobID", "Name"}, {}};
    for (int i = 0; i < rows; ++i)
        t.rows.push_back({gpuacct::int_cell(i), gpuacct::text_cell(i % 3 ? "a-name-longer-than-ten" : "x"),
                          gpuacct::text_cell("u")});
    return t;
}

std::string streamed(const Table& whole, const RenderOptions& options) {
    std::ostringstream out;
    gpuacct::TextStream stream(whole, options, out);
    for (auto row : whole.rows) stream.add(std::move(row));
    stream.finish();
    return out.str();
}

}  // namespace

TEST_CASE("a listing printed batch by batch reads as the whole table, header once, across batches") {
    const Table whole = numbers(10000);  // more rows than one batch holds
    for (const bool parsable2 : {false, true}) {
        RenderOptions options;
        options.parsable2 = parsable2;
        const std::string text = streamed(whole, options);
        CHECK(text == gpuacct::render_text(whole, options));
        CHECK(text.find("JobID") == text.rfind("JobID"));
    }
    RenderOptions noheader;
    noheader.noheader = true;
    CHECK(streamed(whole, noheader) == gpuacct::render_text(whole, noheader));
}

TEST_CASE("a listing with no rows prints its header alone, or nothing with -n") {
    const Table empty = numbers(0);
    RenderOptions options;
    options.parsable2 = true;
    CHECK(streamed(empty, options) == "JobID|Name\n");
    options.noheader = true;
    CHECK(streamed(empty, options).empty());
}

TEST_CASE("the stream wants the cells of the fields shown, -o's or the view's defaults") {
    std::ostringstream out;
    const Table shape = numbers(0);
    CHECK(gpuacct::TextStream(shape, {}, out).wanted() == std::vector<bool>{true, true, false});
    RenderOptions options;
    options.format = {{"Unseen", std::nullopt}};
    CHECK(gpuacct::TextStream(shape, options, out).wanted() == std::vector<bool>{false, false, true});
}

TEST_CASE("a job's row computes only the cells asked for; the others stay empty") {
    gpuacct::Context context;
    acct::Job job;
    job.job_id = 7;
    job.state = "COMPLETED";
    job.mutable_text().name = "train";
    context.jobs.push_back(std::move(job));
    context.allocations = true;
    const Table shape = gpuacct::view_shape(gpuacct::ViewKind::jobs);
    std::vector<bool> wanted(shape.fields.size(), false);
    wanted[0] = true;  // JobID
    std::vector<std::vector<Cell>> rows;
    gpuacct::jobs_rows(context, wanted, [&](std::vector<Cell>&& row) { rows.push_back(std::move(row)); });
    REQUIRE(rows.size() == 1);
    REQUIRE(rows[0].size() == shape.fields.size());
    CHECK(rows[0][0].text == "7");
    CHECK(rows[0][1].text.empty());  // JobName: not asked for
    // Every cell asked for is the one the whole view gives.
    const Table whole = gpuacct::jobs_view(context);
    rows.clear();
    gpuacct::jobs_rows(context, {}, [&](std::vector<Cell>&& row) { rows.push_back(std::move(row)); });
    for (size_t i = 0; i < shape.fields.size(); ++i) CHECK(rows[0][i].text == whole.rows[0][i].text);
    CHECK(whole.rows[0][1].text == "train");
}
