// sacct's filters, the -j period and -T on jobs built in memory: core/sacct_selection without a
// spool or a command line (gpuacct_sacct_options_test runs the same through the command).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "acct/gpuacct/core/sacct_filters.hpp"
#include "acct/gpuacct/core/sacct_selection.hpp"

using namespace acme;

namespace {

acct::Job job(std::int64_t id, double start, double end, const std::string& nodelist = "", const std::string& name = "") {
    acct::Job j;
    j.job_id = id;
    j.start = start;
    j.end = end;
    j.mutable_text().nodelist = nodelist;
    j.mutable_text().name = name;
    return j;
}

std::vector<std::int64_t> ids(const std::vector<acct::Job>& jobs) {
    std::vector<std::int64_t> out;
    for (const auto& j : jobs) out.push_back(j.job_id);
    return out;
}

}  // namespace

TEST_CASE("sacct_filter_of: node ranges, names, GIDs, associations and time limits; bad ones are one line") {
    acct::QueryOptions o;
    o.nodelist = "n[1-3],gpu7";
    o.names = "a,b";
    o.gids = "0,1000";
    o.associations = "4,5";
    o.timelimit_min = "1:00:00";
    const auto f = acct::sacct_filter_of(o);
    CHECK(f.nodes == std::vector<std::string>{"n1", "n2", "n3", "gpu7"});
    CHECK(f.names == std::vector<std::string>{"a", "b"});
    CHECK(f.gids == std::vector<std::int64_t>{0, 1000});
    CHECK(f.associations == std::vector<std::uint32_t>{4, 5});
    CHECK(f.tl_min == 60u);
    CHECK(!f.tl_max);
    CHECK(f.any_accounting_only());

    acct::QueryOptions bad;
    bad.associations = "x";
    CHECK_THROWS_AS(acct::sacct_filter_of(bad), acct::Failure);
    bad = {};
    bad.gids = "no-such-group-here";
    CHECK_THROWS_AS(acct::sacct_filter_of(bad), acct::Failure);
    bad = {};
    bad.timelimit_max = "soon";
    CHECK_THROWS_AS(acct::sacct_filter_of(bad), acct::Failure);
}

TEST_CASE("sacct_filter_of: -M all and -L are every cluster") {
    acct::QueryOptions o;
    o.clusters = "c1,all";
    CHECK(acct::sacct_filter_of(o).clusters.empty());
    o.clusters = "c1";
    CHECK(acct::sacct_filter_of(o).clusters == std::vector<std::string>{"c1"});
    o.allclusters = true;
    CHECK(acct::sacct_filter_of(o).clusters.empty());
}

TEST_CASE("ran_on: Slurm's ranged node list or the spools' node rows") {
    auto ranged = job(1, 10, 20, "n[1-4]");
    CHECK(acct::ran_on(ranged, {"n3"}));
    CHECK(!acct::ran_on(ranged, {"n5"}));
    auto rows = job(2, 10, 20);
    rows.nodes.push_back({"gpu9", "0,1"});
    CHECK(acct::ran_on(rows, {"x", "gpu9"}));
    CHECK(!acct::ran_on(rows, {"gpu1"}));
}

TEST_CASE("apply_sacct_filter: names and nodes on any source, slurmdbd's fields only from slurmdbd") {
    acct::Context c;
    c.jobs.push_back(job(1, 10, 20, "n1", "train"));
    c.jobs.push_back(job(2, 10, 20, "n2", "eval"));
    c.jobs.push_back(job(3, 10, 20, "n2", "train"));
    acct::QueryOptions o;
    acct::SacctFilter f;
    f.names = {"train"};
    f.nodes = {"n2"};
    acct::apply_sacct_filter(f, o, false, acct::Source::spool, c);
    CHECK(ids(c.jobs) == std::vector<std::int64_t>{3});

    acct::Context d;
    d.jobs.push_back(job(1, 10, 20));
    d.jobs.push_back(job(2, 10, 20));
    d.accounted[1].qos = "high";
    d.accounted[1].cluster = "c1";
    d.accounted[2].qos = "low";
    d.accounted[2].cluster = "c2";
    acct::SacctFilter q;
    q.qos = {"high", "low"};
    q.clusters = {"c2"};
    acct::apply_sacct_filter(q, o, false, acct::Source::slurmdbd, d);
    CHECK(ids(d.jobs) == std::vector<std::int64_t>{2});
}

TEST_CASE("apply_sacct_filter: -M on the spools keeps them only for this cluster's name") {
    acct::Context c;
    c.jobs.push_back(job(1, 10, 20));
    acct::QueryOptions o;
    acct::SacctFilter f;
    f.clusters = {"elsewhere"};
    // Slurm not asked: this cluster has no name, so -M names another one.
    acct::apply_sacct_filter(f, o, false, acct::Source::spool, c);
    CHECK(c.jobs.empty());
}

TEST_CASE("apply_sacct_filter: -k/-K against slurmdbd's time limit, unlimited above every bound") {
    acct::Context c;
    c.jobs.push_back(job(1, 10, 20));
    c.jobs.push_back(job(2, 10, 20));
    c.jobs.push_back(job(3, 10, 20));
    c.accounted[1].time_limit_s = 30 * 60.0;
    c.accounted[2].time_limit_s = 120 * 60.0;
    c.accounted[3].unlimited = true;
    acct::SacctFilter f;
    f.tl_min = 60;
    f.tl_max = acct::kUnlimited;
    acct::apply_sacct_filter(f, {}, false, acct::Source::slurmdbd, c);
    CHECK(ids(c.jobs) == std::vector<std::int64_t>{2, 3});
}

TEST_CASE("outside: -j's jobs still bounded by -S/-E as sacct's window") {
    acct::Period p{100.0, 200.0};
    CHECK(!acct::outside(job(1, 150, 160), p));
    CHECK(acct::outside(job(2, 10, 50), p));    // ended before the start
    CHECK(acct::outside(job(3, 250, 260), p));  // began after the end
    CHECK(!acct::outside(job(4, 50, 0), p));    // still running from before the start
    auto pending = job(5, 0, 0);
    pending.submit = 300;
    CHECK(acct::outside(pending, p));  // not started: its submit time decides
    CHECK(!acct::outside(job(6, 10, 50), acct::Period{}));
}

TEST_CASE("truncate_to: start and end cut to the period, a running job ends at the period's end") {
    std::vector<acct::Job> jobs;
    jobs.push_back(job(1, 50, 150));
    jobs.push_back(job(2, 120, 0));
    jobs.push_back(job(3, 0, 0));
    acct::truncate_to(acct::Period{100.0, 200.0}, 1000, jobs);
    CHECK(jobs[0].start == 100);
    CHECK(jobs[0].end == 150);
    CHECK(jobs[1].start == 120);
    CHECK(jobs[1].end == 200);
    CHECK(jobs[2].start == 0);  // never started: nothing to cut
    CHECK(jobs[2].end == 0);
    std::vector<acct::Job> open;
    open.push_back(job(4, 50, 0));
    acct::truncate_to(acct::Period{100.0, std::nullopt}, 1000, open);
    CHECK(open[0].start == 100);
    CHECK(open[0].end == 0);  // no -E: the end is left as it is
}
