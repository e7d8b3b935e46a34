#include "evalsched/adapters/harness_files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace acme::adapters {

namespace fs = std::filesystem;
using nlohmann::json;

Range shard_range(long samples, int shard, int num_shards) {
    if (num_shards < 1 || shard < 0 || shard >= num_shards)
        throw AdapterError(fmt::format("shard {} of {} does not exist: give --shard I --num-shards N with 0 <= I < N", shard, num_shards));
    if (samples < 0) throw AdapterError("--samples must be the dataset's size, 0 or more");
    // 128-bit products: samples * shard stays exact for any size the suite allows.
    const auto at = [&](int i) { return static_cast<long>(static_cast<__int128>(samples) * i / num_shards); };
    return {at(shard), at(shard + 1)};
}

std::map<std::string, double> group_scores(const std::vector<LeafScores>& leaves, bool weight_by_size, std::vector<std::string>* dropped) {
    if (leaves.empty()) throw AdapterError("a group needs at least one leaf: give --leaves a,b,c");
    std::map<std::string, Mean> sums;
    std::map<std::string, std::size_t> seen;  // metric -> leaves reporting it
    for (const auto& l : leaves) {
        if (weight_by_size && l.samples <= 0)
            throw AdapterError(fmt::format("leaf {} has no sample count to weight its score by: give it in --leaf-samples (the suite's leaves table) "
                                           "or aggregate by mean",
                                           l.name));
        for (const auto& [metric, value] : l.scores) {
            // The sum of n_i * s_i over the sum of n_i: Mean with each leaf counted n_i times.
            const long w = weight_by_size ? l.samples : 1;
            sums[metric].sum += value * static_cast<double>(w);
            sums[metric].count += w;
            ++seen[metric];
        }
    }
    std::map<std::string, double> out;
    for (const auto& [metric, mean] : sums) {
        if (seen[metric] == leaves.size()) out[metric] = mean.value();
        else if (dropped) dropped->push_back(fmt::format("{} (not in every leaf)", metric));
    }
    if (out.empty()) throw AdapterError(fmt::format("the {} leaves share no metric: a group score needs one metric every leaf reports", leaves.size()));
    return out;
}

std::string result_json(const Result& r) {
    json scores = json::object();
    for (const auto& [k, v] : r.scores) scores[k] = v;
    json j{{"scores", scores}};
    if (r.samples) j["samples"] = *r.samples;
    if (!r.unsupported.empty()) j["unsupported"] = r.unsupported;
    if (!r.approximate.empty()) j["approximate"] = r.approximate;
    if (!r.harness.empty()) j["harness"] = r.harness;
    if (!r.sources.empty()) j["sources"] = r.sources;
    if (r.details.is_object() && !r.details.empty()) j["details"] = r.details;
    return j.dump(2) + "\n";
}

void write_result(const std::string& dir, const Result& r) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string tmp = dir + "/result.json.tmp", final_path = dir + "/result.json";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << result_json(r);
        if (!out.flush()) throw AdapterError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
    }
    if (std::rename(tmp.c_str(), final_path.c_str()) != 0)
        throw AdapterError(fmt::format("cannot write {}: {}", final_path, std::strerror(errno)));
}

std::string read_file(const std::string& path, std::size_t max_bytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) throw AdapterError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw AdapterError(fmt::format("{} is not a regular file", path));
    }
    if (static_cast<std::size_t>(st.st_size) > max_bytes) {
        ::close(fd);
        throw AdapterError(fmt::format("{} is {} bytes, more than the {} an adapter reads", path, st.st_size, max_bytes));
    }
    std::string text;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > max_bytes) break;
    }
    ::close(fd);
    if (text.size() > max_bytes) throw AdapterError(fmt::format("{} grew past {} bytes while being read", path, max_bytes));
    return text;
}

std::vector<std::string> find_files(const std::string& dir, const std::string& glob) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
        if (fnmatch(glob.c_str(), it->path().filename().c_str(), 0) == 0) out.push_back(it->path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> subdirs(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
        if (!it->is_symlink(ec) && it->is_directory(ec)) out.push_back(it->path().string());
    std::sort(out.begin(), out.end());
    return out;
}

int run_harness(const std::vector<std::string>& argv) {
    if (argv.empty()) throw AdapterError("no harness command");
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) throw AdapterError(fmt::format("pipe: {}", std::strerror(errno)));
    const pid_t pid = fork();
    if (pid < 0) throw AdapterError(fmt::format("fork: {}", std::strerror(errno)));
    if (pid == 0) {
        ::close(pipefd[0]);
        execvp(args[0], args.data());
        const int err = errno;
        (void)!::write(pipefd[1], &err, sizeof err);
        _exit(127);
    }
    ::close(pipefd[1]);
    int err = 0;
    const ssize_t got = ::read(pipefd[0], &err, sizeof err);
    ::close(pipefd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (got == static_cast<ssize_t>(sizeof err))
        throw AdapterError(fmt::format("cannot run {}: {}: install the harness, or name its environment in the suite's setup = \"...\" "
                                       "(see evalsched-suite(5)); PATH is {}",
                                       argv[0], std::strerror(err), std::getenv("PATH") ? std::getenv("PATH") : "unset"));
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::vector<std::string> split_list(std::string_view text, char sep) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= text.size()) {
        std::size_t end = text.find(sep, at);
        if (end == std::string_view::npos) end = text.size();
        if (end > at) out.emplace_back(text.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

}  // namespace acme::adapters
