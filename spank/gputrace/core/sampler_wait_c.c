/* sampler_wait_c.h: the sampler's wait for its job's start, before its exec. Only
   async-signal-safe calls (open, read, getdents64, clock_gettime, sigtimedwait, the string
   functions POSIX lists), no allocation: this runs in a forked child of slurmstepd. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getdents64 */
#endif
#include "spank/gputrace/core/sampler_wait_c.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

size_t acme_put_decimal(char *out, unsigned long long v) {
    char rev[21];
    size_t n = 0;
    do {
        rev[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; ++i) out[i] = rev[n - 1 - i];
    return n;
}

/* Up to size-1 bytes of `name` under directory `dirfd`, NUL-terminated; the count, or -1. */
static ssize_t read_at(int dirfd, const char *name, char *buf, size_t size) {
    const int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -1;
    ssize_t n;
    do n = read(fd, buf, size - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n < 0) return -1;
    buf[n] = '\0';
    return n;
}

/* /proc/PID/status's real uid is 0: a slurmstepd, not a user's process titled like one
   (job_watch.hpp's real_uid_is_root). */
static int real_uid_root(int piddir) {
    char buf[4096];
    if (read_at(piddir, "status", buf, sizeof buf) <= 0) return 0;
    const char *at = strstr(buf, "\nUid:");
    if (!at) return 0;
    at += 5;
    while (*at == ' ' || *at == '\t') ++at;
    return at[0] == '0' && (at[1] == '\t' || at[1] == ' ');
}

int acme_job_work_stepd_running(const char *proc_root, unsigned long long job_id) {
    char prefix[64] = "slurmstepd: [";
    size_t plen = strlen(prefix);
    plen += acme_put_decimal(prefix + plen, job_id);
    prefix[plen++] = '.';
    prefix[plen] = '\0';
    static const char kExtern[] = "extern]";
    const int dir = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return -1;
    int found = 0;
    char entries[8192];
    ssize_t got;
    while (!found && (got = getdents64(dir, entries, sizeof entries)) > 0) {
        for (ssize_t off = 0; off < got && !found;) {
            const struct dirent64 *d = (const struct dirent64 *)(entries + off);
            off += d->d_reclen;
            if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
            const int piddir = openat(dir, d->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
            if (piddir < 0) continue;
            char cmdline[64];
            const ssize_t n = read_at(piddir, "cmdline", cmdline, sizeof cmdline);
            if (n >= (ssize_t)plen && memcmp(cmdline, prefix, plen) == 0 &&
                !((size_t)n - plen >= sizeof kExtern - 1 && memcmp(cmdline + plen, kExtern, sizeof kExtern - 1) == 0))
                found = real_uid_root(piddir);
            close(piddir);
        }
    }
    close(dir);
    return found;
}

int acme_stat_start_time(const char *stat, unsigned long long *start) {
    /* "PID (COMM) STATE PPID ...": COMM may hold anything, so count from its last ')'. The
       start time is field 22, the 20th after COMM. */
    const char *p = strrchr(stat, ')');
    if (!p) return -1;
    ++p;
    for (int field = 3; field < 22; ++field) {
        while (*p == ' ') ++p;
        if (!*p) return -1;
        while (*p && *p != ' ') ++p;
        if (!*p) return -1;
    }
    while (*p == ' ') ++p;
    if (*p < '0' || *p > '9') return -1;
    unsigned long long v = 0;
    for (; *p >= '0' && *p <= '9'; ++p) {
        if (v > (~0ULL - 9) / 10) return -1;
        v = v * 10 + (unsigned long long)(*p - '0');
    }
    if (*p != ' ' && *p != '\0' && *p != '\n') return -1;
    *start = v;
    return 0;
}

int acme_proc_start_time(const char *proc_root, long pid, unsigned long long *start) {
    if (pid <= 0) return -1;
    char path[64];
    size_t len = acme_put_decimal(path, (unsigned long long)pid);
    memcpy(path + len, "/stat", 6);
    const int dir = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return -1;
    char buf[1024];
    const ssize_t n = read_at(dir, path, buf, sizeof buf);
    close(dir);
    if (n <= 0) return -1;
    return acme_stat_start_time(buf, start);
}

static void stop_signals(sigset_t *set) {
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
}

void acme_sampler_block_stop_signals(void) {
    sigset_t set;
    stop_signals(&set);
    sigprocmask(SIG_BLOCK, &set, NULL);
}

static double mono_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void acme_sampler_wait_for_job(const char *proc_root, unsigned long long job_id, double seconds) {
    sigset_t set;
    stop_signals(&set);
    sigprocmask(SIG_BLOCK, &set, NULL);
    if (!(seconds > 0)) return;
    const double deadline = mono_seconds() + seconds;
    /* Each look walks /proc (about a millisecond of CPU with 150 processes): every 50 ms, the
       first one 50 ms after the fork (the job prolog, which forked this, runs before any step:
       a look at once would only cost the job's start that millisecond). */
    for (double now = mono_seconds(); now < deadline; now = mono_seconds()) {
        double left = deadline - now;
        if (left > 0.05) left = 0.05;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        const int sig = sigtimedwait(&set, NULL, &ts);
        if (sig > 0) {
            kill(getpid(), sig); /* pending again, still blocked: the sampler's to handle */
            return;
        }
        if (acme_job_work_stepd_running(proc_root, job_id) != 0) return;
    }
}
