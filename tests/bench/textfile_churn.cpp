// The textfile side of tests/bench/prometheus-churn: short jobs one after another on one node's
// GPUs, each writing its file through the sampler's own code (TextfileFormat, TextfileWriter)
// for `hold_ms`, then removing it, as a sampler does at the job's end. Every GPU holds one
// one-GPU job at a time; all GPUs change jobs together. Prints nothing on success but its line.
//   textfile-churn DIR JOBS GPUS HOLD_MS [--job-labels]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "spank/gputrace/core/textfile.hpp"
#include "spank/gputrace/core/textfile_writer.hpp"

using namespace acme;

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: textfile-churn DIR JOBS GPUS HOLD_MS [--job-labels]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const long long jobs = std::atoll(argv[2]);
    const int gpus = std::atoi(argv[3]);
    const int hold_ms = std::atoi(argv[4]);
    const bool job_labels = argc > 5 && std::string(argv[5]) == "--job-labels";
    if (jobs <= 0 || gpus <= 0 || hold_ms <= 0) {
        std::fprintf(stderr, "textfile-churn: JOBS, GPUS and HOLD_MS must be positive\n");
        return 2;
    }
    long long next = 1000;  // job ids
    long long written = 0;
    while (written < jobs) {
        struct Running {
            std::unique_ptr<telemetry::TextfileWriter> writer;
        };
        std::vector<Running> running;
        for (int g = 0; g < gpus && written < jobs; ++g, ++written) {
            const long long id = next++;
            nvml::Reading r;
            r.util_gpu = 40 + g;
            r.mem_used = 1LL << 30;
            r.mem_total = 80LL << 30;
            r.power_mw = 300000;
            r.energy_mj = 1000000 + id;
            r.temp_c = 60;
            r.sm_clock_mhz = 1980;
            r.ecc_corrected = 0;
            r.ecc_uncorrected = 0;
            const telemetry::Sample sample{g, 1764648000.0, r};
            const std::vector<telemetry::TextfileGpu> one = {
                {{g, nullptr, "NVIDIA H100 80GB HBM3", "GPU-" + std::to_string(g)}, &sample, 0, 0, std::nullopt, false}};
            const std::string text = telemetry::format_textfile({"n1", id, "alice", job_labels}, one);
            auto writer = std::make_unique<telemetry::TextfileWriter>(dir, id);
            std::string error;
            if (!writer->write(text, error)) {
                std::fprintf(stderr, "textfile-churn: %s\n", error.c_str());
                return 1;
            }
            running.push_back({std::move(writer)});
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
        for (auto& r : running) r.writer->remove();
    }
    std::printf("textfile-churn: %lld jobs on %d GPUs, %d ms each\n", jobs, gpus, hold_ms);
    return 0;
}
