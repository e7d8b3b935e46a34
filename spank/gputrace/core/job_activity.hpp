// What the job's own processes on this node are doing, read by root from /proc at each look:
// the signal that tells a long healthy pause from a hang (cadence.hpp). A checkpoint save writes
// (the bytes its processes read or write: /proc/PID/io), a save or a data-loader wait on slow
// storage sleeps on the disk (state D), host-side work (an upload, a recompilation) burns CPU
// while the GPUs idle; a hung collective spins the GPUs and moves no bytes, a deadlock sleeps.
// The job's processes: the descendants of its slurmstepd processes (titled "slurmstepd:
// [JOB.STEP]", real uid root: job_watch.hpp), found with every proctrack plugin; the stepds
// themselves (their accounting reads /proc) and the sampler's own processes are left out.
// A process that left the tree (a daemon) is not seen: its activity is lost, which can only
// make a verdict come later, never sooner. Parsers and the arithmetic are pure (unit-tested,
// tests/fuzz/job_activity_fuzz.cpp); JobProcesses reads a /proc root it is given.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acme::telemetry {

// What the job's processes did over one span between two looks.
struct Activity {
    bool seen = false;     // some process of the job was read (false: no stepd found, /proc hidden)
    double io_bytes = 0;   // read + written: the larger of the syscall and the storage counts
    double cpu_s = 0;      // user + system CPU seconds, reaped children's included
    bool disk_wait = false;  // some process sleeps on I/O (state D) at the look
};

// /proc/PID/stat's fields the look needs. The command name is the user's to choose (spaces and
// parentheses included), so the fields are read after its last ')'.
struct ProcStat {
    std::string comm;
    char state = '?';
    long long ppid = 0;
    unsigned long long cpu_ticks = 0;  // utime + stime + cutime + cstime
    unsigned long long start = 0;      // starttime: a pid reused by a new process differs
};
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// /proc/PID/io: rchar + wchar (every read and write call: any file system, pipes) and
// read_bytes + write_bytes (what reached the storage layer: mmap writes included).
struct ProcIo {
    unsigned long long calls = 0, storage = 0;
};
std::optional<ProcIo> parse_proc_io(std::string_view text);

struct ProcSample {
    long long pid = 0;
    unsigned long long start = 0;
    ProcIo io;
    unsigned long long cpu_ticks = 0;
    bool disk_wait = false;
};

// The activity between two looks: per process (pid and start time), the counters' growth; a
// process new since `before` counts whole (it started in the span), one gone counts nothing
// more (its parent's counters take its I/O and CPU when reaped). `ticks_per_s`: USER_HZ.
Activity activity_between(const std::vector<ProcSample>& before, const std::vector<ProcSample>& now,
                          double ticks_per_s);

// Reads job `job`'s processes under `proc_root` at each look, the activity since the last.
class JobProcesses {
public:
    explicit JobProcesses(long long job, std::string proc_root = "/proc");
    // A look with no baseline (the first, or the first after one that found nothing) is unseen:
    // what moved in its span is unknown. `full` false: a quick read of the processes the last look
    // found (two small files each, no walk of /proc); a process started since is seen at the next
    // full one, which counts it whole. Without a baseline a quick read is a full one.
    Activity look(bool full = true);

private:
    std::optional<std::vector<ProcSample>> read() const;
    std::optional<std::vector<ProcSample>> read_known() const;
    std::optional<ProcSample> read_one(long long pid) const;
    long long job_;
    std::string root_;
    std::optional<std::vector<ProcSample>> last_;
};

}  // namespace acme::telemetry
