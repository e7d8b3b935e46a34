// The bounded line reader both ends of the resident health gate use: a line in pieces comes
// whole, and a peer that closes, sends too much or sends nothing is told apart, in bounded time.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "common/util/fd.hpp"
#include "common/util/line_read.hpp"

using acme::util::Fd;
using acme::util::LineRead;
using acme::util::read_line;

namespace {

struct Pair {
    Fd a, b;
    Pair() {
        int sv[2];
        REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        a = Fd(sv[0]);
        b = Fd(sv[1]);
    }
};

auto in_ms(int ms) { return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms); }

void put(int fd, const std::string& text) { REQUIRE(::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size())); }

}  // namespace

TEST_CASE("read_line returns the first line whole, without its newline, however it was sent") {
    Pair p;
    put(p.a.fd, "ok 12");
    put(p.a.fd, "3 gpus\nleft over");
    std::string line;
    int error = -1;
    CHECK(read_line(p.b.fd, 64, in_ms(1000), line, error) == LineRead::line);
    CHECK(line == "ok 123 gpus");
    CHECK(error == 0);
}

TEST_CASE("read_line tells a closed peer, a line too long and a silent peer apart") {
    std::string line;
    int error = 0;
    {
        Pair p;
        put(p.a.fd, "no newline");
        p.a.reset();
        CHECK(read_line(p.b.fd, 64, in_ms(1000), line, error) == LineRead::closed);
    }
    {
        Pair p;
        put(p.a.fd, std::string(65, 'x') + "\n");
        CHECK(read_line(p.b.fd, 64, in_ms(1000), line, error) == LineRead::too_long);
        put(p.a.fd, std::string(64, 'x') + "\n");
        CHECK(read_line(p.b.fd, 64, in_ms(1000), line, error) == LineRead::line);
        CHECK(line.size() == 64);
    }
    {
        Pair p;
        put(p.a.fd, "half a line");
        CHECK(read_line(p.b.fd, 64, in_ms(50), line, error) == LineRead::timeout);  // returns: bounded
    }
}

TEST_CASE("Fd closes what it holds once, and release gives it up") {
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    {
        Fd a(sv[0]);
        Fd moved(std::move(a));
        CHECK(a.fd == -1);
        CHECK(moved.fd == sv[0]);
    }
    CHECK(::write(sv[0], "x", 1) == -1);  // closed by `moved`
    Fd b(sv[1]);
    const int raw = b.release();
    CHECK(b.fd == -1);
    CHECK(::close(raw) == 0);  // still open after release
}
