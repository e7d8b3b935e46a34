// Issue 16: one evaluation's size is bounded and built in linear time, /metrics counters only
// go up, and every message quoting a request is one clean bounded line.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evalsched/cli/render.hpp"
#include "evalsched/core/trials.hpp"
#include "evalsched/daemon/accounts.hpp"
#include "evalsched/daemon/api/api_request.hpp"
#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/store/schema.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;

namespace {

// A suite of `n` datasets; sharded ones (a 2 h prior each) split into several trials.
std::string suite_of(int n, bool sharded) {
    std::string s = "[suite]\nname = \"big\"\ncommand = \"eval {checkpoint} {dataset} {shard} {num_shards} {output}\"\n"
                    "metric_command = \"score {dataset} {output}\"\n";
    for (int i = 0; i < n; ++i)
        s += fmt::format("[[dataset]]\nname = \"d{}\"\nkind = \"generation\"\n{}", i, sharded ? "prior = \"2h\"\nshard = true\n" : "prior = \"10m\"\n");
    return s;
}

// Trials one sharded dataset of suite_of makes (the cost model decides the shard count).
std::size_t shards_per_dataset() {
    const Suite suite = parse_suite(suite_of(1, true), "s.toml");
    return make_trials(suite, Checkpoint{"r/s", "\"$S\"", "/out", ModelSpec{}}, PriorBook{}).trials.size();
}

struct Api {
    acme::test::TempDir dir;
    acme::store::Database db = acme::store::open_evalsched_store(dir.file("e.db"));
    DaemonConfig config;
    Caller alice{1001, 1001, "alice", false};
    ApiCaches caches;
    std::function<void()> wake = [] {};

    Reply call(std::string_view method, std::string_view path, const std::string& body = "") {
        const RouteMatch match = match_route(method, path).value();
        RouteContext ctx{db, config, alice, match, body, caches, wake, 0, 1000};
        return match.row->handler(ctx);
    }
    Reply submit(const std::string& suite) {
        return call("POST", "/v1/evaluations", nlohmann::json{{"checkpoint", "/ckpt/run7/step-1"}, {"suite", suite}}.dump());
    }
    std::int64_t count(const std::string& table) {
        auto q = db.prepare("SELECT COUNT(*) FROM " + table);
        q.step();
        return q.column_int(0);
    }
};

// The value of one series in Prometheus text ("name{labels} value").
double series(const std::string& text, const std::string& name) {
    const auto at = text.find("\n" + name + " ");
    REQUIRE_MESSAGE(at != std::string::npos, name << " missing");
    return std::stod(text.substr(at + name.size() + 2));
}

}  // namespace

TEST_CASE("max_datasets: a suite at the limit is stored, one over it is refused naming the limit and the count") {
    Api api;
    api.config.max_datasets = 50;
    const Reply ok = api.submit(suite_of(50, false));
    CHECK(ok.code == 201);
    CHECK(api.count("trials") == 50);
    CHECK(api.count("metric_jobs") == 50);
    const Reply over = api.submit(suite_of(51, false));
    CHECK(over.code == 400);
    CHECK(over.text.find("51 datasets") != std::string::npos);
    CHECK(over.text.find("max_datasets=50") != std::string::npos);
    CHECK(api.count("evaluations") == 1);
}

TEST_CASE("max_trials: an evaluation whose shards exceed it is refused and leaves nothing behind") {
    Api api;
    const auto n = shards_per_dataset();
    REQUIRE(n > 1);
    api.config.max_trials = static_cast<int>(2 * n);
    // Each 2 h dataset splits into n shards: two datasets fit, three do not.
    CHECK(api.submit(suite_of(2, true)).code == 201);
    const std::int64_t trials = api.count("trials");
    CHECK(trials == static_cast<std::int64_t>(2 * n));
    const Reply over = api.submit(suite_of(3, true));
    CHECK(over.code == 400);
    CHECK(over.text.find(fmt::format("{} trials", 3 * n)) != std::string::npos);
    CHECK(over.text.find(fmt::format("max_trials={}", 2 * n)) != std::string::npos);
    CHECK(api.count("evaluations") == 1);
    CHECK(api.count("trials") == trials);
}

TEST_CASE("20,000 sharded datasets build (linear construction: a scan per dataset was quadratic)") {
    const auto n = shards_per_dataset();
    Suite suite;
    suite.name = "huge";
    for (int i = 0; i < 20000; ++i) {
        Dataset d;
        d.name = fmt::format("d{}", i);
        d.kind = TaskKind::generation;
        d.command = "eval {checkpoint} {dataset} {shard} {num_shards} {output}";
        d.metric_command = "score {dataset} {output}";
        d.prior_s = 7200;
        d.shard = true;
        suite.datasets.push_back(d);
    }
    const TrialSet set = make_trials(suite, Checkpoint{"r/s", "\"$S\"", "/out", ModelSpec{}}, PriorBook{});
    CHECK(set.trials.size() == 20000 * n);
    REQUIRE(set.metrics.size() == 20000);
    CHECK(set.metrics.back().after.size() == n);
    // Every trial learnt the metric job it unlocks.
    std::size_t with_metric = 0;
    for (const auto& t : set.trials) with_metric += t.metric_s > 0;
    CHECK(with_metric == set.trials.size());
}

TEST_CASE("/metrics: summaries' _sum and _count cover every evaluation, bytes never go down, every state is a series") {
    Api api;
    const std::string empty = metrics_text(api.db);
    for (const char* s : {"pending", "submitting", "queued", "running", "done", "failed", "cancelled"})
        CHECK(empty.find(fmt::format("evalsched_trials{{state=\"{}\"}} 0\n", s)) != std::string::npos);
    CHECK(empty.find("evalsched_metric_jobs{state=\"waiting\"} 0\n") != std::string::npos);

    REQUIRE(api.submit(suite_of(1, false)).code == 201);
    // 1,024 evaluations (doubling the first), finished 10 s after submission each.
    for (int i = 0; i < 10; ++i)
        api.db.exec("INSERT INTO evaluations (name, checkpoint, path, suite_name, suite_file, uid, gid, user, priority, params_b,"
                    " checkpoint_bytes, output_dir, state, submitted_at) SELECT name, checkpoint, path, suite_name, suite_file, uid,"
                    " gid, user, priority, params_b, checkpoint_bytes, output_dir, state, submitted_at FROM evaluations");
    api.db.exec("UPDATE evaluations SET state = 'done', finished_at = submitted_at + 10");
    const std::string text = metrics_text(api.db);
    CHECK(series(text, "evalsched_evaluation_makespan_seconds_count") == 1024);
    CHECK(series(text, "evalsched_evaluation_makespan_seconds_sum") == doctest::Approx(10240));

    // A staging's bytes come from a file in the user's output directory: a negative value
    // there must not make a counter go down.
    api.db.exec("INSERT INTO stagings (evaluation, node, copied, bytes, seconds, at) VALUES (1, 'n1', 1, 4000, 2, 1000)");
    const double before = series(metrics_text(api.db), "evalsched_shared_storage_bytes_total");
    CHECK(before == 4000);
    api.db.exec("INSERT INTO stagings (evaluation, node, copied, bytes, seconds, at) VALUES (1, 'n1', 1, -3000, 2, 1001)");
    CHECK(series(metrics_text(api.db), "evalsched_shared_storage_bytes_total") >= before);

    // A finished trial's prediction error is counted once, whatever prior_runs keeps.
    api.db.exec("UPDATE trials SET state = 'done', median_s = 100");
    api.db.exec("UPDATE trials SET run_s = 150");
    const std::string after = metrics_text(api.db);
    CHECK(series(after, "evalsched_prior_relative_error_count") == 1);
    CHECK(series(after, "evalsched_prior_relative_error_sum") == doctest::Approx(0.5));
    api.db.exec("DELETE FROM prior_runs");
    CHECK(series(metrics_text(api.db), "evalsched_prior_relative_error_count") == 1);
}

TEST_CASE("messages quoting a request are one bounded line without control characters") {
    CHECK(printable("a\x1b[31mb\nc") == "a\\x1b[31mb\\x0ac");
    CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");  // UTF-8 text stays
    CHECK(printable("x\xc2\x9b" "1m") == "x\\xc2\\x9b1m");  // C1 CSI
    const std::string url(100000, 'a');
    const std::string p = printable(url);
    CHECK(p.size() < 120);
    CHECK(p.find("(100000 bytes)") != std::string::npos);
    try {
        match_route("GET", "/v1/evaluations/\x1b]0;pwned\x07");
        FAIL("should throw");
    } catch (const RequestError& e) {
        const std::string what = e.what();
        CHECK(what.find('\x1b') == std::string::npos);
        CHECK(what.find("\\x1b") != std::string::npos);
    }
    // Any error reply: a suite's key with an escape sequence comes back escaped.
    Api api;
    const Reply r = api.submit("[suite]\nname = \"t\"\ncommand = \"e {checkpoint} {dataset} {output}\"\n\"x\\u001b[2J\" = 1\n"
                               "[[dataset]]\nname = \"a\"\nkind = \"generation\"\n");
    CHECK(r.code == 400);
    const std::string error = nlohmann::json::parse(r.text).at("error").get<std::string>();
    CHECK(error.find('\x1b') == std::string::npos);
    CHECK(error.find('\n') == std::string::npos);
}

TEST_CASE("store errors name the file and the problem, not the SQL") {
    acme::test::TempDir dir;
    acme::store::Database db(dir.file("t.db"));
    db.exec("CREATE TABLE t (x INTEGER NOT NULL)");
    try {
        db.prepare("INSERT INTO t (x) VALUES (NULL) -- a long statement the user never wrote").run();
        FAIL("should throw");
    } catch (const acme::store::Error& e) {
        const std::string what = e.what();
        CHECK(what.find("t.db") != std::string::npos);
        CHECK(what.find("NOT NULL") != std::string::npos);
        CHECK(what.find("INSERT INTO") == std::string::npos);
        CHECK(e.statement().find("INSERT INTO") != std::string::npos);
    }
}

TEST_CASE("evalsched.conf: the limits' keys, and one line for a bad value") {
    const DaemonConfig c = parse_config(
        "request_timeout=2s\nmax_header_bytes=16K\nmax_body_bytes=1M\nmax_connections_per_user=8\nmax_datasets=10\nmax_trials=20\n", "e.conf");
    CHECK(c.request_timeout_s == 2);
    CHECK(c.max_header_bytes == 16000);
    CHECK(c.max_body_bytes == 1e6);
    CHECK(c.max_connections_per_user == 8);
    CHECK(c.max_datasets == 10);
    CHECK(c.max_trials == 20);
    CHECK_THROWS_WITH_AS(parse_config("max_trials=0\n", "e.conf"), doctest::Contains("e.conf:1: max_trials=0 is out of range"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_config("max_header_bytes=10\n", "e.conf"), doctest::Contains("1K to 1G"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_config(std::string("max_datasets=") + std::string(300, '9') + "\n", "e.conf"),
                         doctest::Contains("out of range"), ConfigError);
}

TEST_CASE("the CLI's messages: one line, bounded, control characters escaped") {
    CHECK(one_line("bad \x1b[2Jvalue\n") == "bad \\x1b[2Jvalue\\x0a");
    const std::string digits(320, '9');
    const std::string l = one_line("--params-b: Value -1 not in range 0 to " + digits);
    CHECK(l.size() <= 203);
    CHECK(l.substr(l.size() - 3) == "...");
}

TEST_CASE("user and group lookups from two threads at once never answer with the other thread's user") {
    // getpwuid's static buffer let the scheduler thread's lookup rename the API thread's caller.
    const auto root = acme::evalsched::account_of(0), nobody = acme::evalsched::account_of(65534);
    REQUIRE(root);
    REQUIRE(nobody);
    std::atomic<int> wrong{0};
    auto hammer = [&](uid_t uid, const std::string& name) {
        for (int i = 0; i < 2000; ++i)
            if (const auto a = acme::evalsched::account_of(uid); !a || a->name != name) ++wrong;
    };
    std::thread a(hammer, 0, root->name), b(hammer, 65534, nobody->name);
    a.join();
    b.join();
    CHECK(wrong == 0);
    CHECK(acme::evalsched::group_id("root") == 0);
    CHECK_FALSE(acme::evalsched::group_id("no-such-group-acme"));
    const auto groups = acme::evalsched::groups_of("root", 0);
    CHECK(std::find(groups.begin(), groups.end(), 0) != groups.end());
}

TEST_CASE("one user's active evaluations are bounded (max_evaluations_per_user): 429 naming the key, nothing stored, others still served") {
    Api api;
    api.config.results_dir = api.dir.file("results");
    api.config.max_evaluations_per_user = 2;
    CHECK(api.submit(suite_of(1, false)).code == 201);
    CHECK(api.submit(suite_of(1, false)).code == 201);
    const auto before = api.count("trials");
    const Reply third = api.submit(suite_of(1, false));
    CHECK(third.code == 429);
    CHECK(third.text.find("you have 2 active evaluations, the most evalschedd takes per user (max_evaluations_per_user=2)") != std::string::npos);
    CHECK(api.count("trials") == before);
    CHECK(api.count("evaluations") == 2);
    api.alice = Caller{1002, 1002, "bob", false};
    CHECK(api.submit(suite_of(1, false)).code == 201);
}
