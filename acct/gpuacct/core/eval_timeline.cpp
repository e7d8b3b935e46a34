#include "acct/gpuacct/core/eval_timeline.hpp"

#include "evalsched/store/timeline.hpp"

namespace acme::acct {

// evalschedd's store owns its schema and the query (evalsched/store/timeline.cpp);
// gpuacct only keeps its own row type, which its report and tests are written against.
std::vector<TrialAttempt> read_trial_attempts(const std::string& path) {
    std::vector<TrialAttempt> out;
    for (auto& s : store::read_attempt_timeline(path))
        out.push_back({std::move(s.evaluation), std::move(s.trial), std::move(s.node), std::move(s.state), s.job_id, s.gpus,
                       s.submitted, s.ended});
    return out;
}

}  // namespace acme::acct
