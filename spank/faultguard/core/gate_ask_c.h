/* faultguard's C shim asking the node's resident health gate (gate_request.hpp's protocol) in a
   GPU job's prolog without loading faultguard_impl.so (#41): one request line, one answer line
   over the root-only Unix socket. Only a pass is taken here; anything else (no gate serving, no
   answer in time, a "gate" answer, a value that cannot be sent) goes to the implementation as
   before, which asks again and runs the gate process. libc alone. */
#ifndef ACME_GATE_ASK_C_H
#define ACME_GATE_ASK_C_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* format_gate_request's line ("acme-gate 1\tjob=N\tgpus=...\tnvml=...\trules=...\n") into
   `out`; its length, or -1 when a value holds a tab, newline, CR or the line does not fit. */
int acme_gate_request_line(char *out, size_t size, unsigned long long job, const char *gpus, const char *nvml,
                           const char *rules);

/* parse_gate_answer for a pass: 1 with the text after "ok\t" in `text` when `line` (without its
   newline) is a pass; 0 for anything else. */
int acme_gate_answer_passed(const char *line, size_t len, char *text, size_t size);

/* Sends `request` to the gate at `socket_path` and reads one answer line within `timeout_s`:
   1 with its text in `text` when the gate passed the job, else 0. */
int acme_gate_ask_passed(const char *socket_path, const char *request, size_t len, double timeout_s, char *text,
                         size_t size);

#ifdef __cplusplus
}
#endif

#endif
