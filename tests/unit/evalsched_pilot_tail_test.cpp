// Tail re-sharding in the daemon's store (pilot_tail.hpp) and the suite it re-cuts with (store
// v13): a pending trial replaced by its pieces in one transaction, the metric job waiting for
// every piece, what a restart reads back.
#include <doctest/doctest.h>

#include <cstdlib>
#include <arpa/inet.h>
#include <csignal>
#include <cstdio>
#include <netinet/in.h>
#include <optional>
#include <sys/socket.h>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>

#include <fmt/format.h>

#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/sched/pilot_serve.hpp"
#include "evalsched/daemon/sched/pilot_tail.hpp"
#include "evalsched/daemon/state.hpp"
#include "evalsched/store/pilots.hpp"
#include "evalsched/store/schema.hpp"
#include "tests/unit/evalsched_submit_fixture.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme::evalsched;

namespace {

const char* kSuite =
    "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {shard}/{num_shards} {output}\"\n"
    "metric_command = \"score {dataset} {output}\"\n"
    "[[dataset]]\nname = \"long\"\nkind = \"generation\"\nshard = true\nsamples = 100\n"
    "[[dataset]]\nname = \"short\"\nkind = \"generation\"\n";

std::optional<TrialRow> trial_named(acme::store::Database& db, const std::string& key) {
    for (const TrialRow& t : trials_in_state(db, {"pending", "running", "done"}))
        if (t.trial_key == key) return t;
    return std::nullopt;
}

std::vector<std::string> metric_waits_for(acme::store::Database& db, const std::string& dataset) {
    std::vector<std::string> out;
    auto q = db.prepare(
        "SELECT t.trial_key FROM metric_trials mt JOIN metric_jobs m ON m.id = mt.metric JOIN trials t ON t.id = mt.trial"
        " WHERE m.dataset = ? ORDER BY t.trial_key");
    q.bind(1, dataset);
    while (q.step()) out.push_back(q.column_text(0));
    return out;
}

}  // namespace

TEST_CASE("a long pending trial is replaced by its pieces, and the dataset's metric job waits for each") {
    acme::test::TempDir dir;
    const std::string file = dir.file("e.db");
    std::int64_t id = 0;
    {
        auto db = acme::store::open_evalsched_store(file);
        id = test::submit_suite(db, kSuite);
        const auto ss = load_stored_suite(db, id);
        REQUIRE(ss);
        CHECK_FALSE(ss->served);
        const TrialRow t = *trial_named(db, "run7/step-100/long");
        const EvalInfo e = *load_evaluation(db, id);
        const auto pieces = split_trial(core_trial(t), ss->suite, core_checkpoint(e), 2);
        REQUIRE(pieces.size() == 2);
        const auto rows = replace_by_pieces(db, t, pieces);
        REQUIRE(rows.size() == 2);
        CHECK(rows[0].trial_key == "run7/step-100/long#0of2");
        CHECK(rows[1].num_shards == 2);
        CHECK(rows[1].median_s == doctest::Approx(t.median_s / 2));
        CHECK(rows[1].command.find("long 1/2 /results/1/long/shard-1-of-2") != std::string::npos);
        // The same trial cannot be replaced twice (a second pilot racing for it sees it gone).
        CHECK(replace_by_pieces(db, t, pieces).empty());
    }
    // What a restarted daemon reads: the pieces alone, never the trial beside them.
    auto db = acme::store::open_evalsched_store(file);
    CHECK_FALSE(trial_named(db, "run7/step-100/long"));
    CHECK(trial_named(db, "run7/step-100/long#0of2"));
    CHECK(metric_waits_for(db, "long") == std::vector<std::string>{"run7/step-100/long#0of2", "run7/step-100/long#1of2"});
    CHECK(metric_waits_for(db, "short") == std::vector<std::string>{"run7/step-100/short"});
    CHECK(trials_in_state(db, {"pending"}).size() == 3);
}

TEST_CASE("a trial that has had an attempt keeps its row (its logs and attempts stay with it)") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const auto id = test::submit_suite(db, kSuite);
    const TrialRow t = *trial_named(db, "run7/step-100/long");
    PilotRow p = begin_pilot(db, id, 1, "n1", 180, 3600, 1000);
    pilot_submitted(db, p, 42);
    pilot_running(db, p, "n1", 1800, 1010);
    const AttemptRow a = begin_step(db, t, *load_pilot(db, p.id), 300, 1020);
    step_lost(db, a, "its pilot ended", 1030);
    REQUIRE(trial_named(db, "run7/step-100/long")->state == "pending");
    const auto ss = load_stored_suite(db, id);
    const auto pieces = split_trial(core_trial(t), ss->suite, core_checkpoint(*load_evaluation(db, id)), 2);
    CHECK(replace_by_pieces(db, t, pieces).empty());
    CHECK(trial_named(db, "run7/step-100/long"));
}

TEST_CASE("a served evaluation's stored suite is its serving form: every dataset runs the client command") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    const std::string suite = std::string(kSuite).insert(std::string(kSuite).find("[[dataset]]"),
        "serve_command = \"vllm serve {checkpoint} --port {port} -tp {gpus}\"\n"
        "client_command = \"lm_eval --model local-completions --model_args base_url={base_url}/v1/completions --tasks {dataset} "
        "--shard {shard}/{num_shards} --output {output}\"\n");
    const auto id = test::submit_suite(db, suite);
    db.prepare("UPDATE evaluations SET served = 1 WHERE id = ?").bind(1, id).run();
    const auto ss = load_stored_suite(db, id);
    REQUIRE(ss);
    CHECK(ss->served);
    REQUIRE(ss->suite.serving);
    CHECK(ss->suite.datasets[0].command.find("base_url=\"$EVALSCHED_BASE_URL\"/v1/completions --tasks {dataset}") != std::string::npos);
}

TEST_CASE("each running pilot on a node gets its own server port, rotating with the pilot") {
    CHECK(choose_port(20000, 20009, 3, {}) == 20003);
    CHECK(choose_port(20000, 20009, 13, {20003, 20004}) == 20005);
    CHECK(choose_port(20000, 20001, 1, {20001}) == 20000);
    CHECK(choose_port(20000, 20001, 0, {20000, 20001}) == -1);
}

namespace {
// A TCP listener on 127.0.0.1 (an ephemeral port), owned by this process or, with `as` set and
// when running as root, by a forked child that became that uid first: the impostor.
struct Listener {
    int port = 0;
    int fd = -1;
    pid_t child = -1;
    explicit Listener(std::optional<uid_t> as = std::nullopt) {
        int ready[2];
        REQUIRE(pipe(ready) == 0);
        auto bind_listen = [] {
            const int s = socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            socklen_t len = sizeof a;
            if (s < 0 || bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(s, 4) != 0 ||
                getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0)
                return std::pair(-1, 0);
            return std::pair(s, static_cast<int>(ntohs(a.sin_port)));
        };
        if (!as) {
            std::tie(fd, port) = bind_listen();
            close(ready[0]);
            close(ready[1]);
            return;
        }
        child = fork();
        if (child == 0) {
            if (setresuid(*as, *as, *as) != 0) _exit(1);
            const auto [s, p] = bind_listen();
            if (write(ready[1], &p, sizeof p) != sizeof p) _exit(1);
            pause();
            _exit(s >= 0 ? 0 : 1);
        }
        close(ready[1]);
        if (read(ready[0], &port, sizeof port) != sizeof port) port = 0;
        close(ready[0]);
    }
    ~Listener() {
        if (fd >= 0) close(fd);
        if (child > 0) {
            kill(child, SIGKILL);
            waitpid(child, nullptr, 0);
        }
    }
};

int run_client(const std::string& command, const Serving& s, int port) {
    const std::string line = fmt::format("EVALSCHED_BASE_URL=http://127.0.0.1:{} bash -c {} 2>/dev/null", port, shell_quote(client_command(command, s, port)));
    const int rc = std::system(line.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}
}  // namespace

TEST_CASE("a client step whose server is gone exits kServerLostExit; a failing one with its server up keeps its status") {
    Serving s;
    s.probe = "/health";
    // Nothing listens on the port: the server is gone.
    int free_port = 0;
    {
        Listener gone;
        free_port = gone.port;
    }
    CHECK(run_client("exit 3", s, free_port) == kServerLostExit);
    CHECK(run_client("exit 0", s, free_port) == kServerLostExit);
    // The server is ours: the trial's own status counts.
    Listener ours;
    REQUIRE(ours.port > 0);
    CHECK(run_client("exit 0", s, ours.port) == 0);
}

TEST_CASE("a client step never talks to a listener of another uid on its server's port (an impostor)") {
    if (geteuid() != 0) return;  // becoming another uid needs root
    Serving s;
    s.probe = "/health";
    Listener impostor(65534);
    REQUIRE(impostor.port > 0);
    // The command would send the prompts: it must not run.
    CHECK(run_client("exit 0", s, impostor.port) == kServerLostExit);
    const std::string check = fmt::format("bash -c {}", shell_quote(port_owner_check(impostor.port) + "evalsched_port_owner"));
    FILE* out = popen(check.c_str(), "r");
    REQUIRE(out);
    char buf[64] = {};
    const std::size_t n = fread(buf, 1, sizeof buf - 1, out);
    const int rc = pclose(out);
    CHECK(std::string(buf, n) == "65534\n");
    CHECK(WEXITSTATUS(rc) == 1);
}

TEST_CASE("submit: a serving suite is served in mode = pilots (client commands, nothing bundled) and ignored in mode = trials") {
    acme::test::TempDir dir;
    auto db = acme::store::open_evalsched_store(dir.file("e.db"));
    DaemonConfig config;
    config.results_dir = dir.file("results");
    const Caller alice{1001, 1001, "alice", false};
    ApiCaches caches;
    const std::function<void()> wake = [] {};
    RouteMatch match;
    match.row = &route_row("POST", "/v1/evaluations");
    const std::string suite =
        "[suite]\nname = \"t\"\ncommand = \"eval {checkpoint} {dataset} {output}\"\nbundle_command = \"eval {checkpoint} {datasets} {output}\"\n"
        "serve_command = \"vllm serve {checkpoint} --port {port}\"\nclient_command = \"client {base_url} {dataset} {output}\"\n"
        "[[dataset]]\nname = \"a\"\nkind = \"generation\"\nprior = \"10s\"\n[[dataset]]\nname = \"b\"\nkind = \"generation\"\nprior = \"10s\"\n";
    auto submit = [&] {
        const std::string body = nlohmann::json{{"checkpoint", "/ckpt/run7/step-100"}, {"suite", suite}, {"params_b", 7}}.dump();
        RouteContext ctx{db, config, alice, match, body, caches, wake, 8, 1000};
        const Reply r = route_submit(ctx);
        REQUIRE(r.code == 201);
        return nlohmann::json::parse(r.text).at("id").get<std::int64_t>();
    };
    auto commands = [&](std::int64_t id) {
        std::vector<std::string> out;
        auto q = db.prepare("SELECT command FROM trials WHERE evaluation = ? ORDER BY id");
        q.bind(1, id);
        while (q.step()) out.push_back(q.column_text(0));
        return out;
    };
    config.pilots = true;
    const auto served = submit();
    REQUIRE(load_stored_suite(db, served));
    CHECK(load_stored_suite(db, served)->served);
    const auto c = commands(served);
    REQUIRE(c.size() == 2);  // one trial per dataset: no bundle when the load is paid once per pilot
    for (const auto& command : c) CHECK(command.find("client \"$EVALSCHED_BASE_URL\" ") != std::string::npos);
    config.pilots = false;
    const auto plain = submit();
    CHECK_FALSE(load_stored_suite(db, plain)->served);
    for (const auto& command : commands(plain)) CHECK(command.find("eval ") != std::string::npos);
}
