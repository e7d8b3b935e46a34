// Tail re-sharding's side of the store (mode = pilots, issue 18; the daemon's
// sched/pilot_tail.hpp decides): the suite text an evaluation was submitted with, and a pending
// trial replaced by its pieces in one transaction, every metric job that waited for it waiting
// for each piece instead, so a restart finds either the trial or all of its pieces, never a part.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/store/database.hpp"
#include "evalsched/store/evaluations.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// The suite as submitted (store v13: '' before), its file name, and whether its trials are
// served (their commands the suite's client_command). nullopt: no such evaluation.
struct StoredSuiteText {
    std::string text, file;
    bool served = false;
};
std::optional<StoredSuiteText> stored_suite_text(store::Database& db, std::int64_t evaluation);

// Replaces pending trial `t` by `pieces`, each keeping t's excluded nodes, the metric jobs
// relinked. Returns the pieces' rows; empty (and nothing changed) when `t` is no longer pending
// or has attempts of its own (its logs and lost attempts stay with it).
std::vector<TrialRow> replace_trial(store::Database& db, const TrialRow& t, const std::vector<NewTrial>& pieces);

}  // namespace acme::evalsched
