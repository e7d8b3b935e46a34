// --durations: the ground-truth inference time of each dataset, measured, as the cluster bench
// (tests/bench/evalsched-cluster) hands it to the simulator so both run the same suite. A TSV
// of `dataset<TAB>seconds` lines (the whole dataset on one GPU, model load excluded); lines
// starting with '#' and blank lines are comments.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "evalsched/core/suite.hpp"

namespace acme::evalsched::sim {

// Throws std::invalid_argument naming `source`, the line and what to fix.
std::map<std::string, double> parse_durations(std::string_view text, const std::string& source);
// Reads and parses the file; every dataset of `suite` must have a line and no line may name a
// dataset the suite lacks.
std::map<std::string, double> load_durations(const std::string& path, const Suite& suite);

}  // namespace acme::evalsched::sim
