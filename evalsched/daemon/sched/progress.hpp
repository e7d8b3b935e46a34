// Progress in the units a researcher thinks in: datasets, not trials. A dataset may be one
// trial, shards of several, or part of a bundle, and is scored in its trial or by a CPU metric
// job after all of them; its state is the furthest all of its pieces have come:
//   failed (a piece or its metric job failed: the reason), cancelled, scored (every piece done
//   and its metric job, if any, done; with its scores), scoring (every piece done, the metric
//   job not yet), running (on the nodes of its running pieces), queued (nothing started yet).
// Pure: the API's JSON rows in, JSON out, so the unit tests pin what `status` shows.
#pragma once

#include <nlohmann/json.hpp>

namespace acme::evalsched {

// `trials`: objects with "datasets" (comma-separated), "state", "reason", "node" and optionally
// "trial" (its key, "<ckpt>/<dataset>#<i>of<n>" for a shard), "shard" and "num_shards", and
// "evidence" and "log" when it failed; `metrics`: "dataset", "state", "reason", "node" (and
// "evidence", "log"); `scores`: "dataset", "metric", "value";
// `samples`: {dataset: the suite's sample count} for the datasets whose count is known. Returns
// {"datasets": {"total", "scored", "scoring", "running", "queued", "failed", "cancelled",
//               "samples_total", "samples_done", "samples_datasets"},
//  "dataset_list": [{"dataset", "state", "detail", "nodes", "pieces", "pieces_done", "scores",
//                    "samples", "samples_done", and "evidence" and "log" for a failed dataset
//                    whose failing trial or metric job gave them}]}
// with the list in the order datasets first appear in `trials`. A dataset's samples are done
// once the trial holding them is (shard i of n holds samples floor(i*N/n) .. floor((i+1)*N/n),
// as trials.hpp cuts them); "samples" is null where the suite gives no count, and the totals
// count only the "samples_datasets" datasets that have one.
nlohmann::json dataset_progress(const nlohmann::json& trials, const nlohmann::json& metrics, const nlohmann::json& scores,
                                const nlohmann::json& samples = nlohmann::json::object());

// The counts alone (for the evaluations list).
nlohmann::json dataset_counts(const nlohmann::json& trials, const nlohmann::json& metrics, const nlohmann::json& scores,
                              const nlohmann::json& samples = nlohmann::json::object());

}  // namespace acme::evalsched
