// evalsched-best: the best possible makespan of a measured evaluation, for
// tests/bench/evalsched-cluster's `evalsched/best`.
//
// The instance: the trials an evaluation ran (the daemon's cut of the suite into datasets,
// shards and bundles), each with its measured inference seconds; every trial is one Slurm job
// that costs the measured fixed per-job cost (submit -> command running -> end -> GPU free)
// plus one model load (checkpoint bytes / load bandwidth); `gpus` identical GPUs; no GPU on a
// node can start loading before that node's copy of the checkpoint is complete (`stage`
// seconds after the start, all nodes copying at once), and its job may be launched while the
// copy runs, so a GPU is free for trials from max(0, stage - launch).
//
// `best` is the optimum of that instance (P||Cmax with a common ready time): exact by branch
// and bound (jobs longest first, one branch per distinct machine load, pruned by the incumbent
// and by max(longest, (placed + left) / gpus)), started from LPT. It is a lower bound on the
// makespan of any schedule of those trials: the CPU metric jobs of sharded datasets and Slurm's
// scheduling cycles only add to it. When the search passes --max-nodes it stops and prints the
// best proven lower bound instead (`bound`, seen on random 30-trial instances, not on the bench's).
//
// `any` is a bound for every policy, pilots included, whatever the cut: each GPU that works
// pays at least one launch and one load, the work divides freely:
//   ready + launch + load + sum(inference) / gpus.
//
//   evalsched-best --gpus G --launch S --load S [--stage S] [--max-nodes N] < TRIALS
// TRIALS: one line per trial, `name<TAB>seconds` (inference seconds); '#' lines are comments.
// Prints: `best <seconds> exact|bound`, `lpt <seconds>`, `any <seconds>`, `trials <n>`.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr, "evalsched-best: %s\n", why.c_str());
    std::exit(2);
}

double number(const std::string& flag, const char* text, bool positive) {
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || v < 0 || (positive && v <= 0))
        usage(flag + " " + text + " is not a " + (positive ? "positive" : "non-negative") + " number");
    return v;
}

struct Search {
    std::vector<double> p;  // job lengths, longest first
    std::vector<double> suffix;
    int m = 1;
    double best = 0;
    long long nodes = 0;
    long long max_nodes = 0;
    double lower = 0;       // proven: once reached, stop
    bool exhausted = false;  // the node budget ran out: `best` is not proven
    bool stop = false;
    std::vector<double> load;

    void run(size_t i, double placed) {
        if (stop) return;
        if (++nodes > max_nodes) {
            exhausted = stop = true;
            return;
        }
        if (i == p.size()) {
            best = *std::max_element(load.begin(), load.end());
            stop = best <= lower + 1e-9;
            return;
        }
        // No schedule below the mean of all the work, nor below the longest machine so far.
        const double mean = (placed + suffix[i]) / m;
        if (mean >= best - 1e-9) return;
        for (int j = 0; j < m; ++j) {
            bool seen = false;  // identical machines: one branch per distinct load
            for (int k = 0; k < j && !seen; ++k) seen = load[k] == load[j];
            if (seen) continue;
            if (load[j] + p[i] >= best - 1e-9) continue;
            load[j] += p[i];
            run(i + 1, placed + p[i]);
            load[j] -= p[i];
            if (stop) return;
        }
    }
};

}  // namespace

int main(int argc, char** argv) {
    int gpus = 0;
    double launch = -1, model_load = -1, stage = 0;
    long long max_nodes = 20000000;  // a few seconds; the bench instance needs far fewer
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) usage(a + " needs a value (see the header of tests/bench/evalsched_best.cpp)");
        const char* v = argv[++i];
        if (a == "--gpus") gpus = static_cast<int>(number(a, v, true));
        else if (a == "--launch") launch = number(a, v, false);
        else if (a == "--load") model_load = number(a, v, false);
        else if (a == "--stage") stage = number(a, v, false);
        else if (a == "--max-nodes") max_nodes = static_cast<long long>(number(a, v, true));
        else usage("unknown flag " + a + ": use --gpus, --launch, --load, --stage, --max-nodes");
    }
    if (gpus <= 0 || launch < 0 || model_load < 0) usage("--gpus, --launch and --load are required");

    std::vector<double> work;
    std::string line;
    int line_no = 0;
    while (std::getline(std::cin, line)) {
        ++line_no;
        if (line.empty() || line[0] == '#') continue;
        const auto tab = line.find('\t');
        if (tab == std::string::npos) usage("line " + std::to_string(line_no) + " is not `name<TAB>seconds`");
        work.push_back(number("line " + std::to_string(line_no), line.c_str() + tab + 1, false));
    }
    if (work.empty()) usage("no trials on standard input: give one `name<TAB>seconds` line per trial");

    const double ready = std::max(0.0, stage - launch);
    const double per_job = launch + model_load;
    Search s;
    s.m = gpus;
    for (double w : work) s.p.push_back(w + per_job);
    std::sort(s.p.rbegin(), s.p.rend());
    s.suffix.assign(s.p.size() + 1, 0);
    for (size_t i = s.p.size(); i-- > 0;) s.suffix[i] = s.suffix[i + 1] + s.p[i];

    // LPT: each job, longest first, onto the least loaded GPU.
    std::vector<double> lpt(gpus, 0);
    for (double x : s.p) *std::min_element(lpt.begin(), lpt.end()) += x;
    const double lpt_make = *std::max_element(lpt.begin(), lpt.end());

    double lower = std::max(s.p.front(), s.suffix[0] / gpus);
    if (static_cast<int>(s.p.size()) > gpus) lower = std::max(lower, s.p[gpus - 1] + s.p[gpus]);
    s.best = lpt_make + 1e-6;  // strictly above, so the search can prove LPT optimal
    s.max_nodes = max_nodes;
    s.lower = lower;
    s.load.assign(gpus, 0);
    if (lpt_make > lower + 1e-9) s.run(0, 0);
    const double best = std::min(s.best, lpt_make);
    const bool exact = !s.exhausted;

    const double sum = std::accumulate(work.begin(), work.end(), 0.0);
    std::printf("best %.2f %s\n", ready + (exact ? best : lower), exact ? "exact" : "bound");
    std::printf("lpt %.2f\n", ready + lpt_make);
    std::printf("any %.2f\n", ready + per_job + sum / gpus);
    std::printf("trials %zu\n", work.size());
    return 0;
}
