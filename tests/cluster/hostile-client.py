#!/usr/bin/python3
"""A hostile evalschedd client (issue 16), for t-evalsched-hostile-client and its bench.

Holds IDLE idle connections and SLOW slowloris ones (a header byte every 0.5 s) for SECONDS,
opening a new one for each the daemon refuses or closes,
and sends one oversized header (HEADER_MB MiB) on the side. Prints one line of what the daemon
did to it: how many connection attempts were refused (503 naming max_connections_per_user), closed by
the daemon before the end, and what answered the oversized header.

usage: hostile-client.py SOCKET SECONDS [IDLE [SLOW [HEADER_MB]]]
"""
import select
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.setblocking(False)
    return s


def closed_or_answered(s):
    """'open', 'closed', or 'refused' (a 503 naming max_connections_per_user)."""
    try:
        data = s.recv(65536)
    except BlockingIOError:
        return "open"
    except OSError:
        return "closed"
    if not data:
        return "closed"
    return "refused" if b"max_connections_per_user" in data else "answered"


def oversized(path, mib):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(20)
    head = b"GET /v1/evaluations HTTP/1.1\r\nHost: evalschedd\r\nX-Big: "
    try:
        s.sendall(head + b"a" * (mib << 20) + b"\r\n\r\n")
    except OSError:
        pass  # closed while sending: refused early
    try:
        answer = s.recv(4096)
    except OSError:
        answer = b""
    s.close()
    return answer.split(b"\r\n", 1)[0].decode(errors="replace") or "closed"


def main():
    path, seconds = sys.argv[1], float(sys.argv[2])
    n_idle = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    n_slow = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    header_mb = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    # The header first: once this uid holds its connection allowance, it would only be refused.
    header = oversized(path, header_mb)
    conns = {}

    def open_one(kind):
        try:
            s = connect(path)
        except OSError:
            return
        if kind == "slow":
            try:
                s.send(b"GET /v1/evaluations HTTP/1.1\r\nHost: evalschedd\r\nX-Slow: ")
            except OSError:
                pass
        conns[s] = kind

    for i in range(n_idle + n_slow):
        open_one("slow" if i >= n_idle else "idle")
    outcome = {"refused": 0, "closed": 0, "answered": 0}
    end = time.time() + seconds
    while conns and time.time() < end:
        for s in list(conns):
            if conns[s] == "slow":
                try:
                    s.send(b"a")
                except OSError:
                    pass
            state = closed_or_answered(s)
            if state != "open":
                outcome[state] += 1
                kind = conns.pop(s)
                s.close()
                open_one(kind)  # a persistent attacker: every lost connection is replaced
        select.select([], [], [], 0.5)
    print(f"hostile: {n_idle} idle + {n_slow} slow connections: {outcome['refused']} refused, "
          f"{outcome['closed']} closed by the daemon, {outcome['answered']} answered, {len(conns)} open at the end; "
          f"{header_mb} MiB header: {header}", flush=True)


if __name__ == "__main__":
    main()
