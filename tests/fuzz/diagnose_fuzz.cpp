// libFuzzer target for the engine with the shipped rules. The first 8 bytes choose what the
// epilog knows (exit code, signal, Slurm flags, one GPU event); the rest is the log tail.
// Checks what callers rely on: no exception, confidence in 0..1, evidence lines inside the
// log, evidence that survives its JSON round trip. The stored-text parsers ride along.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/diagnose/diagnosis_json.hpp"
#include "common/diagnose/engine.hpp"
#include "common/diagnose/signature.hpp"

#ifndef ACME_RULES_DIR
#error "build with -DACME_RULES_DIR=\"<tree>/rules\""
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace acme::diagnose;
    static const Engine engine = Engine::from_dir(ACME_RULES_DIR);
    if (size < 8) return 0;
    std::string_view log(reinterpret_cast<const char*>(data + 8), size - 8);

    JobEnd job;
    job.log = log;
    if (data[0] & 1) job.job_exit = ExitStatus{data[1], data[2] % 65};
    job.task_wait_statuses = {data[1] | (data[2] << 8)};
    job.oom_kill = data[3] & 1;
    job.time_limit = data[3] & 2;
    job.cancelled = data[3] & 4;
    job.node_failure = data[3] & 8;
    if (data[0] & 2) job.gpu_events.push_back({data[4] % 8, (data[0] & 4) ? "xid" : "ecc_dbe", data[5], 0, std::string(log.substr(0, 40))});
    if (data[0] & 8) job.job_gpus = {data[6] % 8};

    Diagnosis d = diagnose_noexcept(engine, job);
    std::size_t lines = 1;
    for (char c : log) lines += c == '\n';
    if (d.confidence < 0.0 || d.confidence > 1.0) __builtin_trap();
    for (const auto& e : d.evidence)
        if (e.line > lines || e.text.size() > kEvidenceChars) __builtin_trap();
    if (evidence_from_json(evidence_json(d)) != d.evidence) __builtin_trap();

    parse_exit_code2(log);
    if (auto s = signature_from_text(log)) {
        if (signature_from_text(to_text(*s)) != s) __builtin_trap();
    }
    evidence_from_json(log);
    return 0;
}
