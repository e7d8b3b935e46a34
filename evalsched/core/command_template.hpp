// Command templates in suite files: text with {placeholder}s that evalschedd fills in per trial.
// Checking a template when the suite is loaded (not when a trial starts, hours later) is the
// point: an unknown placeholder refuses the suite before anything is submitted.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace acme::evalsched {

// What a template may mention, by the command it belongs to.
//   command:        {checkpoint} {dataset} {shard} {num_shards} {output} {gpus} {samples}
//   bundle_command: {checkpoint} {datasets} {output} {gpus}
//   metric_command: {dataset} {output}
//   group_metric_command: {dataset} {output} {leaves} {leaf_samples} {aggregate}
// {{ and }} are literal braces.
inline constexpr std::string_view kCommandPlaceholders[] = {"checkpoint", "dataset", "shard", "num_shards", "output", "gpus", "samples"};
inline constexpr std::string_view kBundlePlaceholders[] = {"checkpoint", "datasets", "output", "gpus"};
inline constexpr std::string_view kMetricPlaceholders[] = {"dataset", "output"};
inline constexpr std::string_view kGroupMetricPlaceholders[] = {"dataset", "output", "leaves", "leaf_samples", "aggregate"};

// The placeholder names a template uses, in order of appearance. Throws std::invalid_argument
// with a one-line reason (e.g. "unknown placeholder {ckpt}: use one of {checkpoint} ...") when
// a brace is unbalanced or a name is not in `allowed`.
std::vector<std::string> check_template(std::string_view text, std::span<const std::string_view> allowed);

bool uses_placeholder(std::string_view text, std::string_view name);

// Fills a template that check_template accepted. Values are inserted verbatim, so callers pass
// only values they made or checked themselves (staged paths, output dirs, dataset names the
// suite parser restricted to [A-Za-z0-9._-]).
std::string render_template(std::string_view text, const std::map<std::string, std::string, std::less<>>& values);

}  // namespace acme::evalsched
