/* gate_ask_c.h: the resident gate's pass, asked from C. */
#include "spank/faultguard/core/gate_ask_c.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* gate_request.hpp's kGateLineMax. */
#define ACME_GATE_LINE_MAX 4096

static int plain(const char *v) { return strpbrk(v, "\t\n\r") == NULL; }

int acme_gate_request_line(char *out, size_t size, unsigned long long job, const char *gpus, const char *nvml,
                           const char *rules) {
    if (!plain(gpus) || !plain(nvml) || !plain(rules)) return -1;
    const int n = snprintf(out, size, "acme-gate 1\tjob=%llu\tgpus=%s\tnvml=%s\trules=%s\n", job, gpus, nvml, rules);
    return n > 0 && (size_t)n < size ? n : -1;
}

int acme_gate_answer_passed(const char *line, size_t len, char *text, size_t size) {
    if (len > ACME_GATE_LINE_MAX || len < 3 || memcmp(line, "ok\t", 3) != 0) return 0;
    const size_t n = len - 3;
    if (n >= size || memchr(line + 3, '\t', n) || memchr(line + 3, '\r', n) || memchr(line + 3, '\0', n) ||
        memchr(line + 3, '\n', n))
        return 0;
    memcpy(text, line + 3, n);
    text[n] = '\0';
    return 1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* poll until `events` or the deadline: 1 when ready. */
static int wait_fd(int fd, short events, double deadline) {
    for (;;) {
        const double left = deadline - now_s();
        if (left <= 0) return 0;
        struct pollfd p = {fd, events, 0};
        const int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return 0;
    }
}

int acme_gate_ask_passed(const char *socket_path, const char *request, size_t len, double timeout_s, char *text,
                         size_t size) {
    const double deadline = now_s() + timeout_s;
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(socket_path) >= sizeof addr.sun_path) return 0;
    memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
    const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0) return 0;
    int passed = 0;
    if (connect(s, (const struct sockaddr *)&addr, sizeof addr) != 0) goto done;
    for (size_t sent = 0; sent < len;) {
        if (!wait_fd(s, POLLOUT, deadline)) goto done;
        const ssize_t n = send(s, request + sent, len - sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR) goto done;
        if (n > 0) sent += (size_t)n;
    }
    char line[ACME_GATE_LINE_MAX + 2];
    size_t got = 0;
    for (;;) {
        if (!wait_fd(s, POLLIN, deadline)) goto done;
        const ssize_t n = recv(s, line + got, sizeof line - 1 - got, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
        if (n <= 0) goto done;
        got += (size_t)n;
        const char *nl = memchr(line, '\n', got);
        if (nl) {
            passed = acme_gate_answer_passed(line, (size_t)(nl - line), text, size);
            goto done;
        }
        if (got >= sizeof line - 1) goto done;
    }
done:
    close(s);
    return passed;
}
