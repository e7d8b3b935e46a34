// Confirmed failure labels (faultdiag --label): which reason an operator says a job failed
// for, and the signature of its log, so later failures that look alike can be named by
// history. Its own small SQLite file, not the node spool: labels are cluster-wide and
// written by people, spools are per node and written by plugins.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/store/database.hpp"
#include "common/store/migrations.hpp"

namespace acme::store {

struct Label {
    std::int64_t job_id = 0;
    std::string reason;
    std::string signature;  // diagnose::to_text(Signature)
    double labelled_at = 0; // Unix seconds
    std::string labelled_by;
};

std::span<const Migration> labels_migrations();

// Opens (creating if needed) a label store and brings its schema up to date.
Database open_labels(const std::string& path);

// Inserts or replaces the label of a job: the newest judgement wins.
void put_label(Database& db, const Label& label);
std::optional<Label> find_label(Database& db, std::int64_t job_id);
// Oldest first.
std::vector<Label> all_labels(Database& db);

}  // namespace acme::store
