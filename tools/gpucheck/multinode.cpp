#include "tools/gpucheck/multinode.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include "tools/gpucheck/measure.hpp"

namespace acme::gpucheck {
namespace {

struct Record {  // what every rank sends rank 0 per pairwise round
    int round;
    int partner;
    double gbps;
    char node[64];
};

bool send_all(int fd, const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n) {
        const ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
        if (w <= 0) return false;
        c += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

bool recv_all(int fd, void* p, std::size_t n) {
    char* c = static_cast<char*>(p);
    while (n) {
        const ssize_t r = ::recv(fd, c, n, 0);
        if (r <= 0) return false;
        c += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}

int connect_retry(const std::string& host, int port, std::string& error) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) {
        error = fmt::format("cannot resolve {}", host);
        return -1;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
            freeaddrinfo(res);
            return fd;
        }
        if (fd >= 0) ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    freeaddrinfo(res);
    error = fmt::format("cannot connect to rank 0 at {}:{} within 60 s", host, port);
    return -1;
}

}  // namespace

bool run_multinode(int rank, int ranks, const std::string& root_host, int port, int dev, const Thresholds& t,
                   bool want_pairs, MultiNodeReport& report, std::string& error) {
    char hostname[64] = {};
    gethostname(hostname, sizeof hostname - 1);
    ncclUniqueId id{};
    std::vector<int> peers;  // rank 0: one socket per other rank, in rank order
    int root_fd = -1;
    if (rank == 0) {
        ncclGetUniqueId(&id);
        const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_ANY);
        if (lfd < 0 || ::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(lfd, ranks) != 0) {
            error = fmt::format("rank 0 cannot listen on port {}: {}", port, std::strerror(errno));
            if (lfd >= 0) ::close(lfd);
            return false;
        }
        peers.assign(static_cast<std::size_t>(ranks), -1);
        for (int i = 1; i < ranks; ++i) {
            const int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
            int peer_rank = -1;
            if (fd < 0 || !recv_all(fd, &peer_rank, sizeof peer_rank) || peer_rank <= 0 || peer_rank >= ranks) {
                error = "bad bootstrap connection";
                ::close(lfd);
                return false;
            }
            peers[static_cast<std::size_t>(peer_rank)] = fd;
            send_all(fd, &id, sizeof id);
        }
        ::close(lfd);
    } else {
        root_fd = connect_retry(root_host, port, error);
        if (root_fd < 0) return false;
        if (!send_all(root_fd, &rank, sizeof rank) || !recv_all(root_fd, &id, sizeof id)) {
            error = "bootstrap: lost rank 0";
            ::close(root_fd);
            return false;
        }
    }
    cudaSetDevice(dev);
    ncclComm_t comm = nullptr;
    if (const auto rc = ncclCommInitRank(&comm, ranks, id, rank); rc != ncclSuccess) {
        error = fmt::format("ncclCommInitRank: {}", ncclGetErrorString(rc));
        return false;
    }
    const auto all = allreduce_busbw(comm, ranks, dev, t.allreduce_bytes, t.iterations, error);
    if (!all) {
        ncclCommDestroy(comm);
        return false;
    }
    report.all_gbps = *all;

    std::vector<Record> mine;
    if (want_pairs) {
        const auto rounds = pair_rounds(ranks);
        for (std::size_t r = 0; r < rounds.size(); ++r) {
            int color = NCCL_SPLIT_NOCOLOR, partner = -1;
            for (std::size_t p = 0; p < rounds[r].size(); ++p) {
                const auto [a, b] = rounds[r][p];
                if (a == rank || b == rank) {
                    color = static_cast<int>(p);
                    partner = a == rank ? b : a;
                }
            }
            ncclComm_t sub = nullptr;
            ncclCommSplit(comm, color, rank, &sub, nullptr);  // collective: every rank calls it
            if (sub) {
                std::string e;
                const auto gbps = allreduce_busbw(sub, 2, dev, t.allreduce_bytes, t.iterations, e);
                Record rec{static_cast<int>(r), partner, gbps.value_or(0), {}};
                std::snprintf(rec.node, sizeof rec.node, "%s", hostname);
                mine.push_back(rec);
                ncclCommDestroy(sub);
            }
        }
    }
    ncclCommDestroy(comm);

    // Collect: every rank sends its hostname and its pair records to rank 0.
    if (rank != 0) {
        const int n = static_cast<int>(mine.size());
        send_all(root_fd, hostname, sizeof hostname);
        send_all(root_fd, &n, sizeof n);
        send_all(root_fd, mine.data(), mine.size() * sizeof(Record));
        ::close(root_fd);
        return true;
    }
    report.nodes.assign(static_cast<std::size_t>(ranks), std::string());
    report.nodes[0] = hostname;
    std::vector<std::vector<Record>> by_rank(static_cast<std::size_t>(ranks));
    by_rank[0] = mine;
    for (int i = 1; i < ranks; ++i) {
        char host[64] = {};
        int n = 0;
        const int fd = peers[static_cast<std::size_t>(i)];
        if (!recv_all(fd, host, sizeof host) || !recv_all(fd, &n, sizeof n) || n < 0 || n > 4096) {
            error = fmt::format("lost rank {} while collecting results", i);
            return false;
        }
        host[sizeof host - 1] = '\0';
        report.nodes[static_cast<std::size_t>(i)] = host;
        by_rank[static_cast<std::size_t>(i)].resize(static_cast<std::size_t>(n));
        recv_all(fd, by_rank[static_cast<std::size_t>(i)].data(), static_cast<std::size_t>(n) * sizeof(Record));
        ::close(fd);
    }
    for (int i = 0; i < ranks; ++i)
        for (const auto& rec : by_rank[static_cast<std::size_t>(i)])
            if (rec.partner > i)  // each pair once
                report.pairs.push_back({report.nodes[static_cast<std::size_t>(i)],
                                        report.nodes[static_cast<std::size_t>(rec.partner)], rec.gbps});
    report.blamed = blame(report.pairs, t.pair_gbps);
    return true;
}

}  // namespace acme::gpucheck
