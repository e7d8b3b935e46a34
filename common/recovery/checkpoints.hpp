// The newest complete checkpoint under a job's --ckpt-dir, by rules that are data
// (etc/checkpoints.toml): marker files inside a checkpoint directory (.complete, DCP's
// .metadata, Hugging Face's weights index) or a pointer file the framework writes after a save
// (Megatron's latest_checkpointed_iteration.txt, DeepSpeed's latest). A half-written newest
// checkpoint is skipped for the one before it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace acme::recovery {

struct MarkerRule {
    std::string name;
    std::vector<std::string> files;  // globs
};

struct PointerRule {
    std::string name;
    std::string file;    // at the top of the checkpoint directory
    std::string format;  // "{}" or "iter_{:07d}"
};

struct CheckpointRules {
    std::vector<MarkerRule> markers;
    std::vector<PointerRule> pointers;
};

// Throws std::runtime_error with "file:line: what is wrong" on a bad rules file.
CheckpointRules parse_checkpoint_rules(const std::string& text, const std::string& source_name);
CheckpointRules load_checkpoint_rules(const std::filesystem::path& file);

struct Found {
    std::filesystem::path path;
    std::string rule;                   // which rule called it complete
    std::vector<std::string> skipped;   // newer candidates that were not complete
};

// Looks at most max_entries directory entries. nullopt: nothing complete (a fresh start).
// Throws std::runtime_error naming the directory when it cannot be read (missing, not a
// directory, no permission): that is not a fresh start.
std::optional<Found> newest_complete(const std::filesystem::path& dir, const CheckpointRules& rules,
                                     std::size_t max_entries = 100000);

// Every complete checkpoint under dir, oldest first (by the last number in its name, then
// modification time), for evalsched follow, which evaluates each once. Complete by the same
// rules: a marker file inside it, or a pointer file naming it or a newer one (a framework
// moves its pointer only after a save finished, so what it has moved past is complete too).
// Names without a number are left out: they cannot be ordered against steps.
// Throws std::runtime_error naming the directory when it cannot be read.
struct Complete {
    std::filesystem::path path;
    long long step = 0;
    std::string rule;
};
std::vector<Complete> all_complete(const std::filesystem::path& dir, const CheckpointRules& rules, std::size_t max_entries = 100000);

}  // namespace acme::recovery
