// Writes the rows of a synthetic slurmdbd job table for tests/bench/slurmdbd-fill: N finished
// jobs as tab-separated lines for MariaDB's LOAD DATA, in the column order printed by --columns
// (the script names them in its LOAD DATA, so a column slurmdbd adds keeps its default). Every
// 10th job holds GPUs (gres/gpu in its TRES) and carries an acme record in AdminComment, made by
// the product's own encoder (record::merge_node_part and encode_within_budget, as faultguard's
// epilog does), so gpuacct decodes it as it would a real one. Deterministic for a seed.
//   slurmdbd-fill-gen --columns
//   slurmdbd-fill-gen JOBS FIRST_ID END_EPOCH SPAN_S GPU_TRES_ID NODES ASSOCS [SEED]
// ASSOCS: comma-separated uid:gid:assoc_id:account (slurmdbd's own associations, so sacct and
// libslurm name the user as for a real job); NODES: comma-separated node names.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/record/keys.hpp"
#include "common/record/record.hpp"

namespace {

namespace key = acme::record::key;
using nlohmann::json;

constexpr const char* kColumns =
    "id_job,id_assoc,id_user,id_group,account,partition,job_name,nodelist,nodes_alloc,node_inx,"
    "cpus_req,mem_req,timelimit,time_submit,time_eligible,time_start,time_end,state,exit_code,"
    "tres_alloc,tres_req,admin_comment,work_dir,id_qos,derived_ec,priority,id_resv,id_wckey,het_job_id,"
    "het_job_offset,state_reason_prev";

struct Assoc {
    long uid, gid, id;
    std::string account;
};

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, sep);)
        if (!item.empty()) out.push_back(item);
    return out;
}

// Slurm's job states (slurm.h): COMPLETED 3, CANCELLED 4, FAILED 5, TIMEOUT 6, OUT_OF_MEMORY 11;
// shares roughly those of a busy cluster.
int pick_state(std::mt19937_64& rng) {
    const int r = static_cast<int>(rng() % 100);
    if (r < 70) return 3;
    if (r < 82) return 5;
    if (r < 92) return 4;
    if (r < 97) return 6;
    return 11;
}

// One GPU node's part of the record, as faultguard writes it (acme-record(5)).
json gpu_part(std::mt19937_64& rng, int gpus, double end, bool failed) {
    std::uniform_real_distribution<double> util(5, 100);
    json list = json::array();
    for (int g = 0; g < gpus; ++g) {
        const double avg = util(rng);
        list.push_back({{key::gpu::id, g},
                        {key::gpu::uuid, fmt::format("GPU-{:08x}", static_cast<unsigned>(rng()))},
                        {key::gpu::samples, 60 + static_cast<int>(rng() % 600)},
                        {key::gpu::util_avg, avg},
                        {key::gpu::util_max, std::min(100.0, avg + 10)},
                        {key::gpu::mem_max_mib, 1000 + static_cast<int>(rng() % 80000)},
                        {key::gpu::mem_total_mib, 81920},
                        {key::gpu::power_avg_w, 100 + avg * 5},
                        {key::gpu::power_max_w, 700.0},
                        {key::gpu::energy_j, avg * 1000},
                        {key::gpu::temp_max_c, 60 + static_cast<int>(rng() % 25)},
                        {key::gpu::xids, 0},
                        {key::gpu::ecc_dbe, 0},
                        {key::gpu::verdict, avg < 20 ? "idle" : "ok"}});
    }
    json part = {{key::part::gpus, list}, {key::part::ts, end}};
    if (failed)
        part[key::part::diagnosis] = {{key::diagnosis::category, "user"},
                                      {key::diagnosis::reason, "python_exception"},
                                      {key::diagnosis::confidence, 0.9},
                                      {key::diagnosis::action, "none"},
                                      {key::diagnosis::rule, "python.traceback"},
                                      {key::diagnosis::evidence,
                                       json::array({{{key::evidence::source, "log"}, {key::evidence::text, "Traceback (most recent call last):"}}})}};
    return part;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::string(argv[1]) == "--columns") {
        std::puts(kColumns);
        return 0;
    }
    if (argc < 8) {
        std::fprintf(stderr, "usage: slurmdbd-fill-gen JOBS FIRST_ID END_EPOCH SPAN_S GPU_TRES_ID NODES ASSOCS [SEED]\n");
        return 2;
    }
    const long jobs = std::atol(argv[1]);
    const long first = std::atol(argv[2]);
    const long end_epoch = std::atol(argv[3]);
    const long span = std::atol(argv[4]);
    const long gpu_tres = std::atol(argv[5]);
    const auto nodes = split(argv[6], ',');
    std::vector<Assoc> assocs;
    for (const auto& a : split(argv[7], ',')) {
        const auto f = split(a, ':');
        if (f.size() != 4) {
            std::fprintf(stderr, "slurmdbd-fill-gen: association '%s' is not uid:gid:assoc_id:account\n", a.c_str());
            return 2;
        }
        assocs.push_back({std::atol(f[0].c_str()), std::atol(f[1].c_str()), std::atol(f[2].c_str()), f[3]});
    }
    if (jobs <= 0 || span <= 0 || nodes.empty() || assocs.empty()) {
        std::fprintf(stderr, "slurmdbd-fill-gen: JOBS and SPAN_S must be positive, NODES and ASSOCS not empty\n");
        return 2;
    }
    std::mt19937_64 rng(argc > 8 ? std::strtoull(argv[8], nullptr, 10) : 42);
    const char* names[] = {"train", "eval", "sft", "preprocess", "sleep", "infer"};
    std::string line;
    for (long i = 0; i < jobs; ++i) {
        const long id = first + i;
        const Assoc& a = assocs[rng() % assocs.size()];
        const size_t n = rng() % nodes.size();
        const std::string& node = nodes[n];
        const bool gpu = i % 10 == 0;
        const int gpus = gpu ? 1 + static_cast<int>(rng() % 4) : 0;
        const int cpus = 1 << (rng() % 4);
        const long mem = 1024L * (1 + static_cast<long>(rng() % 16));
        // Every job ended by END_EPOCH (the longest runs 2 h, queued up to 30 s).
        const long submit = end_epoch - 7300 - span + (span * i) / jobs;
        const long start = submit + static_cast<long>(rng() % 30);
        const long elapsed = 10 + static_cast<long>(rng() % 7200);
        const long end = start + elapsed;
        const int state = pick_state(rng);
        const int exit_status = state == 3 ? 0 : state == 5 ? (1 << 8) : state == 4 ? 15 : 9;
        std::string tres = fmt::format("1={},2={},4=1,5={}", cpus, mem, cpus);
        if (gpu) tres += fmt::format(",{}={}", gpu_tres, gpus);
        std::string comment;
        if (gpu) {
            auto part = gpu_part(rng, gpus, static_cast<double>(end), state == 5);
            comment = acme::record::encode_within_budget(
                acme::record::merge_node_part(std::nullopt, id, 0, {node}, node, std::move(part)));
        }
        line = fmt::format("{}\t{}\t{}\t{}\t{}\tdebug\t{}\t{}\t1\t{}\t{}\t{}\t60\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t/tmp\t1\t0\t{}\t0\t0\t0\t0\t0\n",
                           id, a.id, a.uid, a.gid, a.account, names[rng() % 6], node, n, cpus, mem, submit, submit, start,
                           end, state, exit_status, tres, tres, comment.empty() ? "\\N" : comment, 1000);
        std::fputs(line.c_str(), stdout);
    }
    return std::ferror(stdout) ? 1 : 0;
}
