// The ETA `evalsched watch` and `status` show: when the planner, going on as it does now, would
// finish each evaluation's remaining trials (and their CPU metric jobs). It replays the plan
// order (checkpoints first-come, then the longest critical path, planner.hpp) over the GPUs the
// scheduler sees: those free now, and those held by evalsched's own running or queued trials,
// which come free when those trials end (their median run time less what has already run).
// GPUs held by other jobs are not counted: nothing says when they come free. A node's trials
// must end within its backfill window. A trial that cannot be placed on any of those GPUs has
// no finish, so its evaluation has no ETA: it is waiting for GPUs, and says so instead of
// inventing a number. Pure, so the unit tests pin it and the simulator could replay it.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "evalsched/core/planner.hpp"

namespace acme::evalsched {

// A trial of ours that holds GPUs now (running, or submitted and about to start on `node`).
struct HeldTrial {
    std::string id;
    std::string checkpoint;
    std::string node;
    int gpus = 1;
    double remaining_s = 0;   // median run time left (startup included while not started)
    double metric_s = 0;      // the metric job after it
};

struct CheckpointForecast {
    // Seconds from now until its last trial and metric job end; nullopt: waiting for GPUs.
    std::optional<double> finish_s;
    int trials_left = 0;       // pending + held
    int waiting = 0;           // pending trials with no place on the GPUs seen
    int guessed = 0;           // trials whose run time is a conservative guess (no prior)
    std::string waiting_reason;  // why the first waiting trial has no place
};

struct Forecast {
    std::map<std::string, CheckpointForecast> by_checkpoint;
    int gpus_seen = 0;        // free now + held by our trials, on usable nodes
};

// `nodes`: free GPUs as slurmctld counts them (our held trials excluded) and windows; a window
// of infinity means no pending job is planned onto the node.
Forecast forecast(std::span<const PendingTrial> pending, std::span<const HeldTrial> held, std::span<const NodeWindow> nodes);

}  // namespace acme::evalsched
