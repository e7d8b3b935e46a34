// Starting a helper that must outlive its parent and never inherit anything from it: the
// SPANK job prolog runs inside a slurmstepd whose signal mask, dispositions and descriptors a
// helper must not keep (a helper that ignores SIGTERM keeps jobs COMPLETING).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace acme::util {

// background: work nobody waits for (a finished job's rows and record) that must not slow the
// node's next job: nice 10, the lowest best-effort I/O priority, and, where the kernel groups
// each session for scheduling (autogroup: setsid makes a group whose weight nice alone does not
// lower), that group's nice 10 too.
enum class Priority { normal, background };

// Runs in spawn_detached's grandchild, reset and at its priority, just before the exec: only
// async-signal-safe calls (the parent may have threads). For a wait that must not pay for the
// program's own start (its dynamic linking) while it waits: the sampler's start_wait.
using PreExec = void (*)(const void* arg);

// Double-forks `argv` (argv[0] is the program path) into a new session with an empty signal
// mask, default dispositions, stdin/stdout on /dev/null, stderr appended to `log_path`
// (or /dev/null), no other descriptors, and exactly `env`; `pre_exec(arg)`, if given, runs
// before the exec. Returns once the intermediate child has been reaped (not waiting for
// pre_exec); false (with error) if the program could not be started.
bool spawn_detached(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    const std::string& log_path, std::string& error, Priority priority = Priority::normal,
                    PreExec pre_exec = nullptr, const void* pre_exec_arg = nullptr);

// For a helper started with Priority::background that has work of its own once it is up (the
// sampler): back to the normal priorities, its own and its session's. Root (or CAP_SYS_NICE)
// only; best effort otherwise.
void restore_normal_priority() noexcept;

// The other way: a process that must go on at Priority::background's priorities, whoever
// started it (faultguard's record retrier, started from a publisher of either priority).
// Best effort; async-signal-safe.
void lower_to_background_priority() noexcept;

// The state a helper must start from, whatever its starter left it: an empty signal mask,
// default dispositions, stdin/stdout/stderr on in/out/err and no other descriptor. Only
// async-signal-safe calls: for a forked child of a multi-threaded parent (spawn_detached,
// run_bounded) and for a helper exec'd from a signal handler (faultguard's record retrier).
void reset_inherited(int in, int out, int err) noexcept;

struct RunResult {
    bool started = false;
    bool timed_out = false;   // killed (with its process group) after the timeout
    bool released = false;    // past the timeout, left running on its own (Release)
    int wait_status = 0;
    std::string output;       // its stdout, at most max_output bytes
};

// A program that can go on without its caller: at the timeout it is sent `signal` (one whose
// default action is to ignore it, so a program that does not know it is not hurt) and given
// kReleaseGraceSeconds to answer with the line `ack` on its stdout, after which it must write
// nothing more there (the caller stops reading). One that answers is left running in its own
// process group (reaped by init once the caller exits); one that does not is killed.
struct Release {
    int signal = 0;  // 0: none, killed at the timeout
    std::string ack;
};
inline constexpr double kReleaseGraceSeconds = 1.0;

// A killed child is normally gone at once; one in uninterruptible sleep (a wedged driver, a hung
// NFS or FUSE mount) is not, and waiting for it would hang the caller (slurmstepd) with it.
// This long after SIGKILL the caller gives up on it.
inline constexpr double kKillGraceSeconds = 2.0;

// fork(2) with a supervisor in between: returns 0 in the worker, the supervisor's pid in the
// caller (-1 on error). The supervisor leads a new process group holding the worker, keeps no
// descriptor, waits for the worker and exits with its status (or dies of its signal). Killing
// the group with SIGKILL ends the supervisor at once even when the worker cannot die yet; the
// worker is then reparented and reaped by init, never left to the caller. In the worker, only
// async-signal-safe calls before exec (the caller may be multi-threaded).
pid_t fork_supervised();

// Waits for `pid` (a child) at most grace_s seconds. True with its wait status; false if it
// has not exited by then (it is left behind as it is).
bool reap_within(pid_t pid, int& status, double grace_s);

// Runs `argv` with exactly `env` in its own process group, stdin on /dev/null, stderr appended
// to log_path, default signal state and no inherited descriptors; waits at most timeout_s
// (plus kKillGraceSeconds when the program has to be killed, or kReleaseGraceSeconds for a
// release's answer), whatever state it is in.
RunResult run_bounded(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& log_path, double timeout_s, std::size_t max_output = 4096,
                      const Release& release = {});

}  // namespace acme::util
