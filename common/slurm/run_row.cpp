#include "common/slurm/run_row.hpp"

#include <slurm/slurm.h>

#include <algorithm>

#include <fmt/format.h>

namespace acme::slurm {

RunSelector run_selector(const std::optional<JobRecord>& record, long long restart) {
    RunSelector run;
    if (!record) return run;
    const auto submit = static_cast<long long>(record->submit_time);
    const auto start = static_cast<long long>(record->start_time);
    // While this run's epilogs run the job is completing (requeued: pending and completing):
    // its submit and start are still this run's. Once a requeue has finished (after the
    // epilogs: a detached epilog may ask later) slurmctld has given the job a new submit time
    // and no start, or even started the next run: this run is the one before, unless the job
    // was requeued again since: its count is then more than one past the run's own (run_restart;
    // the epilog's count, which an admin's requeue already raised, gives the same answer).
    const bool moved_on =
        !record->completing && (record->state == JOB_PENDING || record->state == JOB_RUNNING || record->state == JOB_SUSPENDED);
    if (!moved_on) {
        run.submit = submit;
        // A requeued job still completing is pending: its start is then backfill's guess at the
        // next run's (seen to be that run's very second), not this run's.
        if (record->state != JOB_PENDING) run.start = start;
    } else if (static_cast<long long>(record->restart_count) <= restart + 1) {
        run.before = submit;
    } else {
        run.unknown = true;
    }
    return run;
}

long long run_restart(const std::optional<JobRecord>& record, long long restart) {
    if (!record || record->restart_count == 0) return restart;
    // An epilog runs after its run ended: a job pending, running or suspended again has been
    // requeued since (its epilogs may still run: pending and completing), and slurmctld's count
    // is the next run's. The epilog's own count is that too after an admin's requeue of a running
    // job, or still this run's after a requeue of a job that had ended: never above the next
    // run's less one.
    const bool requeued = record->state == JOB_PENDING || record->state == JOB_RUNNING || record->state == JOB_SUSPENDED;
    if (!requeued) return restart;
    return std::min(restart, static_cast<long long>(record->restart_count) - 1);
}

RunChoice pick_run_row(const std::vector<RunRow>& rows, const RunSelector& run) {
    RunChoice out;
    if (run.unknown) {
        out.pick = RunPick::unknown;
        return out;
    }
    const bool named = run.submit > 0 || run.start > 0;
    bool found = false, later = false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        bool mine = false;
        if (named) {
            mine = run.submit > 0 ? r.submit == run.submit : r.start == run.start;
            if (!mine && run.submit > 0 && r.submit > run.submit) later = true;
        } else if (run.before > 0) {
            mine = r.submit < run.before && (!found || r.submit > rows[out.index].submit);
        } else {
            mine = !found || r.submit > rows[out.index].submit;  // the newest
        }
        if (mine && (!found || r.submit >= rows[out.index].submit)) {
            out.index = i;
            found = true;
        }
    }
    out.pick = found ? RunPick::found : later ? RunPick::superseded : RunPick::not_yet;
    return out;
}

std::optional<RowFilter> run_row_filter(const RunRow& row) {
    RowFilter f;
    f.state = row.state;
    if (row.state == JOB_RUNNING && row.start > 0) {
        // slurmdbd's "was running within [S, E)": this run started in that second; the job's
        // earlier runs ended by then, its later ones start after this one ended.
        f.usage_start = row.start;
        f.usage_end = row.start + 1;
        return f;
    }
    if (row.end > 0 && row.state != JOB_PENDING && row.state != JOB_RUNNING && row.state != JOB_SUSPENDED) {
        // "ended in [S, E] in this state": the row's own end.
        f.usage_start = f.usage_end = row.end;
        return f;
    }
    if (row.newest) return RowFilter{true, 0, 0, 0};
    return std::nullopt;
}

std::string describe(const RunSelector& run) {
    if (run.unknown) return "a run the job was requeued twice since";
    if (run.submit > 0) return fmt::format("the run submitted at {}", run.submit);
    if (run.start > 0) return fmt::format("the run started at {}", run.start);
    if (run.before > 0) return fmt::format("the run before the one submitted at {}", run.before);
    return "the job's newest run";
}

}  // namespace acme::slurm
