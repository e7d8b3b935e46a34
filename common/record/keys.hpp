// The acme job record's JSON keys (acme-record(5)), spelled once. The epilog writes them
// (faultguard's record_part), the codec trims by them (record.cpp), gpuacct and faultdiag read
// them back from slurmdbd (slurmdbd_set.cpp, slurmdbd_job.cpp): a key renamed here is renamed
// for every writer and reader at once, so none of them can drift from the others.
#pragma once

namespace acme::record::key {

// The record: {"v", "job", "restart", "expected", "nodes", "trimmed"}.
inline constexpr const char* version = "v";
inline constexpr const char* job = "job";
inline constexpr const char* restart = "restart";
inline constexpr const char* expected = "expected";
inline constexpr const char* nodes = "nodes";
inline constexpr const char* trimmed = "trimmed";

// One node's part ("nodes": {NODE: part}).
namespace part {
inline constexpr const char* gpus = "gpus";
inline constexpr const char* gpu_totals = "gpu_totals";  // "gpus" folded, in a trimmed record
inline constexpr const char* events = "events";
inline constexpr const char* events_total = "events_total";
inline constexpr const char* diagnosis = "diagnosis";
inline constexpr const char* recovery = "recovery";
inline constexpr const char* stall = "stall";
inline constexpr const char* resumed_from = "resumed_from";
inline constexpr const char* resumed_ckpt_ts = "resumed_ckpt_ts";  // when that checkpoint was complete
inline constexpr const char* gate = "gate";
inline constexpr const char* ts = "ts";
}  // namespace part

// One GPU of "gpus"; "gpu_totals" uses the same names for its figures.
namespace gpu {
inline constexpr const char* id = "id";
inline constexpr const char* uuid = "uuid";
inline constexpr const char* samples = "samples";
inline constexpr const char* xids = "xids";
inline constexpr const char* verdict = "verdict";
inline constexpr const char* util_avg = "util_avg";
inline constexpr const char* util_max = "util_max";
inline constexpr const char* mem_max_mib = "mem_max_mib";
inline constexpr const char* mem_total_mib = "mem_total_mib";
inline constexpr const char* power_avg_w = "power_avg_w";
inline constexpr const char* power_max_w = "power_max_w";
inline constexpr const char* energy_j = "energy_j";
inline constexpr const char* temp_max_c = "temp_max_c";
inline constexpr const char* ecc_dbe = "ecc_dbe";
inline constexpr const char* gpm_sm_avg = "gpm_sm_avg";
inline constexpr const char* gpm_tensor_avg = "gpm_tensor_avg";
inline constexpr const char* gpm_dram_bw_avg = "gpm_dram_bw_avg";
}  // namespace gpu

// "gpu_totals" besides the figures named in gpu::.
namespace totals {
inline constexpr const char* count = "count";
inline constexpr const char* verdicts = "verdicts";
}  // namespace totals

// One of "events".
namespace event {
inline constexpr const char* gpu = "gpu";
inline constexpr const char* kind = "kind";
inline constexpr const char* ts = "ts";
inline constexpr const char* code = "code";
}  // namespace event

// "diagnosis" and each of its "evidence" lines.
namespace diagnosis {
inline constexpr const char* category = "category";
inline constexpr const char* reason = "reason";
inline constexpr const char* confidence = "confidence";
inline constexpr const char* action = "action";
inline constexpr const char* rule = "rule";
inline constexpr const char* evidence = "evidence";
}  // namespace diagnosis
namespace evidence {
inline constexpr const char* source = "source";
inline constexpr const char* text = "text";
inline constexpr const char* line = "line";
}  // namespace evidence

// "recovery": what faultguard's recovery did.
namespace recovery {
inline constexpr const char* drained = "drained";
inline constexpr const char* requeued = "requeued";
inline constexpr const char* outcome = "outcome";
inline constexpr const char* drain_reason = "drain_reason";
}  // namespace recovery

// "stall": the sampler's stall verdict.
namespace stall {
inline constexpr const char* since = "since";
inline constexpr const char* ts = "ts";
inline constexpr const char* hardware = "hardware";
inline constexpr const char* action = "action";
inline constexpr const char* evidence = "evidence";
inline constexpr const char* named = "named";
inline constexpr const char* withdrawn = "withdrawn";
}  // namespace stall

// "gate": the pre-job health gate's verdict.
namespace gate {
inline constexpr const char* passed = "passed";
inline constexpr const char* detail = "detail";
}  // namespace gate

}  // namespace acme::record::key
