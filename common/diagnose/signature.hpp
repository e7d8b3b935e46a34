// Log signatures for history matching: the error lines of a log, normalised so that two runs
// of the same failure (other ranks, pids, paths, timestamps, sizes) look alike, reduced to a
// set of hashed word pairs and compared by Jaccard similarity.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace acme::diagnose {

// At most this many error lines (the last ones) make a signature; unknown diagnoses carry the
// same lines as evidence, so a label made from stored evidence matches one made from the log.
inline constexpr std::size_t kSignatureLines = 8;

struct Signature {
    std::vector<std::uint64_t> shingles;  // sorted, unique
    bool empty() const noexcept { return shingles.empty(); }
    bool operator==(const Signature&) const = default;
};

// Lower-cases, turns digit runs and hex ids into '#', keeps only a path's last component.
std::string normalise_line(std::string_view line);

Signature make_signature(std::span<const std::string> lines);
double similarity(const Signature& a, const Signature& b) noexcept;

// Stored form: lower-case hex numbers separated by single spaces.
std::string to_text(const Signature& signature);
// nullopt when the text is not in the stored form.
std::optional<Signature> signature_from_text(std::string_view text) noexcept;

}  // namespace acme::diagnose
