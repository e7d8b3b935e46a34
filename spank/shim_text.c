/* The SPANK shims' text (shim_text.h). */
#include "spank/shim_text.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* The value of a "key=value" argument whose key is `key`, else NULL (split_key_value: the first
   '=' splits, and "=value" has no key). */
static const char *value_of(const char *arg, const char *key) {
    if (!arg) return NULL;
    const size_t k = strlen(key);
    return k > 0 && strncmp(arg, key, k) == 0 && arg[k] == '=' ? arg + k + 1 : NULL;
}

const char *acme_arg_path(int ac, char **av, const char *key, const char *fallback) {
    const char *out = fallback;
    for (int i = 0; i < ac; ++i) {
        const char *v = value_of(av[i], key);
        if (v && v[0] == '/' && strlen(v) <= 1024 && !strchr(v, '\n')) out = v;
    }
    return out;
}

int acme_parse_bool(const char *text) {
    static const char *const yes[] = {"1", "true", "yes", "y", "on"};
    static const char *const no[] = {"0", "false", "no", "n", "off"};
    char lower[9];
    const size_t n = strlen(text);
    if (n > 8) return -1;
    for (size_t i = 0; i <= n; ++i) lower[i] = (char)tolower((unsigned char)text[i]);
    for (size_t i = 0; i < sizeof yes / sizeof *yes; ++i)
        if (strcmp(lower, yes[i]) == 0) return 1;
    for (size_t i = 0; i < sizeof no / sizeof *no; ++i)
        if (strcmp(lower, no[i]) == 0) return 0;
    return -1;
}

int acme_arg_bool(int ac, char **av, const char *key, int fallback) {
    int out = fallback;
    for (int i = 0; i < ac; ++i) {
        const char *v = value_of(av[i], key);
        const int b = v ? acme_parse_bool(v) : -1;
        if (b >= 0) out = b;
    }
    return out;
}

int acme_arg_on_off(int ac, char **av, const char *key, int fallback) {
    int out = fallback;
    for (int i = 0; i < ac; ++i) {
        const char *v = value_of(av[i], key);
        if (v && strcmp(v, "on") == 0) out = 1;
        if (v && strcmp(v, "off") == 0) out = 0;
    }
    return out;
}

double acme_arg_seconds(int ac, char **av, const char *key, double lo, double hi, double fallback) {
    double out = fallback;
    for (int i = 0; i < ac; ++i) {
        const char *v = value_of(av[i], key);
        /* from_chars takes no leading space, '+' or hex form where strtod does. */
        if (!v || !*v || strlen(v) > 64 || strpbrk(v, " \t\n+xXpP")) continue;
        char *end = NULL;
        const double d = strtod(v, &end);
        if (end && *end == '\0' && isfinite(d) && d >= lo && d <= hi) out = d;
    }
    return out;
}

int acme_format_task_exit(char *out, size_t size, uint32_t step_id, uint32_t task_id, int wait_status, double ts) {
    const int n = snprintf(out, size, "%u %u %d %.3f\n", (unsigned)step_id, (unsigned)task_id, wait_status, ts);
    return n > 0 && (size_t)n < size ? n : -1;
}
