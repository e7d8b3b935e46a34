// libFuzzer target for the acme job record as readers meet it: any AdminComment text (an
// admin's note, another tool's token, a cut or edited ACME1 token). Checks: no crash, no
// unbounded inflation, a decoded record re-encodes to a token that decodes to the same JSON,
// and with_token keeps every other token; gpuacct --goodput's reading of a run's record (a field
// of any type where a string or number belongs) neither crashes nor throws.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "acct/gpuacct/core/goodput_runs.hpp"
#include "common/record/codec.hpp"
#include "common/record/record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace acme::record;
    const std::string_view field(reinterpret_cast<const char*>(data), size);
    std::string error;
    // The field may also be a token's payload alone: try it both ways.
    for (const std::string& candidate : {std::string(field), std::string(kTokenPrefix) + base64_encode(field)}) {
        const auto text = decode_token(candidate, error);
        if (!text) continue;
        if (text->size() > kMaxJsonBytes) __builtin_trap();
        const auto record = parse_record(*text, error);
        if (!record) continue;
        missing_nodes(*record);
        const auto again = decode_token(encode_token(record->dump()), error);
        if (!again || parse_record(*again, error) != record) __builtin_trap();
        acme::slurm::AccountedRun run;
        run.job_id = record->value("job", 0u);
        run.start = 1;
        run.end = 2;
        run.admin_comment = candidate;
        std::vector<std::string> warnings;
        const std::vector<acme::slurm::AccountedRun> rows{run, run};
        for (const auto& [job, runs] : acme::acct::goodput_runs(rows, warnings)) acme::acct::compute_goodput(runs, 3);
    }
    const std::string replaced = with_token(field, "ACME1:x");
    if (replaced.find("ACME1:x") == std::string::npos) __builtin_trap();
    return 0;
}
