// Tail re-sharding in the daemon (mode = pilots, issue 18), what evalsched-sim's evalsched
// policy does: when a pilot is about to take a trial that would finish late while the
// evaluation's other GPUs idle (the core's tail_split_factor), the trial is re-cut into shards
// (split_trial) before it starts. The store holds the change whole, in one transaction: the
// trial row is replaced by its pieces, and every metric job that waited for it waits for each
// piece instead, so a restart finds either the trial or all of its pieces, never a part
// (evalsched/store/trial_pieces.hpp; here the core's types become its rows and back).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/store/database.hpp"
#include "evalsched/core/suite.hpp"
#include "evalsched/core/trials.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// The suite an evaluation was submitted with (store v13), as its trials were cut: the serving
// form (serving_suite) when `served`. nullopt for evaluations stored before v13, or a text that
// no longer parses (a suite refused by a newer parser stays as it was: never re-cut).
struct StoredSuite {
    Suite suite;
    bool served = false;
};
std::optional<StoredSuite> load_stored_suite(store::Database& db, std::int64_t evaluation);

// The core's view of a stored trial, and its checkpoint, as make_trials made them.
Trial core_trial(const TrialRow& t);
Checkpoint core_checkpoint(const EvalInfo& e);

// Replaces pending trial `t` by `pieces` (split_trial's, at least two) in one transaction, the
// metric jobs relinked. Returns the pieces' rows; empty (and nothing changed) when `t` is no
// longer pending or has attempts of its own (its logs and lost attempts stay with it).
std::vector<TrialRow> replace_by_pieces(store::Database& db, const TrialRow& t, const std::vector<Trial>& pieces);

}  // namespace acme::evalsched
