// A file descriptor closed when it goes out of scope (-1 is none): the one RAII holder the
// plugins' and helpers' socket and dirfd code share.
#pragma once

#include <unistd.h>

namespace acme::util {

struct Fd {
    int fd = -1;
    Fd() = default;
    explicit Fd(int f) noexcept : fd(f) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
    Fd& operator=(Fd&& o) noexcept {
        if (this != &o) {
            reset();
            fd = o.fd;
            o.fd = -1;
        }
        return *this;
    }
    ~Fd() { reset(); }
    // Gives the descriptor up without closing it.
    int release() noexcept {
        const int out = fd;
        fd = -1;
        return out;
    }
    void reset() noexcept {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

}  // namespace acme::util
