// The job classes of the Acme study (pretrain, sft, eval, debug, mllm, other): from an explicit
// tag when there is one (sbatch --llm-job-type=, or "llm-job-type=TYPE" in the job comment),
// evalsched trials are eval, else a documented name heuristic (man/gpuacct.1).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace acme::acct {

std::span<const std::string_view> job_types();  // pretrain, sft, eval, debug, mllm, other
std::optional<std::string_view> parse_job_type(std::string_view text);  // case-insensitive

struct JobTypeInputs {
    std::string_view tag;      // --llm-job-type value, may be empty
    std::string_view comment;  // the job's comment
    std::string_view name;     // the job's name
};

struct JobType {
    std::string_view type;
    std::string_view source;   // "tag", "comment", "evalsched", "name", "default"
};

JobType classify_job_type(const JobTypeInputs& in);

}  // namespace acme::acct
