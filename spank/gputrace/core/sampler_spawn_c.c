/* sampler_spawn_c.h: the job prolog's fork of a job's sampler. After the fork only
   async-signal-safe calls: slurmstepd may have threads. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* close_range's syscall number, NSIG */
#endif
#include "spank/gputrace/core/sampler_spawn_c.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spank/gputrace/core/sampler_wait_c.h"

size_t acme_sampler_start_argv(const struct acme_sampler_job *j, int ac, char **av, char **out) {
    size_t n = 0;
    out[n++] = (char *)"acme-gpu-sampler-start";
    const struct {
        const char *key, *value;
    } pairs[] = {{"--job", j->job},
                 {"--uid", j->uid},
                 {"--gid", j->gid},
                 {"--node", j->node},
                 {"--gpus", j->gpus},
                 {"--auto-recover", j->auto_recover ? "yes" : NULL},
                 {"--ckpt-dir", j->ckpt_dir},
                 {"--restart", j->restart},
                 {"--sluid", j->sluid},
                 {"--slurm-conf", j->slurm_conf}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; ++i) {
        if (!pairs[i].value || !*pairs[i].value) continue;
        out[n++] = (char *)pairs[i].key;
        out[n++] = (char *)pairs[i].value;
    }
    /* The bare flag's value is "": passed as given. */
    if (j->telemetry) {
        out[n++] = (char *)"--telemetry";
        out[n++] = (char *)j->telemetry;
    }
    for (int i = 0; i < ac; ++i) {
        out[n++] = (char *)"--arg";
        out[n++] = av[i];
    }
    out[n] = NULL;
    return n;
}

int acme_sampler_write_pidfile(const char *pidfile, long pid) {
    unsigned long long start = 0;
    if (pid <= 0 || acme_proc_start_time("/proc", pid, &start) != 0) return -1;
    char text[64];
    size_t len = acme_put_decimal(text, (unsigned long long)pid);
    text[len++] = ' ';
    len += acme_put_decimal(text + len, start);
    text[len++] = '\n';
    const int fd = open(pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    const int ok = write(fd, text, len) == (ssize_t)len;
    close(fd);
    return ok ? 0 : -1;
}

/* spawn.cpp's Priority::background (nice 10, the lowest best-effort I/O priority, the autogroup's
   nice 10): the sampler's start must not compete with the job's; it restores normal priority
   once it is up (sampler_main.cpp). Best effort each. */
static void lower_priority(void) {
    setpriority(PRIO_PROCESS, 0, 10);
    syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, (2 /* best effort */ << 13) | 7);
    const int fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        const ssize_t ignored = write(fd, "10", 2);
        (void)ignored;
        close(fd);
    }
}

static void stop_signals(sigset_t *set) {
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
}

/* The detached child: never returns. */
static void run_child(const struct acme_sampler_spawn *s, int devnull, int log) {
    static char path[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
    char *const env[] = {path, NULL};
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, NULL); /* fails harmlessly for KILL/STOP */
    sigset_t stop;
    stop_signals(&stop);
    sigprocmask(SIG_SETMASK, &stop, NULL);
    dup2(devnull, STDIN_FILENO);
    dup2(devnull, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    syscall(SYS_close_range, 3U, ~0U, 0U);
    lower_priority();
    if (chdir("/") != 0) _exit(126);
    acme_sampler_wait_for_job("/proc", s->job_id, s->start_wait);
    execve(s->helper, s->argv, env);
    _exit(127);
}

int acme_sampler_spawn_detached(const struct acme_sampler_spawn *s, char *error, size_t size) {
    if (access(s->helper, X_OK) != 0) {
        snprintf(error, size, "%s is not executable: %s", s->helper, strerror(errno));
        return -1;
    }
    mkdir(s->spool, 0700);
    mkdir(s->run_dir, 0700);
    const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0) {
        snprintf(error, size, "/dev/null: %s", strerror(errno));
        return -1;
    }
    int log = open(s->log_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (log < 0) log = devnull;
    /* Blocked from the fork on: a stop that comes before the child's wait takes it stays pending
       (the sampler's to handle), it never kills the child half-started. */
    sigset_t stop, old;
    stop_signals(&stop);
    pthread_sigmask(SIG_BLOCK, &stop, &old);
    const pid_t child = fork();
    if (child == 0) {
        setsid();
        const pid_t detached = fork();
        if (detached == 0) run_child(s, devnull, log);
        if (detached < 0) _exit(1);
        if (acme_sampler_write_pidfile(s->pidfile, (long)detached) != 0) {
            /* A child no pid file names: no epilog would stop it. */
            kill(detached, SIGKILL);
            _exit(2);
        }
        _exit(0);
    }
    const int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(devnull);
    if (log != devnull) close(log);
    if (child < 0) {
        snprintf(error, size, "fork: %s", strerror(fork_errno));
        return -1;
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) {
            snprintf(error, size, "waitpid: %s", strerror(errno));
            return -1;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
        snprintf(error, size, "cannot write %s", s->pidfile);
    else
        snprintf(error, size, "the intermediate child could not fork");
    return -1;
}
