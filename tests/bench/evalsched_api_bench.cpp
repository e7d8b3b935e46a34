// evalsched-api-bench: the API latency half of tests/bench/evalsched-cluster.
//
//   evalsched-api-bench populate DB TRIALS
//       fills a fresh evalschedd database through the daemon's own state code (create_evaluation,
//       begin_attempt, attempt_submitted, finish_attempt): evaluations of the 20-dataset fake
//       suite, one per checkpoint of ten training runs, every trial finished with a score, so the
//       daemon tracks TRIALS trials without a real Slurm run and its scheduler has nothing to
//       submit.
//   evalsched-api-bench load SOCKET RATE SECONDS
//       open-loop load on the daemon's Unix socket: request k is due at k / RATE seconds, the
//       latency of a request runs from when it was due (not when a free worker sent it), so a
//       slow answer delays the ones behind it and shows in the tail (no coordinated omission).
//       One connection per request, HTTP/1.0, as the evalsched CLI does. The mix is what CLIs
//       polling a busy daemon send: `status ID` / `watch ID`, `status`, `report RUN`, `priors`.
//       Prints p50/p99/max per route and for all. EVALSCHED_BENCH_WRITES=W and
//       EVALSCHED_BENCH_DB=DB: W committed writes a second beside the load (a busy scheduler).
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evalsched/core/trials.hpp"
#include "evalsched/daemon/api/api_request.hpp"
#include "evalsched/daemon/sched/job_script.hpp"
#include "evalsched/daemon/state.hpp"
#include "evalsched/store/schema.hpp"

using namespace acme::evalsched;

namespace {

const char* const kDatasets[] = {"mmlu", "cmmlu", "ceval", "arc_c", "arc_e", "hellaswag", "winogrande",
                                 "piqa", "siqa", "boolq", "gsm8k", "math", "humaneval", "mbpp",
                                 "triviaqa", "nq", "race", "drop", "bbh", "agieval"};
constexpr int kRuns = 10;

std::string suite_text() {
    std::string s = "[suite]\nname = \"fake20\"\ncommand = \"fake-eval --checkpoint {checkpoint} --task {dataset} --out {output}\"\ngpus = 1\n";
    for (const char* d : kDatasets) s += fmt::format("[[dataset]]\nname = \"{}\"\nkind = \"multiple_choice\"\nprior = \"5s\"\n", d);
    return s;
}

int populate(const std::string& path, int trials) {
    auto db = acme::store::open_evalsched_store(path);
    const int per_eval = static_cast<int>(std::size(kDatasets));
    const int evals = (trials + per_eval - 1) / per_eval;
    const Caller owner{0, 0, "root", true};
    const std::string suite = suite_text();
    double now = 1.7e9;
    for (int i = 0; i < evals; ++i) {
        const std::string ckpt = fmt::format("/ckpt/run{}/step-{}", i % kRuns, 1000 * (i / kRuns + 1));
        const auto req = parse_submit(nlohmann::json{{"checkpoint", ckpt}, {"suite", suite}, {"checkpoint_bytes", 14e9}}.dump());
        const auto id = create_evaluation(
            db, req, owner, "/var/lib/acme/evalsched/results",
            [&](const std::string& out) {
                Checkpoint ck{req.name + "/" + req.checkpoint, std::string(kStagedVar), out, ModelSpec{7, 14e9}};
                return make_trials(req.suite, ck, PriorBook{});
            },
            now);
        (void)id;
        // Finish every trial of this evaluation as a trial of a real run would end.
        for (const auto& t : trials_in_state(db, {"pending"})) {
            const std::string node = fmt::format("n{}", 1 + t.id % 3);
            const AttemptRow a = begin_attempt(db, t, node, 600, now);
            attempt_submitted(db, a, 100000 + t.id);
            Outcome o;
            o.success = true;
            o.node = node;
            o.exit_code = 0;
            o.run_s = 200 + static_cast<double>(t.id % 97);
            for (const auto& d : t.parts()) o.scores.push_back({d, "accuracy", static_cast<double>(t.id % 1000) / 1000});
            o.stage = Outcome::Stage{t.id % 4 == 0, t.id % 4 == 0 ? 14e9 : 0.0, t.id % 4 == 0 ? 30.0 : 0.0};
            finish_attempt(db, a, o, "7b", now + 300);
        }
        now += 600;
    }
    std::printf("%d evaluations, %d trials\n", evals, evals * per_eval);
    return 0;
}

struct Sample {
    int route;
    double ms;
    int status;
};

// One request, one connection; returns the HTTP status (0 when the exchange failed).
int request(const std::string& socket_path, const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path.c_str());
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(fd);
        return 0;
    }
    const std::string req = fmt::format("GET {} HTTP/1.0\r\nHost: evalschedd\r\nContent-Length: 0\r\n\r\n", path);
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
        close(fd);
        return 0;
    }
    std::string answer;
    char buf[65536];
    for (;;) {
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        answer.append(buf, static_cast<std::size_t>(n));
    }
    close(fd);
    if (answer.size() < 12 || answer.rfind("HTTP/1.", 0) != 0) return 0;
    return std::atoi(answer.c_str() + 9);
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
    return v[std::min(i, v.size() - 1)];
}

bool writer_ran(double writes) { return writes > 0 && std::getenv("EVALSCHED_BENCH_DB"); }

int load(const std::string& socket_path, double rate, double seconds) {
    // Route mix, in per mille: status ID / watch ID polls dominate.
    struct Route {
        const char* name;
        int weight;
    };
    const Route routes[] = {{"GET /v1/evaluations/ID (status ID, watch)", 500},
                            {"GET /v1/evaluations (status)", 150},
                            {"GET /v1/report/RUN (report)", 150},
                            {"GET /v1/priors (priors)", 100},
                            {"GET /v1/health", 100}};
    constexpr int kRoutes = static_cast<int>(std::size(routes));
    // Evaluation ids 1..EVALSCHED_BENCH_MAX_ID (what populate made).
    int max_id = 1;
    if (const char* env_max = std::getenv("EVALSCHED_BENCH_MAX_ID")) max_id = std::max(1, std::atoi(env_max));
    auto path_of = [&](int r, std::mt19937& rng) -> std::string {
        switch (r) {
        case 0: return fmt::format("/v1/evaluations/{}", 1 + rng() % static_cast<unsigned>(max_id));
        case 1: return "/v1/evaluations";
        case 2: return fmt::format("/v1/report/run{}", rng() % kRuns);
        case 3: return "/v1/priors";
        default: return "/v1/health";
        }
    };
    // Service time first: each route alone, one request at a time (what one request costs the
    // daemon's single event loop), so the open-loop numbers below can be read against it.
    const char* service_env = std::getenv("EVALSCHED_BENCH_SERVICE");
    if (!service_env || std::strcmp(service_env, "0") != 0) {
        std::printf("api service time, one request at a time (%d each):\n", 40);
        std::mt19937 rng(1);
        for (int r = 0; r < kRoutes; ++r) {
            std::vector<double> v;
            for (int i = 0; i < 40; ++i) {
                const auto a = std::chrono::steady_clock::now();
                request(socket_path, path_of(r, rng));
                v.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
            }
            std::printf("  %-44s p50 %7.2f ms  p99 %7.2f ms\n", routes[r].name, percentile(v, 0.5), percentile(v, 0.99));
        }
    }
    // EVALSCHED_BENCH_ROUTES=0 (only status ID): the load without the whole-store routes.
    std::vector<int> only;
    if (const char* e = std::getenv("EVALSCHED_BENCH_ROUTES"))
        for (const char* c = e; *c; ++c)
            if (*c >= '0' && *c < '0' + kRoutes) only.push_back(*c - '0');
    const long total = std::lround(rate * seconds);
    std::vector<Sample> samples(static_cast<std::size_t>(total));
    std::atomic<long> next{0};
    const auto t0 = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    const int workers = 32;
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w)
        pool.emplace_back([&, w] {
            std::mt19937 rng(static_cast<unsigned>(w) * 7919u + 17u);
            for (;;) {
                const long k = next.fetch_add(1);
                if (k >= total) return;
                const auto due = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                          std::chrono::duration<double>(static_cast<double>(k) / rate));
                std::this_thread::sleep_until(due);
                int pick = static_cast<int>(rng() % 1000), r = 0;
                while (r < kRoutes - 1 && pick >= routes[r].weight) pick -= routes[r++].weight;
                if (!only.empty()) r = only[rng() % only.size()];
                const std::string path = path_of(r, rng);
                const int status = request(socket_path, path);
                const auto end = std::chrono::steady_clock::now();
                samples[static_cast<std::size_t>(k)] = {r, std::chrono::duration<double, std::milli>(end - due).count(), status};
            }
        });
    // EVALSCHED_BENCH_WRITES=W with EVALSCHED_BENCH_DB: another connection commits W small
    // transactions a second meanwhile, as a busy scheduler does (a trial's state or reason), so
    // the daemon's cached answers are dropped W times a second and most reads pay full price.
    std::atomic<bool> stop{false};
    std::thread writer;
    const double writes = std::getenv("EVALSCHED_BENCH_WRITES") ? std::atof(std::getenv("EVALSCHED_BENCH_WRITES")) : 0;
    if (writes > 0 && std::getenv("EVALSCHED_BENCH_DB"))
        writer = std::thread([&] {
            auto db = acme::store::open_evalsched_store(std::getenv("EVALSCHED_BENCH_DB"));
            std::mt19937 rng(7);
            for (long i = 0; !stop; ++i) {
                db.transaction([&] {
                    db.prepare("UPDATE trials SET reason = ? WHERE id = (SELECT MAX(id) FROM trials) - ?")
                        .bind_all(fmt::format("bench write {}", i), static_cast<std::int64_t>(rng() % 1000))
                        .run();
                });
                std::this_thread::sleep_for(std::chrono::duration<double>(1.0 / writes));
            }
        });
    for (auto& t : pool) t.join();
    stop = true;
    if (writer.joinable()) writer.join();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    long errors = 0;
    std::vector<double> all;
    std::vector<std::vector<double>> by(kRoutes);
    for (const auto& s : samples) {
        if (s.status != 200) ++errors;
        all.push_back(s.ms);
        by[static_cast<std::size_t>(s.route)].push_back(s.ms);
    }
    std::printf("api load: %ld requests in %.1f s (%.0f requests/s offered, open loop, one connection each), %ld not HTTP 200\n", total,
                elapsed, rate, errors);
    for (int r = 0; r < kRoutes; ++r) {
        const auto& v = by[static_cast<std::size_t>(r)];
        if (v.empty()) continue;
        std::printf("  %-44s n=%-5zu p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms\n", routes[r].name, v.size(), percentile(v, 0.5),
                    percentile(v, 0.99), v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()));
    }
    std::string mix = writer_ran(writes) ? fmt::format(" (CLI mix, {:.0f} writes/s beside it)", writes) : std::string(" (CLI mix)");
    if (!only.empty()) {
        mix = " (only";
        for (int r : only) mix += fmt::format(" {};", routes[r].name);
        mix.back() = ')';
    }
    std::printf("api latency at %.0f requests/s%s: p50 %.2f ms, p99 %.2f ms (target p99 < 10 ms)\n", rate, mix.c_str(),
                percentile(all, 0.5), percentile(all, 0.99));
    return errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc == 4 && std::strcmp(argv[1], "populate") == 0) return populate(argv[2], std::atoi(argv[3]));
        if (argc == 5 && std::strcmp(argv[1], "load") == 0) return load(argv[2], std::atof(argv[3]), std::atof(argv[4]));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "evalsched-api-bench: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "usage: evalsched-api-bench populate DB TRIALS | load SOCKET RATE SECONDS\n");
    return 2;
}
